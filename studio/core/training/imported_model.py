"""The imported model as a run: the project's model with its imported weights, untrained,
saved with the preprocessing of the project's data, so that everything that answers with a
run (Try, Evaluate, ``studio infer``, ``studio export``) answers with it too."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from studio.core.base.events import OnEvent
from studio.core.hardware.devices import DeviceDiscovery
from studio.core.project.document import Project, ProjectFileError, load_project
from studio.core.runs.folders import CONFIG_FILE, MODEL_FILE, PROJECT_FILE
from studio.core.runs.history import iter_run_folders
from studio.core.training.trainer import RunResult, TrainingError, train

IMPORTED_MODEL = "Imported model"
"""The name of the run holding the imported model (its folder ends in ``imported-model``)."""


def imported_model_run(project: Project, run_root: Path, on_event: OnEvent | None = None,
                       stop: threading.Event | None = None, *,
                       discovery: DeviceDiscovery | None = None) -> RunResult:
    """The run under ``run_root`` holding ``project``'s imported model: one made earlier for
    the same layers, weights and data, else a new one (the data is read, no epoch trained).
    TrainingError (one line) if the project has no imported weights or they cannot be used;
    events and ``stop`` are those of ``train``."""
    if project.weights is None:
        raise TrainingError(f"{project.name} has no imported weights: import a Keras model "
                            "with its weights, or train a run.")
    found = find_imported_run(project, Path(run_root))
    if found is not None:
        return RunResult(found, "finished")
    model = project.copy()
    model.name = IMPORTED_MODEL
    model.training.start_from = "imported"
    return train(model, Path(run_root), on_event, stop, epochs=0, discovery=discovery)


def find_imported_run(project: Project, run_root: Path) -> Path | None:
    """A finished run under ``run_root`` of ``project``'s imported model as it is now (same
    layers, weights file and data), or None."""
    for path, _ in iter_run_folders(run_root):
        if not path.name.endswith("imported-model") or not (path / MODEL_FILE).is_file():
            continue
        try:
            config = json.loads((path / CONFIG_FILE).read_text(encoding="utf-8"))
            snapshot = load_project(path / PROJECT_FILE)
        except (OSError, ValueError, ProjectFileError):
            continue
        started = config.get("started_from") if isinstance(config, dict) else None
        if (isinstance(started, dict) and started.get("sha256") == project.weights.sha256
                and config.get("training", {}).get("epochs") == 0
                and snapshot.graph == project.graph and snapshot.dataset == project.dataset):
            return path
    return None
