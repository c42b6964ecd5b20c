"""Smoke test of the built desktop bundle (``make bundle``; run with ``make test-slow``).

Skipped unless ``dist/layer-studio/`` holds the two executables.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.packaging.bundle_support import bundle_files

BUNDLE = bundle_files.ROOT / "dist" / bundle_files.GUI_EXECUTABLE
GUI = BUNDLE / bundle_files.GUI_EXECUTABLE
CLI = BUNDLE / bundle_files.CLI_EXECUTABLE

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (GUI.is_file() and CLI.is_file()),
                       reason="no bundle in dist/: build it with 'make bundle'"),
]


@pytest.fixture
def bundle_env(tmp_path):
    """A private home, so the bundle writes no settings or runs outside ``tmp_path``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env.update(HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "config"),
               LAYER_STUDIO_HOME=str(tmp_path / "workspace"), QT_QPA_PLATFORM="offscreen")
    return env


def _run(command: list, env: dict, timeout: int) -> subprocess.CompletedProcess:
    """Run a bundled executable in the private home's parent, and check it succeeded."""
    done = subprocess.run([str(part) for part in command], env=env, capture_output=True,
                          text=True, timeout=timeout, cwd=Path(env["HOME"]).parent)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_bundled_studio_trains_a_project_for_one_epoch(tmp_path, bundle_env):
    project = tmp_path / "demo.studio.json"
    _run([CLI, "new", "--template", "cnn", "-o", project], bundle_env, timeout=120)
    done = _run([CLI, "train", project, "--epochs", "1", "--json"], bundle_env, timeout=600)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [event["epoch"] for event in events if event["type"] == "epoch"] == [1]
    assert events[-1]["type"] == "done"
    assert events[-1]["status"] == "finished"
    assert (tmp_path / events[-1]["run_dir"] / "model.keras").is_file()


def test_bundled_app_opens_a_project_and_closes_cleanly(tmp_path, bundle_env):
    project = tmp_path / "demo.studio.json"
    _run([CLI, "new", "--template", "cnn", "-o", project], bundle_env, timeout=120)
    bundle_env["LAYER_STUDIO_CLOSE_AFTER_MS"] = "8000"  # packaging/launch.py: long enough to
    _run([GUI, project], bundle_env, timeout=180)       # load TensorFlow in the background


def test_bundled_studio_searches_with_worker_processes(tmp_path, bundle_env):
    # Each worker process starts the bundled executable again (multiprocessing's spawn).
    project = tmp_path / "search.studio.json"
    _run([CLI, "new", "--template", "cnn", "-o", project], bundle_env, timeout=120)
    document = json.loads(project.read_text())
    document["training"]["epochs"] = 1
    document["search"].update(strategy="grid", workers=2, dimensions=[
        {"target": "training.learning_rate", "values": [0.01, 0.001]}])
    project.write_text(json.dumps(document))
    done = _run([CLI, "search", project, "--json"], bundle_env, timeout=600)
    trials = json.loads(done.stdout)["trials"]
    assert [(trial["status"], trial["params"]) for trial in trials] == [
        ("finished", {"training.learning_rate": rate}) for rate in (0.01, 0.001)]
    assert all((tmp_path / trial["run_dir"] / "model.keras").is_file() for trial in trials)
