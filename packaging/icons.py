"""Render the app icon (``assets/icon.svg``) to PNGs in the sizes desktops ask for.

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/icons.py

writes ``assets/icons/layer-studio-<size>.png`` for every size in ``ICON_SIZES``.
"""

from __future__ import annotations

from pathlib import Path

from bundle_files import ASSETS, ICON_SIZES, ROOT, icon_path
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

SOURCE = ASSETS / "icon.svg"


def render(svg: Path, size: int) -> QImage:
    """The SVG drawn on a transparent ``size`` x ``size`` image, antialiased."""
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg} is not an SVG Qt can draw")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    return image


def main() -> None:
    app = QGuiApplication.instance() or QGuiApplication([])  # noqa: F841 - painting needs it
    for size in ICON_SIZES:
        path = icon_path(size)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not render(SOURCE, size).save(str(path)):
            raise SystemExit(f"could not write {path}")
        print(path.relative_to(ROOT))


if __name__ == "__main__":
    main()
