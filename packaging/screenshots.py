"""Grab the README's screenshots from the real window, offscreen, at two window sizes.

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/screenshots.py

Writes, in assets/screenshots/, each at 1600 × 1000 as NAME.png and at 1280 × 720 (a laptop's
screen) as NAME-1280x720.png, the window opening at that size as on a screen of that size:
main-window (the demo after a short run), invalid-model (a model with a problem, Start
disabled), data-view (the Data tab on the bundled MNIST-10k, previewing rotation and zoom),
data-health (the health report of a small image folder with a corrupt file and a copy),
branched-model (the small ResNet template, fitted as it opens, in columns), unet-model (the U-Net
template around its skip connections), training (the Training
dock after a run with a cosine schedule and warm-up), runs (the Runs dock overlaying two
runs' curves), try (four dropped digits answered, with the heat map of one), draw (a 7 drawn
on the Try tab's pad, answered and explained), evaluate (the Evaluate view on the validation
split), search (the Search tab after a grid of six trials) and welcome (the welcome page with
two recent projects).

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/screenshots.py search

writes only search at both sizes (``welcome`` only welcome, ``draw`` only draw, ``templates``
only branched-model and unet-model).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
from gui_session import (  # noqa: E402
    close_discarding,
    demo_run_workspace,
    drop,
    open_demo_window,
    open_try_view,
    wait_for,
    warm_up,
)
from PIL import Image, ImageDraw  # noqa: E402
from PySide6.QtCore import QEventLoop, QPoint, QSettings, Qt, QTimer  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QMainWindow  # noqa: E402

from studio.core.project.document import SUFFIX, save_project  # noqa: E402
from studio.core.project.templates import from_template  # noqa: E402

OUT = ROOT / "assets" / "screenshots"
SHAPES = {"circles": "#d93025", "squares": "#1a73e8", "triangles": "#188038"}
PER_CLASS = 14
SIZES = ((64, 64), (64, 64), (96, 72), (48, 48))
"""Width and height of the shapes' images, taking turns."""
GREY_EVERY = 6
WINDOWS = {(1600, 1000): "", (1280, 720): "-1280x720"}
"""The window sizes grabbed, and what each adds to a screenshot's name."""


def settle(ms: int = 300) -> None:
    """Let pending layout and paint events run before a grab."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait_until(ready: Callable[[], bool], timeout_s: float = 300.0) -> None:
    """Run the event loop until ``ready()`` holds, checking it every 50 ms."""
    loop = QEventLoop()
    poll = QTimer()
    poll.timeout.connect(lambda: ready() and loop.quit())
    poll.start(50)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    if not ready():
        loop.exec()
    poll.stop()
    if not ready():
        raise TimeoutError(f"waited {timeout_s:.0f} s for the window to get ready")


def shape_folder(root: Path) -> Path:
    """A small image folder: coloured shapes on a light background, one class per shape, in a
    few sizes and a few in grey, with one corrupt file and one copy so the health report has
    something to say."""
    rng = np.random.default_rng(0)
    for name, colour in SHAPES.items():
        (root / name).mkdir(parents=True)
        for i in range(PER_CLASS):
            width, height = SIZES[i % len(SIZES)]
            image = Image.new("RGB", (width, height), tuple(rng.integers(215, 250, 3).tolist()))
            r = int(rng.uniform(0.15, 0.3) * min(width, height))
            x, y = (int(rng.uniform(r + 2, side - r - 2)) for side in (width, height))
            box = (x - r, y - r, x + r, y + r)
            draw = ImageDraw.Draw(image)
            if name == "circles":
                draw.ellipse(box, fill=colour)
            elif name == "squares":
                draw.rectangle(box, fill=colour)
            else:
                draw.polygon([(x, y - r), (x - r, y + r), (x + r, y + r)], fill=colour)
            grey = i % GREY_EVERY == GREY_EVERY - 1
            (image.convert("L") if grey else image).save(root / name / f"{name[:-1]}-{i:02}.png")
    (root / "circles" / "circle-99.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really a picture")
    shutil.copy(root / "squares" / "square-03.png", root / "squares" / "square-03 copy.png")
    return root


def grab(widget, name: str) -> None:
    """Save ``widget`` as it looks now as ``name``, ending as WINDOWS says for the size of the
    main window shown, in the screenshots folder."""
    settle()
    window = next(top for top in QApplication.topLevelWidgets()
                  if isinstance(top, QMainWindow) and top.isVisible())
    path = OUT / name
    ending = WINDOWS[window.size().toTuple()]
    widget.grab().save(str(path.with_name(f"{path.stem}{ending}{path.suffix}")))


def data_screenshots(window) -> None:
    """The Data tab: MNIST-10k with an augmentation preview, then a folder's health report."""
    panel = window.data_panel
    view = panel.augmentation
    window.views.setCurrentWidget(panel)
    wait_until(lambda: panel.loaded is not None)
    panel.tabs.setCurrentWidget(view)
    view.sliders["rotation"].setValue(20)
    view.sliders["zoom"].setValue(10)
    wait_until(lambda: view.preview is not None and len(view.preview) > 1)
    grab(window, "data-view.png")

    with tempfile.TemporaryDirectory(prefix="layer-studio-") as temp:
        folder = shape_folder(Path(temp) / "Shapes")
        panel.source.pick(folder)
        wait_until(lambda: panel.loaded is not None and panel.loaded.info.name == str(folder))
        panel.tabs.setCurrentWidget(panel.health)
        grab(window, "data-health.png")
        window.views.setCurrentIndex(0)


