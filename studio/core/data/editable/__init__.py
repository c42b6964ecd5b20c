"""An editable image dataset: an ordinary class-folder image folder that the app changes in
undoable steps (classes, images added by copy, moves, a trash, flags), and its fingerprint."""
