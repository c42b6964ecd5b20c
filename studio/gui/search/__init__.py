"""The Search tab: the space, the trial table and the plots of a search."""
