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
    return _picked(mask, _landing(height, mapping.scale[1], mapping.shift[1]),
                   _landing(width, mapping.scale[0], mapping.shift[0]))


def _landing(size: int, scale: float, shift: float) -> np.ndarray:
    """The input pixel (along one axis) each of ``size`` image pixels' centres lands in."""
    return np.floor((np.arange(size) + 0.5) * scale + shift).astype(np.int64)


def mask_in_input(mask: np.ndarray, input_size: Size, resize: str) -> np.ndarray:
    """``mask`` (uint8, the image's height × width as stored) fitted to the network's input of
    ``input_size`` (height, width) as its image is with ``resize``: each input pixel takes the
    class of the image pixel its centre falls in (nearest neighbour); what a pad adds is
    IGNORE. The NumPy counterpart of the data pipeline's ``fitted_masks``, for previews."""
    mapping = box_mapping(mask.shape[:2], input_size, resize)
    height, width = input_size
    return _picked(mask, _source(height, mapping.scale[1], mapping.shift[1]),
                   _source(width, mapping.scale[0], mapping.shift[0]))


def _source(size: int, scale: float, shift: float) -> np.ndarray:
    """The image pixel (along one axis) each of ``size`` input pixels' centres falls in."""
    return np.floor((np.arange(size) + 0.5 - shift) / scale).astype(np.int64)


def _picked(mask: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The ``rows`` × ``cols`` grid of ``mask``'s pixels; IGNORE where one lies outside it."""
    inside = (rows[:, None] >= 0) & (rows[:, None] < mask.shape[0]) & \
        (cols[None, :] >= 0) & (cols[None, :] < mask.shape[1])
    picked = mask[np.clip(rows, 0, mask.shape[0] - 1)[:, None],
                  np.clip(cols, 0, mask.shape[1] - 1)[None, :]]
    return np.where(inside, picked, IGNORE).astype(np.uint8)
