"""The dataset editor: make a class-folder image dataset and change it in the app (classes,
images added, moved, flagged and deleted to a trash), each change one undoable step."""
