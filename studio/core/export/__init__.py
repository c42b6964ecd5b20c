"""Exporting a run to other formats, verified against the Keras model, and as a Python script."""
