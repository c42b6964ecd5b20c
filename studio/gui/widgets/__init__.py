"""What every panel builds on: the undoable document, background jobs, form and editor helpers,
images and plot style."""
