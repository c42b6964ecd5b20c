"""A mask fitted to the network's input in NumPy (the Data tab's augmentation preview) is the
mask the training pipeline fits with TensorFlow, for every resize mode and shape."""

from __future__ import annotations

import numpy as np
import pytest

from studio.core.data.image_pipeline import ImageForm
from studio.core.data.segmentation.pipeline import fitted_masks
from studio.core.tasks.segmentation.fitting import mask_in_input
from tests.core.test_segmentation_pipeline import SIDE, random_mask


@pytest.mark.parametrize("resize", ["squash", "crop", "pad"])
def test_mask_in_input_is_the_pipelines_fitted_mask(resize):
    rng = np.random.default_rng(7)
    for size in ((12, 20), (20, 12), (9, 9), (37, 16), (SIDE, SIDE)):
        mask = random_mask(rng, size)
        np.testing.assert_array_equal(
            mask_in_input(mask, (SIDE, SIDE), resize),
            fitted_masks(mask, ImageForm((SIDE, SIDE), 1, resize)).numpy(),
            err_msg=f"{resize} {size}")
