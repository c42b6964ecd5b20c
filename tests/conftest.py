"""Shared test set-up: headless Qt, a private workspace, and no leaked threads."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if os.environ["QT_QPA_PLATFORM"] == "offscreen":
    # A desktop's screen (offscreen Qt's own is 800 × 800): windows open at their real size.
    SCREEN = Path(__file__).with_name("screen.json")
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={SCREEN}"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest  # noqa: E402

TESTS = Path(__file__).parent
LONGEST_FILES = ("core/test_search_ray.py", "gui/test_training_gui.py", "gui/test_try_panel.py")
"""Long test files, run first. ``make test`` hands whole files to its two workers in
collection order (``--dist loadfile --no-loadscope-reorder``): these go first, so that the
short files fill in at the end and both workers finish together, instead of one working
through a long file alone while the other has nothing left. The longest, then long ones that
collection would leave to the very end; not the other long files, which start processes of
their own too (exported scripts, search workers) that beside Ray's actors would crowd the two
cores."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the items of ``LONGEST_FILES`` first, in that order (a stable sort)."""
    def rank(item: pytest.Item) -> int:
        path = item.path.relative_to(TESTS).as_posix()
        return LONGEST_FILES.index(path) if path in LONGEST_FILES else len(LONGEST_FILES)

    items.sort(key=rank)


@pytest.fixture(autouse=True)
def private_workspace(tmp_path, monkeypatch):
    """Runs of unsaved projects go to a temporary folder, never the user's home."""
    monkeypatch.setenv("LAYER_STUDIO_HOME", str(tmp_path / "workspace"))
    return tmp_path / "workspace"


def built_once(tmp_path_factory, name: str, build: Callable[[Path], Path]) -> Path:
    """What ``build(folder)`` returns (a path inside ``folder``), built once for the whole run
    of the suite: with xdist, the first worker to need it builds it in the temporary folder
    the workers share, under a file lock, and the others wait for it and reuse it
    (pytest-xdist's documented pattern for a session fixture made only once)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:  # no xdist: the session is the whole run
        return build(tmp_path_factory.mktemp(name))
    from filelock import FileLock

    folder = tmp_path_factory.getbasetemp().parent / name
    built = folder.with_name(f"{name}.built")  # the result's path in folder, once it is whole
    with FileLock(folder.with_name(f"{name}.lock")):
        if not built.is_file():
            shutil.rmtree(folder, ignore_errors=True)  # what a worker that failed left
            folder.mkdir()
            built.write_text(build(folder).relative_to(folder).as_posix())
    return folder / built.read_text()


@pytest.fixture(scope="session")
def cnn_run(tmp_path_factory):
    """A finished run of ``small_cnn_project`` (trained once for all workers; treat as
    read-only): its model, two checkpoints, preprocessing and a test split."""
    def trained(folder: Path) -> Path:
        from studio.core.training.trainer import train
        from tests.helpers import small_cnn_project

        return train(small_cnn_project(), folder).run_dir

    return built_once(tmp_path_factory, "cnn-run", trained)


@pytest.fixture(scope="session")
def detection_run(tmp_path_factory):
    """A finished one-epoch run of a tiny detector (``tests.detection_runs``; trained once
    for all workers; treat as read-only)."""
    from tests.detection_runs import trained_detection_run

    return built_once(tmp_path_factory, "detection-run", trained_detection_run)


@pytest.fixture(scope="session")
def trained_segmenter(tmp_path_factory):
    """A finished one-epoch run of a tiny segmentation model on 12 demo images
    (``tests.segmentation_runs``; trained once for all workers; treat as read-only)."""
    from tests.segmentation_runs import trained_segmentation_run

    return built_once(tmp_path_factory, "segmentation-run", trained_segmentation_run)


@pytest.fixture
def gate(monkeypatch):
    """A closed :class:`~tests.gate.Gate`, opened when the test ends so nothing stays held.
    Ask for it after fixtures whose teardown waits for the held work (``window``)."""
    from tests.gate import Gate

    gate = Gate(monkeypatch)
    yield gate
    gate.open()
