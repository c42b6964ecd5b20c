"""The mask conventions every part of segmentation shares."""

from __future__ import annotations

import numpy as np

from studio.core.tasks.segmentation.masks import IGNORE, class_pixels, is_mask, voc_palette


def test_voc_palette_is_the_one_voc_masks_are_drawn_with():
    palette = voc_palette()
    assert palette.shape == (256, 3) and palette.dtype == np.uint8
    # Background, aeroplane, bicycle, person and the outline colour, as VOC's files hold them
    assert palette[[0, 1, 2, 15, IGNORE]].tolist() == [
        [0, 0, 0], [128, 0, 0], [0, 128, 0], [192, 128, 128], [224, 224, 192]]
    assert len({tuple(c) for c in palette}) == 256  # every value its own colour


def test_class_pixels_leave_out_ignored_pixels_and_unknown_values():
    mask = np.array([[0, 0, 1], [2, IGNORE, 7]], np.uint8)
    assert is_mask(mask) and not is_mask(mask.astype(np.int32))
    assert class_pixels(mask, 3).tolist() == [2, 1, 1]
