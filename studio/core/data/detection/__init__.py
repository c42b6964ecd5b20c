"""Object detection datasets: label files, their health, and augmentation that moves boxes."""
