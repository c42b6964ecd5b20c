"""The resizing and padding layers: UpSampling2D, ZeroPadding2D, Cropping2D and Resizing.

Padding and cropping take Keras's forms: one number for every side, one per axis (height,
width), or one per side (top, bottom, left, right), as MobileNetV2's ``((0, 1), (0, 1))``.
"""

from __future__ import annotations

from typing import Any

from studio.core.model.layers.base import LayerError, LayerType, Shape, ranked
from studio.core.model.params import Param, format_shape

IMAGE = "an image of height × width × channels"
INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5")
"""How Keras's Resizing computes new pixels; UpSampling2D takes all but 'area'."""


def _sides(name: str, help_text: str) -> Param:
    return Param(name, "int", 1 if name == "padding" else 0,
                 f"{help_text}: one number for every side, two (height, width) for both sides "
                 "of each axis, or four (top, bottom, left, right), e.g. 0, 1, 0, 1.",
                 0, 4096, axes=2, sides=True)


PADDING = _sides("padding", "Rows and columns of zeros added around the image")
CROPPING = _sides("cropping", "Rows and columns removed from the image's edges")
SIZE = Param("size", "int", 2, "How many times larger: one number for both axes, or two "
             "(height, width), e.g. 2, 1.", 1, 64, axes=2)


def _upsampling(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    h, w, c = ranked(inputs, 3, "UpSampling2D", IMAGE)
    sh, sw = SIZE.sizes(params["size"])
    return (h * sh, w * sw, c), 0


def _zero_padding(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    h, w, c = ranked(inputs, 3, "ZeroPadding2D", IMAGE)
    ph, pw = PADDING.sizes(params["padding"])
    return (h + ph, w + pw, c), 0


def _cropping(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    h, w, c = ranked(inputs, 3, "Cropping2D", IMAGE)
    ch, cw = CROPPING.sizes(params["cropping"])
    if ch >= h or cw >= w:
        raise LayerError(
            f"Cropping {ch} rows and {cw} columns from an image of {format_shape((h, w))} "
            "pixels leaves nothing. Crop less.")
    return (h - ch, w - cw, c), 0


def _resizing(params: dict[str, Any], inputs: list[Shape]) -> tuple[Shape, int]:
    _, _, c = ranked(inputs, 3, "Resizing", IMAGE)
    return (params["height"], params["width"], c), 0


TYPES = (
    LayerType(
        "UpSampling2D",
        "Resizing and padding",
        "Enlarges the image by repeating (or interpolating) its pixels; learns nothing.",
        (
            SIZE,
            Param("interpolation", "choice", "nearest",
                  "'nearest' repeats each pixel; the others blend neighbours.",
                  choices=tuple(i for i in INTERPOLATIONS if i != "area")),
        ),
        _upsampling,
    ),
    LayerType(
        "ZeroPadding2D",
        "Resizing and padding",
        "Adds rows and columns of zeros around the image, e.g. before a strided convolution.",
        (PADDING,),
        _zero_padding,
    ),
    LayerType(
        "Cropping2D",
        "Resizing and padding",
        "Removes rows and columns from the image's edges, e.g. to match a skip connection.",
        (CROPPING,),
        _cropping,
    ),
    LayerType(
        "Resizing",
        "Resizing and padding",
        "Resizes the image to a fixed height and width.",
        (
            Param("height", "int", 64, "The output's height in pixels.", 1, 8192,
                  required=True),
            Param("width", "int", 64, "The output's width in pixels.", 1, 8192,
                  required=True),
            Param("interpolation", "choice", "bilinear", "How new pixels are computed.",
                  choices=INTERPOLATIONS),
            Param("crop_to_aspect_ratio", "bool", False,
                  "Crop the image to the output's aspect ratio first, so it is not "
                  "stretched."),
        ),
        _resizing,
    ),
)
