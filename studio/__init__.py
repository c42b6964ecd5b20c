"""Layer Studio: design, train and try neural networks on your own machine."""

__version__ = "0.1.0"
