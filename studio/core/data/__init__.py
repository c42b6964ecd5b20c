"""Datasets: their types, the sources (bundled, built-in downloads, image folders, CSV tables
and texts), health checks, and the ``tf.data`` pipelines and augmentation that feed Keras."""
