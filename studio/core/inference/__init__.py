"""Using a trained run: answering samples, folders and CSVs, evaluating on held-out data, and
explaining an answer."""
