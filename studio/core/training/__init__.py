"""Training a project as a run: the trainer, its Keras callbacks and the live metrics it
reports."""
