"""The Qt desktop interface: thin widgets over ``studio.core``."""
