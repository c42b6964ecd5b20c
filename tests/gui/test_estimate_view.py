"""The estimate view: numbers for the demo project, "Use batch size N" when the batch does not
fit a fake small GPU, and "Measure time per epoch" on a worker thread with Cancel."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from studio.core.build.estimate import MicroRun
from studio.core.hardware.devices import CpuInfo, Devices, GpuInfo, StaticDiscovery
from studio.core.project.document import DeviceChoice
from studio.core.project.templates import demo_project
from studio.gui.shell.app import create_application
from studio.gui.training import estimate_view
from studio.gui.training.estimate_view import EstimateView
from studio.gui.widgets.document import ProjectDocument
from studio.gui.widgets.jobs import shutdown_jobs
from tests.gui.support import RUN_TIMEOUT_MS
from tests.helpers import tiny_project

MB = 2**20
CPU = CpuInfo("Test CPU", cores=2, memory_bytes=16 * 2**30, bfloat16=False)


def small_gpu(memory: int) -> Devices:
    return Devices(CPU, [GpuInfo(0, "Small GPU", memory, (8, 0))])


VIEWS: list[EstimateView] = []


@pytest.fixture(autouse=True)
def shut_down_views():
    yield
    for view in VIEWS:
        shutdown_jobs(view)
    VIEWS.clear()


def make_view(qtbot, project, devices: Devices) -> EstimateView:
    """The view on ``project``, shown, once the (fake) devices are found."""
    create_application()
    view = EstimateView(ProjectDocument(project), StaticDiscovery(devices))
    view.look_for_devices()
    VIEWS.append(view)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitUntil(lambda: not view.discovering.busy())
    return view


def test_the_view_shows_the_demo_projects_numbers(qtbot):
    view = make_view(qtbot, demo_project(), Devices(CPU))
    assert view.params.text() == "257,162"
    assert "MFLOPs forward" in view.flops.text()
    assert view.part_values["weights"].text() == "1,005 KB"  # 257,162 float32 values
    assert view.part_values["optimizer"].text() == "1.96 MB"  # Adam: two per weight
    assert "Memory at batch size 32 on the CPU" == view.memory_box.title()
    assert "RAM available" in view.capacity.text()
    assert view.largest.text().startswith("Largest batch size that fits:")
    assert view.use_batch.isHidden()


def test_the_numbers_follow_edits(qtbot):
    view = make_view(qtbot, demo_project(), Devices(CPU))
    before = view.part_values["activations"].text()
    view.doc.edit("Set batch size", lambda p: setattr(p.training, "batch_size", 128))
    assert view.memory_box.title() == "Memory at batch size 128 on the CPU"
    assert view.part_values["activations"].text() != before


def test_use_batch_size_appears_when_the_batch_does_not_fit_and_edits_once(qtbot):
    project = demo_project()
    project.training.device = DeviceChoice(kind="gpu", gpus=[0])
    project.training.batch_size = 4096
    view = make_view(qtbot, project, small_gpu(600 * MB))
    assert view.memory_box.title() == "Memory at batch size 4,096 on GPU 0"
    assert "of 600 MB on GPU 0" in view.capacity.text()
    largest = view.estimate.largest_batch_size
    assert 1 < largest < 4096
    assert view.use_batch.isVisible()
    assert view.use_batch.text() == f"Use batch size {largest:,}"
    steps = view.doc.undo_stack.count()
    qtbot.mouseClick(view.use_batch, Qt.MouseButton.LeftButton)
    assert view.doc.project.training.batch_size == largest
    assert view.doc.undo_stack.count() == steps + 1
    assert view.use_batch.isHidden() and view.estimate.fits
    view.doc.undo_stack.undo()
    assert view.doc.project.training.batch_size == 4096 and view.use_batch.isVisible()


def test_not_even_one_sample_fits_says_so_without_a_button(qtbot):
    project = demo_project()
    project.training.device = DeviceChoice(kind="gpu", gpus=[0])
    view = make_view(qtbot, project, small_gpu(100 * MB))
    assert "Even batch size 1 does not fit" in view.largest.text()
    assert view.use_batch.isHidden()


def test_measure_runs_and_shows_the_time_per_epoch(qtbot):
    view = make_view(qtbot, tiny_project(), Devices(CPU))
    assert view.measure.isEnabled()
    qtbot.mouseClick(view.measure, Qt.MouseButton.LeftButton)
    assert not view.measure.isEnabled() and view.cancel.isVisible()
    qtbot.waitUntil(lambda: not view.measuring.busy(), timeout=RUN_TIMEOUT_MS)
    assert set(view.runs) == {"CPU"} and view.runs["CPU"].seconds_per_step > 0
    assert view.times.text().startswith("CPU: ") and "per epoch" in view.times.text()
    assert view.recommendation.isHidden()  # no GPU to compare with
    assert view.measure.isEnabled() and view.cancel.isHidden()
    view.doc.edit("Set batch size", lambda p: setattr(p.training, "batch_size", 32))
    assert "measured before the last change" in view.times.text()


class GatedMeasure:
    """Stands in for measure_epoch_time: reports a step, then waits for stop (or returns a
    fixed time per step when ``seconds`` has one for the device)."""

    def __init__(self, seconds: dict[str, float]) -> None:
        self.seconds = seconds

    def __call__(self, project, info, batch_size, names, on_event, stop, steps=5):
        on_event({"type": "progress", "what": "Measuring", "done": 1, "total": steps + 1})
        per_step = self.seconds.get(names[0])
        if per_step is None:
            stop.wait(30)
        return MicroRun(tuple(names), batch_size, per_step, 100, stopped=stop.is_set())


def test_cancel_ends_measuring(qtbot, monkeypatch):
    monkeypatch.setattr(estimate_view, "measure_epoch_time", GatedMeasure({}))
    view = make_view(qtbot, tiny_project(), Devices(CPU))
    qtbot.mouseClick(view.measure, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "step 1 of 6" in view.progress.format())
    qtbot.mouseClick(view.cancel, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not view.measuring.busy())
    assert view.times.text() == "CPU: cancelled before a step was timed"


def test_with_a_cpu_and_a_gpu_both_are_measured_and_one_recommended(qtbot, monkeypatch):
    monkeypatch.setattr(estimate_view, "measure_epoch_time",
                        GatedMeasure({"/cpu:0": 0.5, "/gpu:0": 0.1}))
    view = make_view(qtbot, tiny_project(), small_gpu(8 * 2**30))
    qtbot.mouseClick(view.measure, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not view.measuring.busy())
    assert set(view.runs) == {"CPU", "GPU 0"}
    assert view.recommendation.isVisible()
    assert view.recommendation.text().startswith("Use GPU 0: 5.0× faster than the CPU")
