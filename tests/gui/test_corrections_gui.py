"""Correcting an image-folder dataset from results: a wrong Try card added to the right class,
a folder's least sure answers sent to a class, Evaluate's images relabelled or flagged (each
one undoable step), Train again, and the Runs dock's dataset changes between two runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication, QImage
from PySide6.QtWidgets import QMenu, QToolButton

from studio.core.model.graph import Graph, Node
from studio.core.project.document import DatasetChoice, Project, load_project, save_project
from studio.core.runs import folders as runs
from studio.core.runs.folders import read_fingerprint
from studio.gui.inference.corrections import FLAG_MARK, NO_FILE
from studio.gui.inference.evaluation_panel import evaluated_files
from studio.gui.widgets.dataset_edits import NOT_A_FOLDER
from tests.gui.support import RUN_TIMEOUT_MS, copied_run, drop_on, runs_of
from tests.gui.test_dataset_editor_gui import click_class, open_editor, select_images
from tests.helpers import digit_folder
from tests.run_folders import write_run

LEFT = Qt.MouseButton.LeftButton


def digits_project(digits: Path) -> Project:
    """A small classifier of the 20 × 20 grey digits in the image folder ``digits``."""
    project = Project(name="Digits", graph=Graph.from_chain([
        Node("input_1", "Input", {"shape": [20, 20, 1]}), Node("flatten_1", "Flatten", {}),
        Node("dense_1", "Dense", {"units": 2, "activation": "softmax"})]))
    project.dataset = DatasetChoice(source="folder", path=str(digits), image_size=[20, 20],
                                    color="grayscale")
    project.training.epochs = 1
    return project


@pytest.fixture(scope="module")
def folder_run(tmp_path_factory) -> Path:
    """A one-epoch run of ``digits_project`` on a folder of two classes (treat as
    read-only; ``the_run_on`` copies it)."""
    from studio.core.training.trainer import train

    folder = tmp_path_factory.mktemp("folder-run")
    return train(digits_project(digit_folder(folder / "digits")), folder / "runs").run_dir


def the_run_on(window, folder_run: Path, tmp_path: Path) -> Path:
    """Open ``digits_project`` on a copy of the run's digits in the window, with a copy of
    the run (reading that copy) among its runs; the copied digits."""
    digits = tmp_path / "digits"
    shutil.copytree(folder_run.parent.parent / "digits", digits)
    window.doc.replace(digits_project(digits), None)
    run = copied_run(folder_run, runs_of(window))
    project = load_project(run / runs.PROJECT_FILE)
    project.dataset.path = str(digits)
    save_project(project, run / runs.PROJECT_FILE, runs.runs_home(run))
    return digits


def pick(menu: QMenu, text: str) -> None:
    """Open ``menu`` (listing its entries) and choose ``text``."""
    menu.aboutToShow.emit()
    next(action for action in menu.actions() if action.text() == text).trigger()


def files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if not p.name.startswith(".")}


def answered_by_the_cnn(window, cnn_run, paths: list[Path], qtbot) -> None:
    """Have the Try tab answer ``paths`` with the small CNN's run."""
    copied_run(cnn_run, runs_of(window))
    panel = window.try_panel
    if any(path.is_dir() for path in paths):
        with qtbot.waitSignal(panel.folder_done, timeout=RUN_TIMEOUT_MS):
            assert drop_on(panel, paths)
    else:
        with qtbot.waitSignal(panel.answered, timeout=RUN_TIMEOUT_MS):
            assert drop_on(panel, paths)


