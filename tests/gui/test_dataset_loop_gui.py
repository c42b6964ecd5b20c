"""The whole loop of a dataset made in the app, as issue 25 has a new user close it: a new
image dataset of two classes, frames recorded into each with the (fake) camera, one epoch
trained, a frame recorded into the wrong class answered on the Try tab and moved to the right
one from its card, Train again, and the Runs dock's comparison of the two runs showing the
move."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from PIL import Image
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QToolButton

from studio.core.runs.folders import read_fingerprint
from studio.gui.camera.fake import FakeCamera
from tests.gui.support import RUN_TIMEOUT_MS, click_row, drop_on, show_tab, type_into
from tests.gui.test_camera import Clock, send
from tests.gui.test_corrections_gui import compared, files, pick
from tests.gui.test_dataset_editor_gui import click_class, on_disk, wait_added

LEFT = Qt.MouseButton.LeftButton
PER_CLASS = 12
SIDE = 16


def shades(level: int, count: int, seed: int) -> list[np.ndarray]:
    """``count`` RGB frames of about ``level`` grey, each a little different (noise), as a
    camera pointed at something dark or light sends."""
    rng = np.random.default_rng(seed)
    return [np.clip(level + rng.integers(-10, 11, (SIDE, SIDE, 3)), 0, 255).astype(np.uint8)
            for _ in range(count)]


def record(qtbot, editor, camera: FakeCamera, clock: Clock, class_name: str,
           count: int) -> None:
    """Choose ``class_name`` and hold *Hold to record* while the camera sends ``count``
    frames, one each time a frame is due (4 a second): each one is kept."""
    view = editor.camera
    click_class(qtbot, editor, class_name)
    assert f"'{class_name}'" in view.hold_button.toolTip()
    qtbot.mousePress(view.hold_button, LEFT)
    send(camera, clock, count, 1 / view.rate_box.value())
    qtbot.mouseRelease(view.hold_button, LEFT)
    wait_added(qtbot, editor)


def click_fix(qtbot, window, node_id: str, label: str) -> None:
    """Click the layer's row and its one-click fix called ``label`` in the inspector."""
    click_row(qtbot, window, node_id)
    button = next(b for b in window.inspector.fix_buttons if b.text() == label)
    qtbot.mouseClick(button, LEFT)


def test_a_dataset_made_in_the_app_is_recorded_trained_corrected_and_trained_again(
        window, qtbot):
    # A new image dataset with two classes, named in the dialog.
    panel = window.data_panel
    show_tab(qtbot, window, "Data")
    panel.source.source.setFocus()
    qtbot.keyClicks(panel.source.source, "New")
    dialog = panel.source.new_dialog
    dialog.classes.item(0).setText("dark")
    dialog.classes.item(1).setText("light")
    type_into(qtbot, dialog.name, "Shades")
    qtbot.mouseClick(dialog.buttons.button(QDialogButtonBox.StandardButton.Ok), LEFT)
    root = Path(os.environ["LAYER_STUDIO_HOME"]) / "datasets" / "Shades"
    assert on_disk(root) == {"dark": 0, "light": 0}
    editor = panel.editor
    assert panel.tabs.currentWidget() is editor

    # Frames recorded into each class with the camera beside the images; the last frame
    # held for 'dark' is a light one: the hand moved too soon.
    camera = FakeCamera([*shades(20, PER_CLASS, seed=1), *shades(230, PER_CLASS + 1, seed=2)],
                        fps=0)
    clock = Clock()
    qtbot.mouseClick(editor.camera_toggle, LEFT)
    editor.camera.set_source(camera)
    editor.camera.recorder.clock = clock
    qtbot.mouseClick(editor.camera.camera_button, LEFT)
    editor.camera.rate_box.setValue(4)
    record(qtbot, editor, camera, clock, "dark", PER_CLASS + 1)
    record(qtbot, editor, camera, clock, "light", PER_CLASS)
    assert on_disk(root) == {"dark": PER_CLASS + 1, "light": PER_CLASS}
    qtbot.mouseClick(editor.camera_toggle, LEFT)
    qtbot.waitUntil(lambda: panel.loaded is not None
                    and len(panel.loaded.labels) == 2 * PER_CLASS + 1, timeout=20_000)
    (mislabelled,) = [path for path in (root / "dark").iterdir()
                      if np.asarray(Image.open(path)).mean() > 128]

    # The demo CNN made to fit the data with the inspector's one-click fixes; one epoch.
    click_fix(qtbot, window, "input_1", "Set the input shape to 64 × 64 × 3")
    click_fix(qtbot, window, "dense_2", "Set units to 2")
    qtbot.waitUntil(lambda: window.doc.analysis().ok)
    training = window.training
    type_into(qtbot, training.epochs, "1")
    qtbot.keyClick(training.epochs, Qt.Key.Key_Return)
    assert window.doc.project.training.epochs == 1
    with qtbot.waitSignal(training.run_finished, timeout=RUN_TIMEOUT_MS) as ended:
        qtbot.mouseClick(training.start_button, LEFT)
    assert ended.args == ["finished"], training.status.text()
    first_run = Path(training.run_dir)

    # The light frame among 'dark' answered on the Try tab, and moved to 'light' from its
    # card: the dataset's own image is moved, not copied.
    try_panel = window.try_panel
    show_tab(qtbot, window, "Try")
    with qtbot.waitSignal(try_panel.answered, timeout=RUN_TIMEOUT_MS):
        assert drop_on(try_panel, [mislabelled])
    assert first_run.name in try_panel.status.text()
    (card,) = try_panel.cards
    button = card.findChild(QToolButton, "try-add-card")
    assert button.isEnabled()
    light_before = files(root / "light")
    with qtbot.waitSignal(try_panel.corrections.dataset.said, timeout=10_000):
        pick(button.menu(), "light")
    assert not mislabelled.exists()
    assert on_disk(root) == {"dark": PER_CLASS, "light": PER_CLASS + 1}
    (moved,) = files(root / "light") - light_before
    assert np.asarray(Image.open(root / "light" / moved)).mean() > 128
    note = try_panel.corrections.note
    assert "1 image of the dataset moved to 'light'." in note.label.text()

    # Train again, one click, on the corrected dataset.
    with qtbot.waitSignal(training.run_started):
        qtbot.mouseClick(note.train_button, LEFT)
    qtbot.waitUntil(lambda: not training.is_running(), timeout=RUN_TIMEOUT_MS)
    assert training.outcome == "finished", training.last_error
    second_run = Path(training.run_dir)
    assert second_run != first_run
    assert {name: len(images) for name, images in read_fingerprint(second_run).items()} == {
        "dark": PER_CLASS, "light": PER_CLASS + 1}

    # The Runs dock compares the two runs: the dataset changed by that one move.
    history = window.runs
    window.runs_dock.show()
    window.runs_dock.raise_()
    qtbot.waitUntil(lambda: len(history.model.runs) == 2, timeout=10_000)
    history.table.setFocus()
    qtbot.keyClick(history.table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert len(history.selected_runs()) == 2
    assert compared(qtbot, history, first_run.name, second_run.name).endswith(
        ":\n\n0 images added, 0 images removed, 1 image moved between classes. 'dark': 1 "
        "moved out to 'light'. 'light': 1 moved in from 'dark'.")
    assert history.message.text() == ("The two runs have the same settings. Dataset: 0 images "
                                      "added, 0 removed, 1 moved between classes (see "
                                      "Dataset).")
    assert history.details.currentWidget() is history.details.changes  # all that differs