def training_screenshots(window, first_run: str) -> None:
    """A second run with a cosine schedule and warm-up, the Training dock after it, then the
    Runs dock overlaying it with the first run."""
    panel = window.training
    form = panel.optimizer_form
    form.schedule.setCurrentIndex(form.schedule.findData("cosine"))
    form.schedule_fields["warmup_epochs"].setValue(1)
    panel.epochs.setValue(5)
    panel.start_button.click()
    outcome, = wait_for(panel.run_finished)
    if outcome != "finished":
        raise RuntimeError(f"the screenshot run ended {outcome}: {panel.last_error}")
    grab(window.training_dock, "training.png")

    window.runs_dock.raise_()
    history = window.runs
    wait_until(lambda: history.model.rowCount() >= 2)
    history.select_runs([Path(first_run).name, Path(panel.run_dir).name])
    history.overlay_action.trigger()
    grab(window.runs_dock, "runs.png")
    window.training_dock.raise_()


def answer_screenshots(window, folder: Path) -> None:
    """The Try view answering four dropped digits with the heat map of one, then the
    Evaluate view on the validation split with a confusion cell opened."""
    from studio.core.data.sources import load_arrays
    from studio.core.project.document import DatasetChoice

    x, y = load_arrays(DatasetChoice())
    paths = []
    for index in (1, 3, 4, 5):
        paths.append(folder / f"digit-{index}.png")
        Image.fromarray(x[index, ..., 0]).save(paths[-1])
    panel = window.try_panel
    drop(window.canvas.viewport(), paths)
    wait_for(panel.answered)
    wait_for(panel.explain.explained)
    grab(window, "try.png")
    draw_screenshot(window)

    view = window.evaluation
    window.views.setCurrentWidget(view)
    wait_until(lambda: view.evaluate_button.isEnabled())
    view.evaluate_button.click()
    wait_for(view.evaluated)
    grab(window, "evaluate.png")
    window.views.setCurrentIndex(0)


