"""The Try view: images dropped on the window, pasted or picked are answered by a trained
model; a folder is answered as a batch into a table that sorts and exports."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import keras
import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QCoreApplication, QPoint, Qt
from PySide6.QtGui import QGuiApplication, QImage
from PySide6.QtWidgets import QFileDialog, QPushButton

from studio.core.data.image_pipeline import preprocess_image_files
from studio.core.data.sources import load_arrays
from studio.core.data.table_pipeline import preprocess_rows
from studio.core.inference.predictor import Prediction
from studio.core.model.graph import Graph, Node
from studio.core.project.document import DatasetChoice, Project
from studio.core.training.trainer import train
from studio.gui.data.preprocessing_dialog import PreprocessingDialog
from studio.gui.inference.image_cards import ImageCards
from studio.gui.inference.result_card import SELECTED_STYLE, ResultCard
from tests.gui.support import RUN_TIMEOUT_MS, copied_run, drop_on, runs_of

LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def run_dir(cnn_run, window) -> Path:
    """The small CNN's run, copied where the window looks for its unsaved project's runs."""
    return copied_run(cnn_run, runs_of(window))


@pytest.fixture
def digits(tmp_path) -> dict[str, Path]:
    """MNIST digits of four classes as PNG files, by label (7 is among them)."""
    x, y = load_arrays(DatasetChoice())
    folder = tmp_path / "digits"
    folder.mkdir()
    paths = {}
    for index, label in enumerate(y):
        if str(label) not in paths:
            paths[str(label)] = folder / f"digit {index} is a {label}.png"
            Image.fromarray(x[index, ..., 0]).save(paths[str(label)])
        if len(paths) == 4:
            return paths
    raise AssertionError("MNIST-10k has more than three classes")


def wait_cards(qtbot, panel, count: int) -> None:
    qtbot.waitUntil(lambda: len(panel.cards) >= count, timeout=RUN_TIMEOUT_MS)


def test_images_dropped_on_the_canvas_are_answered_with_bars(window, qtbot, run_dir, digits):
    panel = window.try_panel
    with qtbot.waitSignal(panel.answered, timeout=RUN_TIMEOUT_MS) as answered:
        assert drop_on(window.canvas.viewport(), list(digits.values()))
    assert window.views.currentWidget() is panel
    predictions = answered.args[0]
    assert [Path(p.source) for p in predictions] == list(digits.values())
    assert run_dir.name in panel.status.text()
    # Keras is the oracle: the run's model on the images read as its validation split reads
    model = keras.saving.load_model(run_dir / "model.keras")
    prep = json.loads((run_dir / "preprocessing.json").read_text())
    expected = np.asarray(model(preprocess_image_files(prep, list(digits.values()))))
    for row, prediction in zip(expected, predictions, strict=True):
        assert prediction.error is None
        assert len(prediction.labels) == 5 == len(prediction.probabilities)
        assert prediction.labels[0] == str(row.argmax())
        assert prediction.probabilities[0] == pytest.approx(row.max(), abs=1e-5)
        assert prediction.probabilities == sorted(prediction.probabilities, reverse=True)
    card = panel.cards[0]
    assert card.answer is not None and card.answer.labels == predictions[-1].labels
    assert card.thumbnail.pixmap() is not None and not card.thumbnail.pixmap().isNull()
    assert card.time.text().endswith(" ms")


def test_a_bad_file_in_a_drop_says_why_and_the_others_are_answered(
    window, qtbot, run_dir, digits, tmp_path
):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a picture")
    broken = tmp_path / "broken.png"
    broken.write_bytes(digits["7"].read_bytes()[:60])
    panel = window.try_panel
    dropped = [notes, digits["7"], broken]
    with qtbot.waitSignal(panel.answered, timeout=RUN_TIMEOUT_MS) as answered:
        assert drop_on(panel, dropped)
    by_name = {Path(p.source).name: p for p in answered.args[0]}
    assert by_name["notes.txt"].error and by_name["broken.png"].error
    assert by_name[digits["7"].name].error is None and by_name[digits["7"].name].labels
    errors = [c for c in panel.cards if c.answer is None]
    assert len(errors) == 2
    assert all(c.thumbnail.text() == "no image" for c in errors)


def test_picking_a_checkpoint_answers_with_it(window, qtbot, run_dir, digits):
    panel = window.try_panel
    with qtbot.waitSignal(panel.model_ready, timeout=RUN_TIMEOUT_MS):
        window.views.setCurrentWidget(panel)
    texts = [panel.model_box.itemText(i) for i in range(panel.model_box.count())]
    assert texts[0] == "Final model" and len(texts) == 3
    with qtbot.waitSignal(panel.model_ready, timeout=RUN_TIMEOUT_MS) as ready:
        panel.model_box.setCurrentIndex(2)
        panel.model_box.activated.emit(2)
    assert "epoch 1" in ready.args[0].lower()
    assert panel.predictor.path.name == "epoch-0001.keras"


def test_a_folder_is_answered_in_a_sortable_table_and_exported(
    window, qtbot, run_dir, digits, tmp_path, monkeypatch
):
    folder = next(iter(digits.values())).parent
    (folder / "inner").mkdir()
    shutil.copy(digits["7"], folder / "inner" / "again.png")
    (folder / "readme.txt").write_text("not an image")
    panel = window.try_panel
    with qtbot.waitSignal(panel.folder_done, timeout=RUN_TIMEOUT_MS) as done:
        assert drop_on(window.canvas.viewport(), [folder])
    assert panel.tabs.currentIndex() == 1
    result = done.args[0]
    assert not result.stopped
    assert len(result.predictions) == 5  # four digits and the copy; text files are not images
    assert panel.table_model.rowCount() == 5
    assert "Answered 5 images" in panel.progress.text()

    header = panel.table.horizontalHeader()
    qtbot.mouseClick(header.viewport(), LEFT, pos=QPoint(header.sectionViewportPosition(2) + 5,
                                                         header.height() // 2))
    proxy = panel.table.model()
    shown = [proxy.index(r, 2).data(Qt.ItemDataRole.UserRole) for r in range(5)]
    assert shown in (sorted(shown), sorted(shown, reverse=True))

    target = tmp_path / "answers.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    qtbot.mouseClick(panel.export_button, LEFT)
    with target.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert len(rows) == 6
    assert {Path(row[0]).name for row in rows[1:]} == {p.name for p in digits.values()} | {
        "again.png"}


def test_images_and_a_folder_picked_in_dialogs_are_answered(window, qtbot, run_dir, digits,
                                                           monkeypatch):
    panel = window.try_panel
    with qtbot.waitSignal(panel.model_ready, timeout=RUN_TIMEOUT_MS):
        window.views.setCurrentWidget(panel)
    picked = [str(digits["7"]), str(digits["3"])]
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a, **k: (picked, ""))
    with qtbot.waitSignal(panel.answered, timeout=RUN_TIMEOUT_MS) as answered:
        qtbot.mouseClick(panel.add_button, LEFT)
    assert [p.source for p in answered.args[0]] == picked
    assert len(panel.cards) == 2 and all(card.answer is not None for card in panel.cards)

    folder = digits["7"].parent
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))
    with qtbot.waitSignal(panel.folder_done, timeout=RUN_TIMEOUT_MS) as done:
        qtbot.mouseClick(panel.folder_button, LEFT)
    assert {Path(p.source).name for p in done.args[0].predictions} == {
        p.name for p in digits.values()}
    assert panel.table_model.rowCount() == 4


def test_cancel_stops_a_folder_and_keeps_what_was_answered(window, qtbot, run_dir, tmp_path):
    folder = tmp_path / "many"
    folder.mkdir()
    x, _ = load_arrays(DatasetChoice())
    for index in range(600):
        Image.fromarray(x[index, ..., 0]).save(folder / f"{index:04d}.png")
    panel = window.try_panel
    with qtbot.waitSignal(panel.model_ready, timeout=RUN_TIMEOUT_MS):
        window.views.setCurrentWidget(panel)
    with qtbot.waitSignal(panel.folder_done, timeout=RUN_TIMEOUT_MS) as done:
        panel.answer_folders([folder])
        assert panel.cancel_button.isEnabled()
        qtbot.mouseClick(panel.cancel_button, LEFT)
    result = done.args[0]
    assert result.stopped
    assert len(result.predictions) < 600
    assert panel.table_model.rowCount() == len(result.predictions)
    assert panel.progress.text().startswith("Stopped after")
    assert not panel.cancel_button.isEnabled()


def test_a_second_folder_replaces_the_first_whose_answers_never_show(
    window, qtbot, run_dir, digits, tmp_path, monkeypatch, started_workers, gate
):
    from studio.gui.inference import try_panel

    first, second = tmp_path / "first", digits["7"].parent
    first.mkdir()
    shutil.copy(digits["3"], first / "three.png")
    real_image_files = try_panel.image_files

    def held(folder, stop):
        if folder == first:
            gate.hold()  # the first folder is being looked through when the second comes
        return real_image_files(folder, stop)

    monkeypatch.setattr(try_panel, "image_files", held)
    panel = window.try_panel
    with qtbot.waitSignal(panel.model_ready, timeout=RUN_TIMEOUT_MS):
        window.views.setCurrentWidget(panel)
    done = []
    panel.folder_done.connect(done.append)
    panel.answer_folders([first])
    first_batch = started_workers[-1]
    qtbot.waitUntil(gate.reached.is_set)
    with qtbot.waitSignal(panel.folder_done, timeout=RUN_TIMEOUT_MS):
        panel.answer_folders([second])
    gate.open()
    first_batch.wait()
    QCoreApplication.sendPostedEvents()  # whatever the first folder's job still reported
    # folder_done comes with the second job's result; its done signal is sent just after it
    # from the job's thread, so the panel is idle only once that has arrived too.
    qtbot.waitUntil(lambda: not panel.busy())
    assert [len(result.predictions) for result in done] == [4]
    assert panel.table_model.rowCount() == 4


def test_a_pasted_image_is_answered_and_explained_with_a_heat_map(window, qtbot, run_dir,
                                                                  digits):
    panel, view = window.try_panel, window.try_panel.explain
    with qtbot.waitSignal(panel.model_ready, timeout=RUN_TIMEOUT_MS):
        window.views.setCurrentWidget(panel)
    QGuiApplication.clipboard().setImage(QImage(str(digits["7"])))
    panel.top_k.setValue(3)
    with qtbot.waitSignal(view.explained, timeout=RUN_TIMEOUT_MS), \
            qtbot.waitSignal(panel.answered, timeout=RUN_TIMEOUT_MS) as answered:
        panel.tabs.setFocus()
        qtbot.keyClick(panel.tabs, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    (prediction,) = answered.args[0]
    assert prediction.source.startswith("Pasted image")
    assert prediction.error is None and len(prediction.labels) == 3
    # no file holds a pasted image: it is explained from the pixels the model was shown
    assert view.prediction is prediction and view.explanation.overlay.shape == (28, 28, 3)
    assert view.explanation.maps.shape == (8, 26, 26)
    assert not view.heat.pixmap().isNull() and view.heat.pixmap().width() > 1


def test_a_model_file_without_preprocessing_asks_how_images_were_prepared(
    window, qtbot, run_dir, digits, tmp_path, monkeypatch
):
    bare = tmp_path / "bare.keras"
    shutil.copy(run_dir / "model.keras", bare)
    asked = []

    def answer(dialog):
        asked.append((dialog.height_box.value(), dialog.width_box.value(),
                      dialog.color.currentData()))
        return True

    monkeypatch.setattr(PreprocessingDialog, "exec", answer)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(bare), ""))
    panel = window.try_panel
    window.views.setCurrentWidget(panel)
    with qtbot.waitSignal(panel.model_ready, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(panel.open_button, LEFT)
    qtbot.waitUntil(lambda: panel.predictor is not None and panel.predictor.path == bare,
                    timeout=RUN_TIMEOUT_MS)
    assert asked == [(28, 28, "grayscale")]  # filled in from the model's input, then asked
    with qtbot.waitSignal(panel.answered, timeout=RUN_TIMEOUT_MS) as answered:
        panel.add_paths([digits["7"]])
    assert answered.args[0][0].error is None


def test_a_file_that_is_not_a_model_says_so(window, qtbot, tmp_path, monkeypatch):
    fake = tmp_path / "fake.keras"
    fake.write_bytes(np.arange(256, dtype=np.uint8).tobytes())
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(fake), ""))
    panel = window.try_panel
    window.views.setCurrentWidget(panel)
    qtbot.mouseClick(panel.open_button, LEFT)
    qtbot.waitUntil(lambda: "fake.keras" in panel.status.text()
                    and "Loading" not in panel.status.text(), timeout=RUN_TIMEOUT_MS)
    assert panel.predictor is None
    assert "#b3261e" in panel.status.styleSheet()


def copied_diagnostics(window) -> str:
    """What Help > Copy Diagnostics puts on the clipboard."""
    action = next(a for a in window.help.menu.actions()
                  if a.text().replace("&", "").startswith("Copy Diagnostics"))
    action.trigger()
    return QGuiApplication.clipboard().text()


def test_a_model_that_fails_to_load_is_the_last_error_in_the_diagnostics(
        window, qtbot, tmp_path, monkeypatch):
    fake = tmp_path / "fake.keras"
    fake.write_bytes(b"not a model")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(fake), ""))
    panel = window.try_panel
    window.views.setCurrentWidget(panel)
    qtbot.mouseClick(panel.open_button, LEFT)
    qtbot.waitUntil(lambda: "#b3261e" in panel.status.styleSheet(), timeout=RUN_TIMEOUT_MS)
    assert "fake.keras" in panel.status.text()

    assert f"\nLast error: Try: {panel.status.text()}\n" in copied_diagnostics(window)


def test_an_image_that_cannot_be_read_is_the_last_error_in_the_diagnostics(
        window, qtbot, run_dir, tmp_path):
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n and then nothing")
    panel = window.try_panel
    with qtbot.waitSignal(panel.answered, timeout=RUN_TIMEOUT_MS) as answered:
        assert drop_on(panel, [broken])
    (prediction,) = answered.args[0]
    assert prediction.error

    assert f"\nLast error: Try: {broken}: {prediction.error}\n" in copied_diagnostics(window)


def test_a_drop_with_no_trained_model_explains_what_to_do(window, qtbot, digits):
    panel = window.try_panel
    assert drop_on(window.canvas.viewport(), [digits["7"]])
    qtbot.waitUntil(lambda: "train a model" in panel.status.text(), timeout=RUN_TIMEOUT_MS)
    assert panel.cards == []


def test_clicking_an_answer_shows_why_with_a_heat_map_activations_and_filters(
    window, qtbot, run_dir, digits
):
    panel = window.try_panel
    view = panel.explain
    with qtbot.waitSignal(view.explained, timeout=RUN_TIMEOUT_MS):
        assert drop_on(window.canvas.viewport(), [digits["7"], digits["3"]])
    with qtbot.waitSignal(view.explained, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(panel.cards[0], LEFT)  # the newest card: the "3"
    explanation = view.explanation
    assert view.prediction.source == str(digits["3"])
    assert view.title.text().startswith("<b>Why digit")
    assert explanation.layer == "conv2d_1" and explanation.method in ("grad-cam", "hires-cam")
    assert explanation.overlay.shape[-1] == 3 and explanation.maps.shape == (8, 26, 26)
    assert explanation.filters.shape == (8, 3, 3, 1)
    for label in (view.heat, view.maps, view.filters):
        assert not label.pixmap().isNull() and label.pixmap().width() > 1
    assert [view.class_box.itemText(i) for i in range(view.class_box.count())] == \
        view.prediction.labels
    with qtbot.waitSignal(view.explained, timeout=RUN_TIMEOUT_MS):
        view.class_box.setCurrentIndex(1)
        view.class_box.activated.emit(1)  # the heat map of the second most likely class
    assert view.class_box.currentText() == view.prediction.labels[1]


def test_clicks_while_an_explanation_works_wait_and_only_the_last_one_is_explained(
    window, qtbot, run_dir, digits, monkeypatch, gate
):
    from studio.gui.inference import explain_view

    running, most, explained = [], [], []
    real = explain_view.explain_image

    def counted(model, x, thumbnail, *args):
        running.append(thumbnail)
        most.append(len(running))
        gate.hold()  # the first explanation works until the test has clicked the others
        try:
            result = real(model, x, thumbnail, *args)
        finally:
            running.remove(thumbnail)
        explained.append((result, thumbnail))
        return result

    panel, view = window.try_panel, window.try_panel.explain
    with qtbot.waitSignal(view.explained, timeout=RUN_TIMEOUT_MS):
        assert drop_on(window.canvas.viewport(), list(digits.values()))
    # answers may arrive in more than one batch, each showing the first card again: let the
    # drop's answers and explanations end before counting those the clicks start
    qtbot.waitUntil(lambda: not (panel.busy() or view.job.busy()), timeout=RUN_TIMEOUT_MS)
    monkeypatch.setattr(explain_view, "explain_image", counted)
    with qtbot.waitSignal(view.explained, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(panel.cards[0], LEFT)
        qtbot.waitUntil(gate.reached.is_set, timeout=RUN_TIMEOUT_MS)
        for card in panel.cards[1:3]:
            qtbot.mouseClick(card, LEFT)
        gate.open()
    qtbot.waitUntil(lambda: not view.job.busy(), timeout=RUN_TIMEOUT_MS)
    last = panel.cards[2].prediction
    assert view.prediction is last
    assert max(most) == 1  # never two at once
    assert len(explained) == 2  # the first click's, then the newest; the middle one skipped
    shown, thumbnail = explained[-1]
    assert shown is view.explanation and thumbnail is last.thumbnail
    assert view.note.text() != "Working out why…"


def test_a_table_model_answers_an_example_typed_in_its_form(window, qtbot, tmp_path):
    rng = np.random.default_rng(0)
    rows = [(a, b, "big" if a + b > 0 else "small") for a, b in rng.normal(size=(120, 2))]
    table = tmp_path / "sizes.csv"
    table.write_text("width,height,size\n" + "\n".join(f"{a:.3f},{b:.3f},{c}"
                                                       for a, b, c in rows))
    project = Project(name="Sizes", graph=Graph.from_chain([
        Node("input_1", "Input", {"shape": [2]}),
        Node("dense_1", "Dense", {"units": 2, "activation": "softmax"}),
    ]))
    project.dataset = DatasetChoice(source="csv", path=str(table), label_column="size")
    project.training.epochs = 1
    run = train(project, runs_of(window)).run_dir
    panel = window.try_panel
    with qtbot.waitSignal(panel.model_ready, timeout=RUN_TIMEOUT_MS):
        window.views.setCurrentWidget(panel)
    assert panel.tabs.currentIndex() == 2 and not panel.tabs.isTabVisible(1)
    assert list(panel.form_fields) == ["width", "height"]
    qtbot.mouseClick(panel.form_fields["width"], LEFT)
    qtbot.keyClicks(panel.form_fields["width"], "2.5")  # height left empty: the mean
    with qtbot.waitSignal(panel.answered, timeout=RUN_TIMEOUT_MS) as answered:
        qtbot.mouseClick(panel.findChild(QPushButton, "try-predict"), LEFT)
    (prediction,) = answered.args[0]
    prep = json.loads((run / "preprocessing.json").read_text())
    model = keras.saving.load_model(run / "model.keras")
    expected = np.asarray(model(preprocess_rows(prep, [{"width": "2.5", "height": ""}])))[0]
    assert prediction.labels[0] == prep["class_names"][int(expected.argmax())]
    assert prediction.probabilities[0] == pytest.approx(expected.max(), abs=1e-5)
    assert panel.cards[0].answer is not None


def test_a_new_card_restyles_only_the_cards_whose_choice_changed(qtbot, monkeypatch):
    cards = ImageCards(lambda: None)
    qtbot.addWidget(cards)
    styled: list[ResultCard] = []
    real = ResultCard.setStyleSheet

    def counted(card, style):
        styled.append(card)
        real(card, style)

    monkeypatch.setattr(ResultCard, "setStyleSheet", counted)
    for index in range(6):
        styled.clear()
        cards.add([Prediction(f"{index}.png", ["cat"], [1.0], task="classification")])
        # the new card (made plain, then chosen) and the one chosen before it
        assert styled == [cards.cards[0], cards.cards[0], *cards.cards[1:2]]
    assert [card.styleSheet() == SELECTED_STYLE for card in cards.cards] == [True] + [False] * 5


def test_cards_flow_into_the_width_the_why_pane_leaves(qtbot):
    """Beside the Why pane a classifier's cards stand in one column; with the pane put away
    (a model whose answers get no explanation) they flow into columns, and back again."""
    cards = ImageCards(lambda: None)
    qtbot.addWidget(cards)
    cards.resize(1300, 700)
    cards.show()
    cards.add([Prediction(f"{index}.png", ["cat"], [1.0], task="classification")
               for index in range(4)])
    qtbot.waitUntil(lambda: cards.cards[0].isVisible() and cards.why.width() > 0)
    assert cards.card_layout.columns() == 1
    laid = cards.card_layout
    assert [laid.itemAt(index).widget() for index in range(laid.count())] == cards.cards
    cards.expect("detection")
    qtbot.waitUntil(lambda: cards.card_layout.columns() > 1)
    assert not cards.why.isVisible() and cards.not_explained.isVisible()
    first, second = cards.cards[:2]
    assert first.y() == second.y() and second.x() >= first.x() + first.width()
    cards.expect("classification")
    qtbot.waitUntil(lambda: cards.card_layout.columns() == 1)
    assert cards.why.isVisible() and not cards.not_explained.isVisible()
