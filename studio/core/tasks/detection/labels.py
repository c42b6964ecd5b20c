"""A detection dataset's labels held as one ragged record (``BoxLabels``): every image's boxes
end to end in two flat arrays, with a count per image. Indexing it with an array of image
indices gives the labels of those images, as a NumPy array of classes would, so the code that
splits, counts and fingerprints labels takes it as it takes the others."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from studio.core.tasks.detection.boxes import ImageBoxes


@dataclass(frozen=True)
class BoxLabels:
    """The boxes of N images: ``boxes`` (float32 total × 4, x_min, y_min, x_max, y_max in
    pixels of each image as stored), ``classes`` (int32 total), ``counts`` (int32 N, the
    boxes of each image in turn) and ``sizes`` (int32 N × 2, each image's height and width
    as stored: what its boxes' pixels are of)."""

    boxes: np.ndarray
    classes: np.ndarray
    counts: np.ndarray
    sizes: np.ndarray

    @staticmethod
    def of(images: Sequence[ImageBoxes | None], sizes: Sequence[tuple[int, int]]
           ) -> BoxLabels:
        """The labels of these images in order (None: a background image, no boxes), each
        image ``sizes`` (height, width) as stored."""
        images = [image or ImageBoxes() for image in images]
        return BoxLabels(
            np.concatenate([i.boxes for i in images] or [np.zeros((0, 4))]).astype(np.float32),
            np.concatenate([i.classes for i in images] or [np.zeros(0)]).astype(np.int32),
            np.asarray([len(i) for i in images], np.int32),
            np.asarray(sizes, np.int32).reshape(-1, 2))

    def __len__(self) -> int:
        return len(self.counts)

    @property
    def starts(self) -> np.ndarray:
        """Where each image's boxes start in ``boxes`` and ``classes``."""
        return np.cumsum(self.counts) - self.counts

    def __getitem__(self, indices: np.ndarray) -> BoxLabels:
        """The labels of the images at ``indices`` (an integer array), in that order."""
        indices = np.asarray(indices, np.int64).reshape(-1)
        counts = self.counts[indices]
        rows = np.repeat(self.starts[indices] - np.cumsum(counts) + counts, counts)
        rows += np.arange(int(counts.sum()))
        return BoxLabels(self.boxes[rows], self.classes[rows], counts, self.sizes[indices])

    def image(self, index: int) -> ImageBoxes:
        """The boxes of image ``index``."""
        start = int(self.starts[index])
        end = start + int(self.counts[index])
        return ImageBoxes(self.boxes[start:end], self.classes[start:end])

    def class_counts(self, num_classes: int) -> list[int]:
        """Boxes per class."""
        return [int(n) for n in np.bincount(self.classes, minlength=num_classes)]

    def tobytes(self) -> bytes:
        """Every box, class, count and size, for a dataset's fingerprint."""
        return b"".join(np.ascontiguousarray(a).tobytes()
                        for a in (self.boxes, self.classes, self.counts, self.sizes))