def test_a_wrong_card_goes_into_the_right_class_and_undo_takes_it_out(
        window, qtbot, cnn_run, tmp_path):
    digits = digit_folder(tmp_path / "digits", per_class=3)
    window.doc.replace(digits_project(digits), None)
    wrong = tmp_path / "new" / "a one.png"
    wrong.parent.mkdir()
    Image.new("L", (20, 20), 200).save(wrong)
    answered_by_the_cnn(window, cnn_run, [wrong], qtbot)
    panel, before = window.try_panel, files(digits / "1")
    button = panel.cards[0].findChild(QToolButton, "try-add-card")
    assert button.isEnabled()
    with qtbot.waitSignal(panel.corrections.dataset.said, timeout=10_000):
        pick(button.menu(), "1")
    added = files(digits / "1") - before
    assert len(added) == 1 and wrong.is_file()  # copied, never moved
    assert (digits / "1" / added.pop()).read_bytes() == wrong.read_bytes()
    note = panel.corrections.note
    assert "1 image added to '1'" in note.label.text() and note.train_button.isVisible()
    assert window.undo_action.text() == "&Undo Add 1 image to '1'"
    window.undo_action.trigger()
    assert files(digits / "1") == before
    window.redo_action.trigger()
    assert len(files(digits / "1")) == len(before) + 1
    QGuiApplication.clipboard().setImage(QImage(str(wrong)))
    window.views.setCurrentWidget(panel)
    with qtbot.waitSignal(panel.answered, timeout=RUN_TIMEOUT_MS):
        panel.tabs.setFocus()
        qtbot.keyClick(panel.tabs, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    pasted = panel.cards[0].findChild(QToolButton, "try-add-card")
    assert not pasted.isEnabled() and pasted.toolTip() == NO_FILE


def test_where_the_data_is_no_image_folder_the_corrections_say_why(window, qtbot, cnn_run,
                                                                   tmp_path):
    image = digit_folder(tmp_path / "digits", per_class=1) / "0" / "0.png"
    answered_by_the_cnn(window, cnn_run, [image], qtbot)  # the demo project's MNIST
    button = window.try_panel.cards[0].findChild(QToolButton, "try-add-card")
    assert not button.isEnabled() and button.toolTip() == NOT_A_FOLDER
    shown = window.try_panel.corrections.folder_button
    assert not shown.isEnabled() and shown.toolTip() == NOT_A_FOLDER


def test_a_folders_least_sure_answers_go_to_a_class_in_one_step(window, qtbot, cnn_run,
                                                               tmp_path):
    digits = digit_folder(tmp_path / "digits", per_class=2)
    window.doc.replace(digits_project(digits), None)
    new = tmp_path / "new"
    new.mkdir()
    rng = np.random.default_rng(1)  # not the digits' seed: no image is in the dataset
    for index in range(8):
        Image.fromarray(rng.integers(0, 256, (20, 20), dtype=np.uint8)).save(
            new / f"{index}.png")
    answered_by_the_cnn(window, cnn_run, [new], qtbot)
    folder = window.try_panel.folder
    rows = folder.table_model.rows
    assert len(rows) == 8 and folder.proxy.rowCount() == 8
    median = sorted(row.probabilities[0] for row in rows)[4]
    percent = min(int(median * 100) + 1, 100)
    qtbot.mouseClick(folder.low_only, LEFT, pos=QPoint(5, folder.low_only.height() // 2))
    folder.threshold.selectAll()
    qtbot.keyClicks(folder.threshold, str(percent))
    assert folder.threshold.value() == percent
    low = [row.source for row in rows if row.probabilities[0] < percent / 100]
    assert 4 <= len(low) and [row.source for row in folder.shown_rows()] == low
    assert folder.shown.text() == f"{len(low)} of 8 answers shown"
    button = window.try_panel.corrections.folder_button
    assert button.isEnabled() and f"{len(low)} images shown" in button.toolTip()
    with qtbot.waitSignal(window.try_panel.corrections.dataset.said, timeout=10_000):
        pick(button.menu(), "0")
    assert len(files(digits / "0")) == 2 + len(low)
    window.undo_action.trigger()  # one step
    assert files(digits / "0") == {"0.png", "1.png"}


def test_the_datasets_own_images_sent_to_a_class_are_moved_not_copied(window, qtbot,
                                                                        cnn_run, tmp_path):
    digits = digit_folder(tmp_path / "digits", per_class=3)
    window.doc.replace(digits_project(digits), None)
    answered_by_the_cnn(window, cnn_run, [digits / "0"], qtbot)
    button = window.try_panel.corrections.folder_button
    with qtbot.waitSignal(window.try_panel.corrections.dataset.said, timeout=10_000):
        pick(button.menu(), "1")
    assert files(digits / "0") == set()
    assert files(digits / "1") == {"0.png", "1.png", "2.png", "0-2.png", "1-2.png", "2-2.png"}
    assert "3 images of the dataset moved to '1'." in \
        window.try_panel.corrections.note.label.text()
    window.undo_action.trigger()
    assert files(digits / "0") == files(digits / "1") == {"0.png", "1.png", "2.png"}


def evaluated(window, qtbot):
    """Show the Evaluate tab, wait for its run, click Evaluate and wait for the results."""
    panel = window.evaluation
    window.views.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.evaluate_button.isEnabled(), timeout=10_000)
    with qtbot.waitSignal(panel.evaluated, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(panel.evaluate_button, LEFT)
    qtbot.waitUntil(lambda: not panel.busy())
    return panel


def first_cell_image(qtbot, panel):
    """Click a cell of the confusion matrix that holds images, then its first image; the
    item and its file."""
    view, counts = panel.confusion, panel.evaluation.confusion
    row, column = next((r, c) for r in range(len(counts)) for c in range(len(counts))
                       if counts[r][c])
    index = view.model().index(row, column)
    qtbot.mouseClick(view.viewport(), LEFT, pos=view.visualRect(index).center())
    grid = panel.cell_grid
    qtbot.waitUntil(lambda: grid.count() == counts[row][column] and grid.pending() == 0)
    item = grid.item(0)
    qtbot.mouseClick(grid.viewport(), LEFT, pos=grid.visualItemRect(item).center())
    assert grid.selectedItems() == [item]
    return item, panel.corrections.path(item)


def test_an_evaluated_image_is_relabelled_and_undo_moves_it_back(window, qtbot, folder_run,
                                                                 tmp_path):
    digits = the_run_on(window, folder_run, tmp_path)
    panel = evaluated(window, qtbot)
    corrections = panel.corrections
    assert not corrections.relabel_button.isEnabled()  # nothing chosen yet
    item, path = first_cell_image(qtbot, panel)
    true_class = path.parent.name
    other = "1" if true_class == "0" else "0"
    assert corrections.relabel_button.isEnabled()
    there = files(digits / other)  # a file of the same name among them: the move renames
    pick(corrections.relabel_button.menu(), other)
    (moved,) = files(digits / other) - there
    assert not path.exists() and (digits / other / moved).read_bytes() == \
        (folder_run.parent.parent / "digits" / true_class / path.name).read_bytes()
    assert item.text().endswith(f"now in '{other}'") and not item.isSelected()
    assert f"Move 1 image to '{other}'." in corrections.note.label.text()
    window.undo_action.trigger()
    assert path.is_file() and files(digits / other) == there
    assert "now in" not in item.text()
    window.redo_action.trigger()
    assert not path.exists() and "Redone: Move 1 image" in corrections.note.label.text()
    (digits / other / moved).unlink()  # gone outside the app: the step cannot be undone
    window.undo_action.trigger()
    assert "could not be undone" in corrections.note.label.text()
    assert window.doc.undo_stack.count() == 0 and files(digits / other) == there


def test_keys_relabel_the_chosen_images_to_the_class_of_that_number(window, qtbot,
                                                                    folder_run, tmp_path):
    digits = the_run_on(window, folder_run, tmp_path)
    panel = evaluated(window, qtbot)
    item, path = first_cell_image(qtbot, panel)
    qtbot.keyClick(panel.cell_grid, Qt.Key.Key_3)
    assert "there is no class 3" in panel.corrections.note.label.text() and path.is_file()
    other = "1" if path.parent.name == "0" else "0"  # the second class, or the first
    there = files(digits / other)
    qtbot.keyClick(panel.cell_grid, Qt.Key.Key_2 if other == "1" else Qt.Key.Key_1)
    assert not path.exists() and len(files(digits / other)) == len(there) + 1


def test_an_evaluated_image_is_flagged_from_its_context_menu(window, qtbot, folder_run,
                                                             tmp_path):
    digits = the_run_on(window, folder_run, tmp_path)
    panel = evaluated(window, qtbot)
    item, path = first_cell_image(qtbot, panel)
    actions = {action.text(): action for action in panel.cell_grid.actions()}
    assert not actions["Unflag"].isEnabled()
    actions["Flag"].trigger()
    assert (digits / ".flags.json").is_file() and path.name in (digits / ".flags.json"
                                                               ).read_text()
    assert item.text().startswith(FLAG_MARK) and actions["Unflag"].isEnabled()
    assert not actions["Flag"].isEnabled()
    window.undo_action.trigger()
    assert not (digits / ".flags.json").exists() and not item.text().startswith(FLAG_MARK)


def test_train_again_after_a_relabel_trains_and_the_runs_dock_shows_the_move(
        window, qtbot, folder_run, tmp_path):
    digits = the_run_on(window, folder_run, tmp_path)
    panel = evaluated(window, qtbot)
    item, path = first_cell_image(qtbot, panel)
    other = "1" if path.parent.name == "0" else "0"
    pick(panel.corrections.relabel_button.menu(), other)
    button = panel.corrections.note.train_button
    assert button.isVisible()
    with qtbot.waitSignal(window.training.run_started):
        qtbot.mouseClick(button, LEFT)
    qtbot.waitUntil(lambda: not window.training.is_running(), timeout=RUN_TIMEOUT_MS)
    assert window.training.outcome == "finished", window.training.last_error
    new_run = Path(window.training.run_dir)
    classes = read_fingerprint(new_run)
    assert classes is not None and sum(map(len, classes.values())) == 24
    history = window.runs
    window.runs_dock.show()
    qtbot.waitUntil(lambda: len(history.model.runs) == 2, timeout=10_000)
    history.select_runs([new_run.name])
    assert history.changes_action.isEnabled()  # with the run before it
    history.changes_action.trigger()
    assert f"'{other}': 1 moved in from '{path.parent.name}'" in \
        history.details.changes.toPlainText()
    assert digits.is_dir()


def compared(qtbot, history, before: str, after: str) -> str:
    """Click the Runs dock's Compare (two runs selected, ``before`` the older): the text of
    its Dataset tab, which says it goes from one to the other."""
    qtbot.mouseClick(history.findChild(QToolButton, "history-compare-button"), LEFT)
    text = history.details.changes.toPlainText()
    assert text.startswith(f"From {before} to {after}:")
    return text


def test_the_runs_dock_shows_how_the_dataset_changed_between_two_runs(window, qtbot):
    root = runs_of(window)
    first, second, third = (write_run(root, index) for index in range(3))
    runs.RunFolder(first, "Demo CNN").write_fingerprint(
        Path("digits"), {"cat": ["a", "b", "c"], "dog": ["d"]})
    runs.RunFolder(second, "Demo CNN").write_fingerprint(
        Path("digits"), {"cat": ["a", "b"], "dog": ["c", "d", "e"]})
    history = window.runs
    with qtbot.waitSignal(history.refreshed, timeout=10_000):
        window.runs_dock.show()
        window.runs_dock.raise_()
    history.select_runs([second.name, first.name])
    text = compared(qtbot, history, first.name, second.name)
    assert "1 image added, 0 images removed, 1 image moved between classes." in text
    assert "'cat': 1 moved out to 'dog'." in text
    assert "'dog': 1 added, 1 moved in from 'cat'." in text
    assert history.message.text() == ("The two runs have the same settings. Dataset: 1 image "
                                      "added, 0 removed, 1 moved between classes (see "
                                      "Dataset).")
    assert history.details.currentWidget() is history.details.changes  # all that differs
    history.select_runs([third.name])  # from the one before it, the second, in its menu
    assert history.changes_action in history.table.actions()
    history.changes_action.trigger()
    assert history.details.changes.toPlainText() == history.message.text() == (
        f"{third.name} recorded no fingerprint of its dataset (runs of data other than an "
        "image folder, and runs of earlier versions, keep none): how the dataset changed "
        "cannot be told.")


def test_evaluate_says_when_its_images_were_relabelled_or_deleted_until_undone_or_evaluated(
        window, qtbot, folder_run, tmp_path):
    digits = the_run_on(window, folder_run, tmp_path)
    panel = evaluated(window, qtbot)
    notice = panel.stale.parentWidget()
    assert notice.isHidden()
    item, path = first_cell_image(qtbot, panel)
    pick(panel.corrections.relabel_button.menu(), "1" if path.parent.name == "0" else "0")
    assert not notice.isHidden()
    assert "1 evaluated image was relabelled or deleted" in panel.stale.text()
    window.undo_action.trigger()
    assert notice.isHidden()
    window.redo_action.trigger()
    assert not notice.isHidden()

    editor = open_editor(qtbot, window, digits)  # an evaluated image deleted in the editor
    scored = {str(p) for p in evaluated_files(panel.evaluation)}
    name = next(n for n in editor.classes.names() if any(
        str(p) in scored and p.exists() for p in (digits / n).iterdir()))
    click_class(qtbot, editor, name)
    row = next(r for r, p in enumerate(editor.model.paths)
               if str(digits / p) in scored and (digits / p).exists())
    select_images(qtbot, editor, [row])
    qtbot.keyClick(editor.grid, Qt.Key.Key_Delete)
    assert "2 evaluated images were relabelled or deleted" in panel.stale.text()
    window.undo_action.trigger()
    assert "1 evaluated image was" in panel.stale.text()

    window.views.setCurrentWidget(panel)
    with qtbot.waitSignal(panel.evaluated, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(panel.again_button, LEFT)
    assert notice.isHidden() and not path.exists()
