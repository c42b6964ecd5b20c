"""From a drawn graph to Keras: the analysis that says whether it can train, the Keras model and
its optimizer, estimates of memory and time, and Keras files imported as graphs."""
