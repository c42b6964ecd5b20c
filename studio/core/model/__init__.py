"""The model a person draws: parameters, layer types and their shape rules, the registry of
types, the graph, and facts about it (FLOPs, a description, a layout, one-click fixes). Pure
Python, no TensorFlow."""
