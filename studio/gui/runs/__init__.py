"""The Runs dock: the history of runs, their details, and export."""
