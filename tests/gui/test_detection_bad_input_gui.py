"""A model and a dataset of different tasks, or a COCO file that cannot be read, in the window:
the model's summary and the Start button say so in one plain line, and the Data tab says why
it cannot read the file, though it was never shown (tests/core/test_detection_bad_input.py has
the command's answers). A project opened on a CSV is read without the Data tab too."""

from __future__ import annotations

import pytest

from studio.core.model.graph import Graph, Node
from studio.core.project.document import DatasetChoice, Project
from studio.core.project.templates import small_detector
from studio.gui.shell.app import create_application
from studio.gui.shell.main_window import MainWindow
from tests.core.test_detection_bad_input import coco_pointing_nowhere
from tests.core.test_detection_health import yolo
from tests.gui.support import RUN_TIMEOUT_MS
from tests.helpers import digit_folder, tiny_project


def detector_on_class_folders(tmp_path) -> tuple[Project, str]:
    project = Project(name="det", graph=small_detector((64, 64, 3), classes=2))
    project.dataset = DatasetChoice(source="folder",
                                    path=str(digit_folder(tmp_path / "digits", per_class=3)))
    return project, ("detection_head_1: The model ends in a DetectionHead, which finds boxes, "
                     "but digits is a classification dataset (one class per sample)")


def classifier_on_a_detection_folder(tmp_path) -> tuple[Project, str]:
    project = tiny_project()
    boxes = yolo(tmp_path / "boxes", {"a": "0 0.5 0.5 0.2 0.2\n"})
    project.dataset = DatasetChoice(source="folder", path=str(boxes))
    return project, (f"{boxes} is a detection dataset (YOLO labels), not a folder of images "
                     "per class: choose it as a detection dataset.")


def coco_file_pointing_nowhere(tmp_path) -> tuple[Project, str]:
    project = Project(name="det", graph=small_detector((64, 64, 3), classes=1))
    labels = coco_pointing_nowhere(tmp_path / "coco")
    project.dataset = DatasetChoice(source="detection", path=str(tmp_path / "coco"),
                                    task="detection")
    return project, (f"{labels}: 1 annotation points to an image id the file does not list "
                     "(first: 99).")


@pytest.mark.parametrize("case", [detector_on_class_folders, classifier_on_a_detection_folder,
                                  coco_file_pointing_nowhere])
def test_a_dataset_that_cannot_train_the_model_is_said_in_one_line(qtbot, dialogs, tmp_path,
                                                                   case):
    project, line = case(tmp_path)
    create_application()
    window = MainWindow(project)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.views.currentIndex() == 0  # the Data tab not shown: its panel reads all the same
    summary = window.model_list.summary
    qtbot.waitUntil(lambda: line in summary.text(), timeout=RUN_TIMEOUT_MS)  # read by a job
    start = window.training.start_button
    assert not start.isEnabled() and start.toolTip().startswith(f"Cannot start: {line}")
    assert "\n" not in summary.text() and "Traceback" not in summary.text()
    assert dialogs == []
    if project.dataset.source == "detection":  # the Data tab says why it cannot read it
        assert window.data_panel.status.text() == line


def test_a_project_opened_on_a_csv_is_read_without_its_data_tab(qtbot, dialogs, tmp_path):
    table = tmp_path / "sizes.csv"
    rows = "".join(f"{i},{i % 3},{'big' if i % 2 else 'small'}\n" for i in range(40))
    table.write_text("width,height,size\n" + rows)
    project = Project(name="Sizes", graph=Graph.from_chain([
        Node("input_1", "Input", {"shape": [2]}),
        Node("dense_1", "Dense", {"units": 2, "activation": "softmax"})]))
    project.dataset = DatasetChoice(source="csv", path=str(table), label_column="size")
    create_application()
    window = MainWindow(project)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    start = window.training.start_button
    qtbot.waitUntil(start.isEnabled, timeout=RUN_TIMEOUT_MS)  # it said "being read" for ever
    assert window.model_list.summary.text().endswith("ready to train")
    assert window.views.currentIndex() == 0
