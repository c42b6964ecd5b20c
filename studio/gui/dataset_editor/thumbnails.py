"""Thumbnails of image files, decoded on a worker thread a batch at a time, the ones asked
for last first (those on screen now), and kept in a bounded cache."""

from __future__ import annotations

from collections import OrderedDict

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QImage, QImageReader, QPixmap

from studio.gui.widgets.jobs import JobSlot

BATCH = 32
"""Thumbnails decoded per job: small, so what scrolls into view comes next."""
KEPT = 3000
"""Thumbnails cached (about 30 MB at 88 pixels)."""


def read_thumbnail(path: str, side: int) -> QImage | None:
    """The image file ``path`` decoded at most ``side`` pixels across (large JPEGs are
    decoded small directly); None if it cannot be read. Safe on any thread (no pixmap)."""
    reader = QImageReader(path)
    reader.setAutoTransform(True)
    size = reader.size()
    if size.isValid() and max(size.width(), size.height()) > side:
        reader.setScaledSize(size.scaled(side, side, Qt.AspectRatioMode.KeepAspectRatio))
    image = reader.read()
    return None if image.isNull() else image


def _decode(paths: list[str], side: int):
    def task(on_event, stop):
        for path in paths:
            if stop.is_set():
                return
            on_event({"path": path, "image": read_thumbnail(path, side)})

    return task


class Thumbnails(QObject):
    """Pixmaps of image files at most ``side`` pixels across; ``get`` answers from the cache
    or asks for the file to be decoded, and ``ready`` says when it is."""

    ready = Signal(str)
    """The thumbnail of this path is in the cache now (or known unreadable)."""

    def __init__(self, parent: QObject, side: int) -> None:
        super().__init__(parent)
        self.side = side
        self._cache: OrderedDict[str, QPixmap | None] = OrderedDict()
        self._wanted: OrderedDict[str, None] = OrderedDict()
        self.slot = JobSlot(self)  # started only when idle: the next batch waits for it
        self.slot.event.connect(self._decoded)
        self.slot.finished.connect(self._next)

    def get(self, path: str) -> QPixmap | None:
        """The thumbnail if decoded (None also for a file that cannot be read); else None,
        and it is decoded soon."""
        if path in self._cache:
            self._cache.move_to_end(path)
            return self._cache[path]
        self._wanted[path] = None
        self._wanted.move_to_end(path)
        if not self.slot.busy():
            self._next()
        return None

    def forget(self) -> None:
        """Decode nothing asked for before (another class is shown)."""
        self._wanted.clear()

    def _next(self) -> None:
        batch = []
        while self._wanted and len(batch) < BATCH:
            batch.append(self._wanted.popitem(last=True)[0])
        if batch:
            self.slot.start(_decode(batch, self.side))

    def _decoded(self, event: dict) -> None:
        image = event["image"]
        self._cache[event["path"]] = None if image is None else QPixmap.fromImage(image)
        while len(self._cache) > KEPT:
            self._cache.popitem(last=False)
        self.ready.emit(event["path"])
