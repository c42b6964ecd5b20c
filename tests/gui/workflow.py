"""A model from start to answer, as a person makes one, for the whole-workflow tests of each
task: a template opened from the gallery, a folder picked in the Data tab, one epoch trained,
then an image dropped on the window and answered on the Try tab."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from studio.core.inference.batch import image_files
from tests.gui.support import RUN_TIMEOUT_MS, drop_on
from tests.gui.test_data_detection_gui import choose_in_popup, pick_folder
from tests.gui.test_template_gallery import open_gallery, pick

LEFT = Qt.MouseButton.LeftButton


def trained_from_template(qtbot, window, monkeypatch, template: str, title: str,
                          folder: Path, source: str, classes: int):
    """Open ``template`` (titled ``title``) from the gallery, pick ``folder`` with the Data
    tab's ``source`` entry read as grey images (as the digits are) while the template's own
    demo set is still being drawn (the folder's reading replaces it, as it does for a person
    who does not wait), check it has ``classes`` classes, and train one epoch from the
    Training tab; the tab, once the run finished."""
    gallery = open_gallery(qtbot, window)
    pick(qtbot, gallery, template)
    qtbot.mouseClick(gallery.open_button, LEFT)
    qtbot.waitUntil(lambda: window.doc.project.name == title)
    data = pick_folder(qtbot, window, monkeypatch, folder, source, read_first=False)
    choose_in_popup(qtbot, data.options.color, "grayscale")
    qtbot.waitUntil(lambda: window.doc.analysis().ok)
    assert window.doc.dataset().num_classes == classes

    panel = window.training
    panel.epochs.selectAll()
    qtbot.keyClicks(panel.epochs, "1")
    qtbot.keyClick(panel.epochs, Qt.Key.Key_Return)
    assert window.doc.project.training.epochs == 1
    with qtbot.waitSignal(panel.run_finished, timeout=RUN_TIMEOUT_MS) as ended:
        qtbot.mouseClick(panel.start_button, LEFT)
    assert ended.args == ["finished"], panel.status.text()
    return panel


def curves_drawn(panel, parts: tuple[str, ...]) -> None:
    """The curves drew one epoch of the run's validation score and each part of its loss."""
    assert set(panel.curves.plots) == {"loss", "score", "parts", "learning_rate"}
    assert len(panel.curves.series["val_score"].x) == 1
    assert all(len(panel.curves.series[f"part_train_{metric}"].x) == 1 for metric in parts)


def answered_on_drop(qtbot, window, folder: Path, task: str):
    """Drop ``folder``'s first image on the canvas: the window shows the Try tab, which
    answers with the run just trained; the prediction and its card."""
    try_panel = window.try_panel
    with qtbot.waitSignal(try_panel.answered, timeout=RUN_TIMEOUT_MS) as answered:
        assert drop_on(window.canvas.viewport(), [image_files(folder)[0]])
    assert window.views.currentWidget() is try_panel
    (prediction,) = answered.args[0]
    assert prediction.error is None and prediction.task == task
    assert Path(window.training.run_dir).name in try_panel.status.text()
    (card,) = try_panel.cards
    return prediction, card
