"""What a mask is, for every reader, augmentation, loss and metric of segmentation (NumPy only).

A mask is a uint8 array of an image's height × width (as stored on disk), each pixel the index
of its class in the dataset's class names, or IGNORE where no class is known (Pascal VOC's
object outlines): those pixels count in no loss and no metric.
"""

from __future__ import annotations

import numpy as np

IGNORE = 255
"""The mask value of pixels without a class (Pascal VOC writes its outlines so)."""
MAX_CLASSES = IGNORE
"""The most classes a mask can hold: every uint8 value but IGNORE."""

VOC_CLASSES = ("background", "aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car",
               "cat", "chair", "cow", "diningtable", "dog", "horse", "motorbike", "person",
               "pottedplant", "sheep", "sofa", "train", "tvmonitor")
"""Pascal VOC's class names, in the order of their mask values."""


def voc_palette(size: int = 256) -> np.ndarray:
    """Pascal VOC's colour of each mask value (uint8 ``size`` × 3): the bits of the value
    spread over red, green and blue from the high bit down, as VOC's own code makes it
    (0 black, 1 dark red (128, 0, 0), ..., 255 (224, 224, 192) for IGNORE)."""
    values = np.arange(size)
    palette = np.zeros((size, 3), np.int64)
    for shift in range(8):
        for channel in range(3):
            palette[:, channel] |= ((values >> (3 * shift + channel)) & 1) << (7 - shift)
    return palette.astype(np.uint8)


def is_mask(mask: np.ndarray) -> bool:
    """Whether ``mask`` is a mask: uint8, two-dimensional."""
    return mask.dtype == np.uint8 and mask.ndim == 2


def class_pixels(mask: np.ndarray, num_classes: int) -> np.ndarray:
    """How many pixels of each class ``mask`` holds (int64 ``num_classes``), IGNORE and
    values beyond the classes left out."""
    counts = np.bincount(mask.reshape(-1), minlength=256)
    return counts[:num_classes].astype(np.int64)
