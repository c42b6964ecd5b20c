"""Where a box of an image lands in the network's input, and back: the image pipeline fits
images to the input size by squashing, centre-cropping or padding (``data.image_pipeline``),
and each is a scale and a shift of the coordinates, computed here as TensorFlow computes the
image (NumPy only)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from studio.core.tasks.detection.boxes import ImageBoxes

Size = tuple[int, int]
"""Height, width in pixels."""


@dataclass(frozen=True)
class BoxMapping:
    """Input pixel = image pixel × ``scale`` + ``shift``, per axis as (x, y); the image is
    ``image_size`` (height, width) as stored."""

    scale: tuple[float, float]
    shift: tuple[float, float]
    image_size: Size

    def to_input(self, boxes: np.ndarray) -> np.ndarray:
        """Boxes (N × 4, x_min, y_min, x_max, y_max) of the image in input pixels (a crop may
        put them partly or wholly outside the input)."""
        boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
        return (boxes * np.tile(self.scale, 2) + np.tile(self.shift, 2)).astype(np.float32)

    def to_image(self, boxes: np.ndarray) -> np.ndarray:
        """Boxes in input pixels back in pixels of the image, clipped to it."""
        boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
        back = (boxes - np.tile(self.shift, 2)) / np.tile(self.scale, 2)
        height, width = self.image_size
        return np.clip(back, 0, [width, height, width, height]).astype(np.float32)


def box_mapping(image_size: Size, input_size: Size, resize: str) -> BoxMapping:
    """How an image of ``image_size`` fitted to ``input_size`` with ``resize`` ("squash",
    "crop" or "pad", as ``ImageForm.resize``) moves its boxes. At the input size, every mode
    leaves them as they are."""
    (height, width), (in_height, in_width) = image_size, input_size
    f32 = np.float32
    if resize == "squash" or (height, width) == (in_height, in_width):
        return BoxMapping((in_width / width, in_height / height), (0.0, 0.0), image_size)
    if resize == "crop":  # the largest centred window of the input's aspect ratio
        crop_height = int(np.clip(np.round(f32(width) * f32(in_height) / f32(in_width)), 1,
                                  height))
        crop_width = int(np.clip(np.round(f32(height) * f32(in_width) / f32(in_height)), 1,
                                 width))
        scale = (in_width / crop_width, in_height / crop_height)
        top, left = (height - crop_height) // 2, (width - crop_width) // 2
        return BoxMapping(scale, (-left * scale[0], -top * scale[1]), image_size)
    if resize == "pad":  # tf.image.resize_with_pad: shrink to fit, then centre
        ratio = max(f32(width) / f32(in_width), f32(height) / f32(in_height))
        fitted_width, fitted_height = f32(width) / ratio, f32(height) / ratio
        scale = (math.floor(fitted_width) / width, math.floor(fitted_height) / height)
        shift = (max(0, math.floor((in_width - fitted_width) / 2)),
                 max(0, math.floor((in_height - fitted_height) / 2)))
        return BoxMapping(scale, (float(shift[0]), float(shift[1])), image_size)
    raise ValueError(f"Unknown resize mode {resize!r}: use squash, crop or pad.")


def boxes_in_input(boxes: ImageBoxes, image_size: Size, input_size: Size, resize: str
                   ) -> ImageBoxes:
    """An image's boxes in pixels of the network's input, clipped to it; boxes the resize
    leaves outside (a crop) are dropped. What a detector learns and is scored on."""
    height, width = input_size
    moved = box_mapping(image_size, input_size, resize).to_input(boxes.boxes)
    moved = np.clip(moved, 0, [width, height, width, height])
    kept = (moved[:, 2] > moved[:, 0]) & (moved[:, 3] > moved[:, 1])
    return ImageBoxes(moved[kept], boxes.classes[kept])
