"""The Qt-free core: project model, layers, shapes, data, model building and training."""
