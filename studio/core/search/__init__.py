"""Hyperparameter search: the space, its saved state, and the runners, local worker processes or
Ray."""
