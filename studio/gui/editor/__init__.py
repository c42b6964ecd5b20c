"""The model editor: the node-graph canvas, the layer palette, the inspector and the layer list."""