def draw_screenshot(window) -> None:
    """A 7 drawn with the mouse on the Try tab's pad, answered, and explained."""
    panel = window.try_panel
    pad = panel.pad
    panel.tabs.setCurrentWidget(pad)
    settle()
    canvas = pad.canvas
    left = QPoint(canvas.width() // 2 - canvas.height() // 4, canvas.height() // 4)
    corner = QPoint(canvas.width() // 2 + canvas.height() // 4, canvas.height() // 4)
    foot = QPoint(canvas.width() // 2 - canvas.height() // 12, canvas.height() * 4 // 5)
    QTest.mousePress(canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, left)
    for start, end in ((left, corner), (corner, foot)):
        for step in range(1, 11):
            QTest.mouseMove(canvas, start + (end - start) * step / 10)
    QTest.mouseRelease(canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, foot)
    wait_until(lambda: pad.answered_version == pad.version)
    pad.explain_button.click()
    wait_for(pad.explain_view.explained)
    settle()
    grab(window, "draw.png")
    panel.tabs.setCurrentIndex(0)


def search_screenshot(window) -> None:
    """The Search tab after a grid over three learning rates and two widths of the demo's
    dense_1 (two epochs each, two trials at once), sorted by the metric."""
    from studio.core.project.document import Dimension

    def space(project) -> None:
        project.training.epochs = 2
        project.search.workers = 2
        project.search.dimensions = [
            Dimension("training.learning_rate", values=[0.01, 0.001, 0.0001]),
            Dimension("layer.dense_1.units", values=[32, 64])]

    window.doc.edit("Search", space)
    panel = window.search
    window.views.setCurrentWidget(panel)
    panel.start_button.click()
    outcome, = wait_for(panel.search_finished)
    if outcome != "finished":
        raise RuntimeError(f"the screenshot search ended {outcome}: {panel.last_error}")
    panel.table.sortByColumn(4, Qt.SortOrder.DescendingOrder)
    grab(window, "search.png")
    window.undo_action.trigger()
    window.views.setCurrentIndex(0)


def template_screenshot(window, template: str, selected: str, name: str,
                        centred: str | None = None, zoom: float = 1.0) -> None:
    """The ``template`` on the canvas with its first layer of type ``selected`` selected:
    fitted as it opens, or at ``zoom`` centred on its first layer of type ``centred``."""
    window.doc.replace(from_template(template), None)
    graph = window.doc.project.graph
    first = {kind: next(n.id for n in graph.nodes if n.type == kind)
             for kind in (selected, centred) if kind}
    window.scene.select_ids([first[selected]])
    if centred is None:
        window.canvas.fit()
    else:
        window.canvas.resetTransform()
        window.canvas.zoom_by(zoom)
        window.canvas.centerOn(window.scene.nodes[first[centred]])
    grab(window, name)


def template_screenshots(window) -> None:
    """The small ResNet around a skip connection, and the U-Net around its skip connections
    with the inner one selected."""
    template_screenshot(window, "resnet", "Add", "branched-model.png")
    template_screenshot(window, "unet", "Concatenate", "unet-model.png", "Conv2DTranspose", 0.5)


def grab_templates(size: tuple[int, int]) -> None:
    """Only the templates' screenshots."""
    window = open_demo_window(size=size)
    warm_up(window)
    template_screenshots(window)
    close_discarding(window)


def welcome_screenshot(window, folder: Path) -> None:
    """The welcome page, after two projects were saved in ``folder``."""
    for name, template in (("Digits baseline", "cnn"), ("Shapes from photos", "mobilenetv2")):
        path = folder / "projects" / f"{name}{SUFFIX}"
        save_project(from_template(template), path)
        window.recent.add(path)
    page = window.show_welcome()
    grab(page, "welcome.png")
    page.close()


def grab_welcome(folder: Path, size: tuple[int, int]) -> None:
    """Only the welcome page's screenshot."""
    window = open_demo_window(size=size)
    welcome_screenshot(window, folder)
    close_discarding(window)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for size in WINDOWS:
        with tempfile.TemporaryDirectory(prefix="layer-studio-settings-") as settings:
            os.environ["LAYER_STUDIO_HOME"] = settings  # runs of this session only
            for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
                QSettings.setPath(fmt, QSettings.Scope.UserScope, settings)  # a first run
            if sys.argv[1:] == ["search"]:
                grab_search(size)
            elif sys.argv[1:] == ["welcome"]:
                grab_welcome(Path(settings), size)
            elif sys.argv[1:] == ["draw"]:
                grab_draw(settings, size)
            elif sys.argv[1:] == ["templates"]:
                grab_templates(size)
            else:
                grab_all(size)
    print(f"wrote the screenshots in {OUT}")


def grab_search(size: tuple[int, int]) -> None:
    """Only the Search tab's screenshot."""
    window = open_demo_window(size=size)
    warm_up(window)
    search_screenshot(window)
    close_discarding(window)


def grab_draw(workspace: str, size: tuple[int, int]) -> None:
    """Only the drawing pad's screenshot, with the demo trained for one epoch."""
    trained = demo_run_workspace(workspace)
    window = open_try_view(trained, size)
    draw_screenshot(window)
    close_discarding(window)


def grab_all(size: tuple[int, int]) -> None:
    window = open_demo_window(size=size)
    warm_up(window)
    window.training.epochs.setValue(4)
    window.model_list.select("dense_1")
    window.training.start_button.click()
    wait_for(window.training.run_finished)
    grab(window, "main-window.png")
    first_run = window.training.run_dir

    window.model_list.select("dense_2")
    window.inspector.editors["units"].widget.setValue(12)
    grab(window, "invalid-model.png")
    window.undo_action.trigger()

    training_screenshots(window, first_run)
    search_screenshot(window)
    with tempfile.TemporaryDirectory(prefix="layer-studio-digits-") as digits:
        answer_screenshots(window, Path(digits))
    data_screenshots(window)

    template_screenshots(window)
    welcome_screenshot(window, Path(os.environ["LAYER_STUDIO_HOME"]))
    close_discarding(window)


if __name__ == "__main__":
    main()
