"""What each task draws differently: one module per task, listed in ``registry``."""
