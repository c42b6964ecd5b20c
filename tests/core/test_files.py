"""Saved files: the user's umask on what we write, and no temp files left behind by a writer
killed mid-save."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import studio
from studio.cli import main
from studio.core.base import files
from studio.core.export.exporter import export_run
from studio.core.export.formats import FORMATS
from studio.core.project.document import save_project
from studio.core.runs import folders as runs
from studio.core.runs.folders import RunFolder
from studio.core.search.state import SEARCH_FILE, SearchState, write_state
from tests.helpers import tiny_project

WRITER = """
import sys
from pathlib import Path
from studio.core.base.files import atomic_file

with atomic_file(Path(sys.argv[1])) as handle:
    handle.write(b"half a project")
    handle.flush()
    print("writing", flush=True)
    sys.stdin.read()
    handle.write(b" and the rest")
"""


def start_writer(target: Path) -> subprocess.Popen:
    """A process in the middle of saving ``target``: its temp file is written and it waits
    on its stdin before finishing the save."""
    env = {**os.environ, "PYTHONPATH": str(Path(studio.__file__).parents[1])}
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(target)], env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline() == "writing\n"
    return writer


def temps(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.name.endswith(".tmp")}


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_save_removes_temp_files_of_writers_killed_mid_save_and_keeps_live_ones(tmp_path):
    target = tmp_path / "p.studio.json"
    save_project(tiny_project(), target)
    killed = start_writer(target)
    killed.kill()
    killed.wait()
    (orphan,) = temps(tmp_path)
    assert orphan.startswith(f".p.studio.json.{killed.pid}-")
    live = start_writer(target)
    (live_temp,) = temps(tmp_path) - {orphan}
    fresh_orphan = tmp_path / f".p.studio.json.{killed.pid}-0123abcd.tmp"
    fresh_orphan.write_bytes(b"a writer on another host may still own this")
    earlier_version = tmp_path / ".p.studio.json.k3j_x9q2.tmp"
    earlier_version.write_bytes(b"left by tempfile in an earlier version")
    mine = tmp_path / ".p.studio.json.notes.tmp"
    mine.write_text("not ours")
    for name in (orphan, live_temp, earlier_version.name, mine.name):
        age(tmp_path / name, 2 * files.STALE_SECONDS)
    try:
        save_project(tiny_project(epochs=2), target)
        assert temps(tmp_path) == {live_temp, fresh_orphan.name, mine.name}
    finally:
        live.stdin.close()
        assert live.wait() == 0
    assert target.read_bytes() == b"half a project and the rest"
    assert temps(tmp_path) == {fresh_orphan.name, mine.name}


def test_a_checkpoint_save_removes_the_partial_files_of_a_killed_run(tmp_path):
    target = tmp_path / "checkpoints" / runs.checkpoint_name(3)
    target.parent.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    for partial in (f".partial-{dead.stdout.strip()}-00ff00ff-{target.name}",
                    f".partial-{dead.stdout.strip()}-{target.name}"):  # an earlier version's
        (target.parent / partial).write_bytes(b"half a model")
        age(target.parent / partial, 2 * files.STALE_SECONDS)
    with files.atomic_path(target) as temp:
        assert temp.suffix == ".keras" and temp.parent == target.parent
        temp.write_bytes(b"a model")
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]


@pytest.fixture(params=[0o022, 0o027, 0o077])
def umask(request):
    """A umask set for the test (and restored after it)."""
    previous = os.umask(request.param)
    yield request.param
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_saved_projects_run_files_and_scripts_get_the_users_umask(tmp_path, umask):
    file_mode, folder_mode = 0o666 & ~umask, 0o777 & ~umask
    project = tmp_path / "p.studio.json"
    save_project(tiny_project(), project)
    folder = RunFolder.create(tmp_path / "runs", tiny_project())
    folder.write_start(tiny_project())
    folder.write_config({"training": {}})
    folder.add_epoch({"epoch": 1, "loss": 0.5})
    script = tmp_path / "p.py"
    assert main(["export-code", str(project), "-o", str(script)]) == 0
    search = tmp_path / "searches" / "p" / "1"
    write_state(search, SearchState(tiny_project(), workers=1, planned=1))
    written = [project, script, search / SEARCH_FILE, *(folder.path / name for name in (
        runs.PROJECT_FILE, runs.CONFIG_FILE, runs.METRICS_FILE, runs.RUN_FILE))]
    assert {p.name: mode(p) for p in written} == {p.name: file_mode for p in written}
    assert {mode(folder.path), mode(search)} == {folder_mode}


def entry_modes(folder: Path) -> dict[str, int]:
    """The mode of ``folder`` and of everything in it, by path."""
    return {str(p): mode(p) for p in [folder, *folder.rglob("*")]}


def expected_modes(folder: Path, umask: int) -> dict[str, int]:
    """What entry_modes gives for files and folders made under ``umask``."""
    return {str(p): 0o777 & ~umask if p.is_dir() else 0o666 & ~umask
            for p in [folder, *folder.rglob("*")]}


def test_an_export_folder_gets_the_users_umask(cnn_run, tmp_path, umask):
    out = tmp_path / "exports" / "keras"
    export_run(cnn_run, "keras", out)
    assert entry_modes(out) == expected_modes(out, umask)
    assert mode(out.parent) == 0o777 & ~umask


@pytest.mark.parametrize("fmt", sorted(set(FORMATS) - {"keras", "tflite-int8"}))
def test_every_export_format_gets_the_users_umask(cnn_run, tmp_path, fmt):
    """The converters write their own files: they too follow the umask (022, which tells
    0644 from the 0600 of a private temp file). int8 is left out: its bytes are written as
    the other TensorFlow Lite files are, after a calibration that costs 11 s here."""
    previous = os.umask(0o022)
    try:
        export_run(cnn_run, fmt, tmp_path / fmt)
    finally:
        os.umask(previous)
    assert entry_modes(tmp_path / fmt) == expected_modes(tmp_path / fmt, 0o022)
