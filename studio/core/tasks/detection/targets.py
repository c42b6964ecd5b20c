"""What a DetectionHead is trained to output for one image: CenterNet's target map, made by a
few vectorised TensorFlow ops so that a ``tf.data`` map can build it (TensorFlow is imported
when called).

The map has ``classes + 5`` channels per cell of the head's grid (``stride`` input pixels per
cell), laid out as the head's output (see ``studio.core.model.layers.detection``) plus a mask:

- ``classes`` heatmaps: a Gaussian around each box's centre cell, exactly 1 there, with
  CenterNet's radius rule (the radius at which a box shifted by it still overlaps the true
  one by IoU 0.7), the largest value where objects of one class overlap;
- x and y centre offsets within the centre cell, 0 to 1, in cells;
- log width and log height in cells;
- the mask: 1 at each box's centre cell, where the offsets and sizes count.

Two boxes with their centres in one cell cannot both be taught there: the smaller one is (the
larger one reaches further, so its neighbours' heatmap values still find it). Both keep their
heatmap peaks.
"""

from __future__ import annotations

from typing import Any

from studio.core.model.layers.detection import BOX_CHANNELS

TARGET_CHANNELS_AFTER_CLASSES = BOX_CHANNELS + 1
"""The target map's channels after the class heatmaps: the head's box channels and the mask."""
MIN_OVERLAP = 0.7
"""The IoU a box displaced by the Gaussian's radius keeps with the true box (CenterNet's)."""


def gaussian_radius(height: Any, width: Any, min_overlap: float = MIN_OVERLAP) -> Any:
    """CenterNet's Gaussian radius (in cells) for boxes of ``height`` × ``width`` cells: the
    smallest of the three corner displacements that keep IoU ``min_overlap``, as CenterNet's
    code computes them."""
    import tensorflow as tf

    total, area = height + width, height * width
    r1 = (total + tf.sqrt(total ** 2 - 4 * area * (1 - min_overlap) / (1 + min_overlap))) / 2
    r2 = (2 * total + tf.sqrt(4 * total ** 2 - 16 * (1 - min_overlap) * area)) / 2
    b3 = -2 * min_overlap * total
    r3 = (b3 + tf.sqrt(b3 ** 2 + 16 * min_overlap * (1 - min_overlap) * area)) / 2
    return tf.minimum(tf.minimum(r1, r2), r3)


def detection_targets(boxes: Any, classes: Any, num_classes: int, grid_size: tuple[int, int],
                      stride: int) -> Any:
    """The target map (rows × cols × ``num_classes + 5``, float32) for one image.

    ``boxes``: M × 4 (x_min, y_min, x_max, y_max) in pixels of the network's input;
    ``classes``: M class indices, -1 for the padding that gives every image the same M.
    ``grid_size``: the head's output (rows, cols); ``stride``: input pixels per cell. Boxes
    are clipped to the grid's extent; padding, empty boxes and classes out of range are left
    out.
    """
    import tensorflow as tf

    rows, cols = grid_size
    boxes = tf.reshape(tf.cast(boxes, tf.float32), [-1, 4])
    classes = tf.reshape(tf.cast(classes, tf.int32), [-1])
    extent = tf.constant([cols, rows, cols, rows], tf.float32)
    cells = tf.minimum(tf.maximum(boxes / stride, 0.0), extent)
    width, height = cells[:, 2] - cells[:, 0], cells[:, 3] - cells[:, 1]
    valid = (classes >= 0) & (classes < num_classes) & (width > 0) & (height > 0)
    centre_x, centre_y = (cells[:, 0] + cells[:, 2]) / 2, (cells[:, 1] + cells[:, 3]) / 2
    column = tf.minimum(tf.cast(tf.floor(centre_x), tf.int32), cols - 1)
    row = tf.minimum(tf.cast(tf.floor(centre_y), tf.int32), rows - 1)

    heatmaps = _heatmaps(classes, valid, column, row, width, height, num_classes, rows, cols)
    values = tf.stack([centre_x - tf.cast(column, tf.float32),
                       centre_y - tf.cast(row, tf.float32),
                       tf.math.log(tf.maximum(width, 1e-6)), tf.math.log(tf.maximum(height, 1e-6)),
                       tf.ones_like(width)], axis=1)
    taught = _one_box_per_cell(valid, row * cols + column, width * height, rows * cols)
    at = tf.stack([tf.boolean_mask(row, taught), tf.boolean_mask(column, taught)], axis=1)
    box_maps = tf.scatter_nd(at, tf.boolean_mask(values, taught),
                             [rows, cols, TARGET_CHANNELS_AFTER_CLASSES])
    return tf.concat([heatmaps, box_maps], axis=-1)


def _heatmaps(classes: Any, valid: Any, column: Any, row: Any, width: Any, height: Any,
              num_classes: int, rows: int, cols: int) -> Any:
    """rows × cols × num_classes: each valid box's Gaussian on its class, the largest where
    they overlap, 0 elsewhere. Each box's Gaussian is cut off beyond its radius, as in
    CenterNet, with sigma = (2 radius + 1) / 6."""
    import tensorflow as tf

    radius = tf.floor(gaussian_radius(tf.math.ceil(height), tf.math.ceil(width)))
    radius = tf.maximum(radius, 0.0)[:, None, None]
    sigma = (2 * radius + 1) / 6
    dy = tf.range(rows, dtype=tf.float32)[None, :, None] - tf.cast(row, tf.float32)[:, None, None]
    dx = tf.range(cols, dtype=tf.float32)[None, None, :] - tf.cast(column, tf.float32)[:, None,
                                                                                        None]
    gaussians = tf.exp(-(dx ** 2 + dy ** 2) / (2 * sigma ** 2))
    inside = (tf.abs(dx) <= radius) & (tf.abs(dy) <= radius) & valid[:, None, None]
    gaussians = tf.where(inside, gaussians, 0.0)
    segment = tf.where(valid, classes, num_classes)  # the left-out boxes go past the last class
    per_class = tf.math.unsorted_segment_max(gaussians, segment, num_classes + 1)[:num_classes]
    return tf.transpose(tf.maximum(per_class, 0.0), [1, 2, 0])  # an empty class gives -inf


def _one_box_per_cell(valid: Any, cell: Any, area: Any, cells: int) -> Any:
    """Which valid boxes are taught at their centre cell: the smallest of those sharing a cell,
    the first of equal ones, so the scatter has one value per cell whatever the order."""
    import tensorflow as tf

    cell = tf.where(valid, cell, cells)
    smallest = tf.math.unsorted_segment_min(area, cell, cells + 1)
    candidate = valid & (area <= tf.gather(smallest, cell))
    index = tf.range(tf.shape(cell)[0])
    first = tf.math.unsorted_segment_min(tf.where(candidate, index, tf.shape(cell)[0]), cell,
                                         cells + 1)
    return candidate & (index == tf.gather(first, cell))
