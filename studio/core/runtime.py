"""Process-wide settings TensorFlow reads only once, applied before it is first imported."""

from __future__ import annotations

import os


def configure_environment() -> None:
    """Quiet TensorFlow's start-up chatter unless the user asked for it; call at start-up."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
