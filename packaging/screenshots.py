"""Grab the README's screenshots from the real window, offscreen.

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/screenshots.py

Writes assets/screenshots/main-window.png (the demo after a short run),
assets/screenshots/invalid-model.png (a model with a problem, Start disabled) and
assets/screenshots/branched-model.png (the small ResNet template around a skip connection).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from gui_session import close_discarding, open_demo_window, wait_for, warm_up  # noqa: E402
from PySide6.QtCore import QEventLoop, QTimer  # noqa: E402

from studio.core.templates import from_template  # noqa: E402

OUT = ROOT / "assets" / "screenshots"


def settle(ms: int = 300) -> None:
    """Let pending layout and paint events run before a grab."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    window = open_demo_window()
    window.resize(1400, 900)
    warm_up(window)
    window.training.epochs.setValue(4)
    window.model_list.select("dense_1")
    window.training.start_button.click()
    wait_for(window.training.run_finished)
    settle()
    window.grab().save(str(OUT / "main-window.png"))

    window.model_list.select("dense_2")
    window.inspector.editors["units"].widget.setValue(12)
    settle()
    window.grab().save(str(OUT / "invalid-model.png"))

    window.doc.replace(from_template("resnet"), None)
    graph = window.doc.project.graph
    merge = next(n.id for n in graph.nodes if n.type == "Add")
    window.scene.select_ids([merge])
    window.canvas.resetTransform()
    window.canvas.zoom_by(0.6)
    window.canvas.centerOn(window.scene.nodes[merge])
    settle()
    window.grab().save(str(OUT / "branched-model.png"))
    close_discarding(window)
    print(f"wrote the screenshots in {OUT}")


if __name__ == "__main__":
    main()
