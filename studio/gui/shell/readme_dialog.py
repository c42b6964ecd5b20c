"""Help > Layer Studio Guide: the README, read from the files installed with the app (no
network), with its screenshots scaled to the window."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QTextCursor, QTextDocument
from PySide6.QtWidgets import QDialog, QTextBrowser, QVBoxLayout, QWidget

from studio.core.data.bundled import ASSETS_DIR

README = ASSETS_DIR.parent / "README.md"
"""Beside ``assets/`` (and the ``studio`` package): in a checkout and in the bundle alike."""
IMAGE_WIDTH = 640
"""The width screenshots are shown at, in pixels."""


def _scale_images(document: QTextDocument, width: int) -> None:
    """Show every image of ``document`` ``width`` pixels wide (the height follows)."""
    cursor = QTextCursor(document)
    block = document.begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            if fragment.charFormat().isImageFormat():
                image = fragment.charFormat().toImageFormat()
                image.setWidth(width)
                cursor.setPosition(fragment.position())
                cursor.setPosition(fragment.position() + fragment.length(),
                                   QTextCursor.MoveMode.KeepAnchor)
                cursor.setCharFormat(image)
            fragments += 1
        block = block.next()


class ReadmeDialog(QDialog):
    """The README of ``path`` rendered from its Markdown; links to the web open outside."""

    def __init__(self, parent: QWidget | None = None, path: Path = README) -> None:
        super().__init__(parent)
        self.setWindowTitle("Layer Studio Guide")
        self.browser = QTextBrowser()
        self.browser.setObjectName("readme")
        self.browser.setOpenExternalLinks(True)
        self.browser.setSearchPaths([str(path.parent)])  # the screenshots' relative paths
        try:
            self.browser.setMarkdown(path.read_text(encoding="utf-8"))
            _scale_images(self.browser.document(), IMAGE_WIDTH)
        except OSError as exc:
            self.browser.setPlainText(f"The guide cannot be read: {path}: "
                                      f"{exc.strerror or exc}")
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        self.resize(IMAGE_WIDTH + 120, 720)
