"""Samples as a person sees them: in-memory images as they are, image files read small."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from studio.core.data.types import ArraySamples, FileSamples, Samples

DISPLAY_SIDE = 256
"""Image files are shown at most this many pixels a side."""
GREY_MODES = ("1", "L", "LA", "La", "F")


def sample_images(samples: Samples, indices: Sequence[int]) -> list[np.ndarray]:
    """The samples at ``indices`` as stored, uint8 H × W × C, for showing: in-memory images as
    they are; image files read with Pillow as grey (C = 1) or RGB, at most DISPLAY_SIDE pixels
    a side (a file that can no longer be read shows black)."""
    if isinstance(samples, ArraySamples):
        return [samples.x[i] for i in indices]
    if isinstance(samples, FileSamples):
        return [_read_for_display(samples.paths[i]) for i in indices]
    raise ValueError("These samples are not images.")


def _read_for_display(path: Path) -> np.ndarray:
    """An image file as uint8 grey or RGB, at most DISPLAY_SIDE a side (black if unreadable)."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            image.draft(None, (DISPLAY_SIDE, DISPLAY_SIDE))  # a JPEG decodes at a smaller scale
            image.thumbnail((DISPLAY_SIDE, DISPLAY_SIDE))
            if image.mode.startswith("I"):  # 16-bit grey
                values = np.clip(np.asarray(image, dtype=np.float64), 0, 65535)
                pixels = np.rint(values / 257.0).astype(np.uint8)
            else:
                pixels = np.asarray(image.convert("L" if image.mode in GREY_MODES else "RGB"))
    except (OSError, ValueError, Image.DecompressionBombError):
        return np.zeros((DISPLAY_SIDE // 8, DISPLAY_SIDE // 8, 3), np.uint8)
    return pixels.reshape(*pixels.shape[:2], -1)
