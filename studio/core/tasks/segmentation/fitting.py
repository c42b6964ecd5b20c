"""A mask answered in the network's input pixels, taken back to the pixels of the image as
stored: the image pipeline fitted the image to the input by squashing, centre-cropping or
padding, each a scale and a shift of the coordinates (``detection.fitting``'s, NumPy only)."""

from __future__ import annotations

import numpy as np

from studio.core.tasks.detection.fitting import Size, box_mapping
from studio.core.tasks.segmentation.masks import IGNORE


def mask_in_image(mask: np.ndarray, image_size: Size, resize: str) -> np.ndarray:
    """``mask`` (uint8, the input's height × width) in pixels of an image of ``image_size``
    (height, width) fitted to the input with ``resize`` ("squash", "crop" or "pad"): each
    image pixel takes the class of the input pixel its centre lands in, as nearest-neighbour
    resizing does; pixels a crop left out of the input have none (IGNORE)."""
    mapping = box_mapping(image_size, mask.shape[:2], resize)
    height, width = image_size
    rows = _landing(height, mapping.scale[1], mapping.shift[1])
    cols = _landing(width, mapping.scale[0], mapping.shift[0])
    inside = (rows[:, None] >= 0) & (rows[:, None] < mask.shape[0]) & \
        (cols[None, :] >= 0) & (cols[None, :] < mask.shape[1])
    picked = mask[np.clip(rows, 0, mask.shape[0] - 1)[:, None],
                  np.clip(cols, 0, mask.shape[1] - 1)[None, :]]
    return np.where(inside, picked, IGNORE).astype(np.uint8)


def _landing(size: int, scale: float, shift: float) -> np.ndarray:
    """The input pixel (along one axis) each of ``size`` image pixels' centres lands in."""
    return np.floor((np.arange(size) + 0.5) * scale + shift).astype(np.int64)
