"""``studio`` before the window opens: a mistyped command, no display, or missing system
libraries are one line and a non-zero exit instead of Qt's abort."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from studio.cli import COMMANDS, main
from studio.commands.start import GUI_LIBRARIES, XCB_LIBRARIES, loads, window_problem
from tests.helpers import one_line_error

DESKTOP = {"DISPLAY": ":0"}


@pytest.fixture
def no_window(monkeypatch):
    """Fail the test if anything tries to open the window."""
    import studio.gui.shell.app as app

    monkeypatch.setattr(app, "run_app", lambda *_: pytest.fail("the window was opened"))


@pytest.mark.parametrize(("word", "hint"), [("trian", "did you mean 'train'?"),
                                            ("exprot", "did you mean 'export'?"),
                                            ("serch", "did you mean 'search'?"),
                                            ("zzz", "see studio --help")])
def test_a_mistyped_command_is_named_with_the_closest_one(word, hint, no_window, capsys,
                                                          tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([word, "p.studio.json"]) == 2
    assert one_line_error(capsys) == f"studio: error: unknown command '{word}' ({hint})\n"


def test_a_missing_project_file_is_said_to_be_missing(no_window, capsys, tmp_path):
    missing = tmp_path / "nowhere" / "p.studio.json"
    assert main([str(missing)]) == 2
    one_line_error(capsys, "p.studio.json' does not exist", "studio --help")


def test_an_unknown_option_and_bad_arguments_are_one_line(no_window, capsys):
    assert main(["--trian"]) == 2
    assert one_line_error(capsys) == "studio: error: unknown option '--trian' (see studio --help)\n"
    with pytest.raises(SystemExit) as usage:
        main(["search", "p.studio.json", "--trials", "x"])
    assert usage.value.code == 2
    assert one_line_error(capsys) == ("studio: error: argument --trials: invalid int value: 'x' "
                                      "(see studio search --help)\n")


def test_an_existing_project_opens_the_window_once_checked(tmp_path, monkeypatch):
    import studio.commands.start as start
    import studio.gui.shell.app as app

    project = tmp_path / "p.studio.json"
    project.write_text("{}", encoding="utf-8")
    opened = []
    monkeypatch.setattr(start, "window_problem", lambda: None)
    monkeypatch.setattr(app, "run_app", lambda path: opened.append(path) or 0)
    assert main([str(project)]) == 0 and main([]) == 0
    assert opened == [project, None]


def test_every_command_is_known_as_one_not_taken_for_a_file():
    from studio.cli import _parser

    [commands] = [action.choices for action in _parser()._subparsers._group_actions]
    assert set(commands) == set(COMMANDS)


def test_without_a_display_it_says_so_and_points_to_the_command_line():
    problem = window_problem({}, "linux", probe=lambda _: pytest.fail("probed libraries"))
    assert "no display" in problem and "studio --help" in problem and "DISPLAY" in problem
    for headless in ("offscreen", "minimal", "vnc:size=800x600"):
        assert window_problem({"QT_QPA_PLATFORM": headless}, "linux") is None
    assert "(DISPLAY and WAYLAND_DISPLAY are not set)" in problem
    wayland_only = {"QT_QPA_PLATFORM": "xcb", "WAYLAND_DISPLAY": "wayland-0"}
    assert "(DISPLAY is not set)" in window_problem(wayland_only, "linux")
    x11_only = {"QT_QPA_PLATFORM": "wayland", "DISPLAY": ":0"}
    assert "(WAYLAND_DISPLAY is not set)" in window_problem(x11_only, "linux")
    assert window_problem({}, "darwin") is None and window_problem({}, "win32") is None


def test_without_a_display_the_command_exits_with_one_line_not_an_abort(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["PYTHONPATH"] = str(Path(__file__).parents[2])
    env["LAYER_STUDIO_HOME"] = str(tmp_path)
    done = subprocess.run([sys.executable, "-m", "studio"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("studio: error: there is no display"), done.stderr
    assert done.stderr.count("\n") == 1 and done.stdout == ""


def test_missing_libraries_are_named_as_the_packages_to_install():
    absent = {"libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-cursor.so.0",
              "libgthread-2.0.so.0"}
    problem = window_problem(DESKTOP, "linux", probe=lambda name: name not in absent)
    assert problem == ("the window needs system libraries that are not installed "
                       "(libgthread-2.0.so.0, libxcb-cursor.so.0, libxcb-icccm.so.4, "
                       "libxcb-keysyms.so.1); on Debian or Ubuntu: sudo apt install "
                       "libglib2.0-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1")
    bare = window_problem(DESKTOP, "linux", probe=lambda name: False)
    assert "libGL.so.1, libEGL.so.1, libfontconfig.so.1, libfreetype.so.6 and 21 more)" in bare
    assert bare.endswith("libxcb-xkb1 libxcb1 libxkbcommon-x11-0 libxkbcommon0")
    assert "\n" not in bare
    assert window_problem(DESKTOP, "linux", probe=lambda name: True) is None


def test_x11_libraries_are_checked_only_where_qt_uses_x11():
    probed = []

    def probe(name):
        probed.append(name)
        return True

    wayland = {"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0", "XDG_SESSION_TYPE": "wayland"}
    assert window_problem(wayland, "linux", probe) is None
    assert set(probed) == set(GUI_LIBRARIES)
    probed.clear()
    assert window_problem({**wayland, "QT_QPA_PLATFORM": "xcb"}, "linux", probe) is None
    assert set(probed) == set(GUI_LIBRARIES) | set(XCB_LIBRARIES)


def test_the_probe_loads_libraries_from_the_system_or_shipped_with_qt():
    assert loads("libc.so.6")
    assert loads("libQt6Core.so.6")  # beside PySide6's plugins, not on the loader's path
    assert not loads("libno-such-library.so.9")


def test_the_unknown_command_check_runs_before_the_window_check(no_window, capsys,
                                                                monkeypatch):
    import studio.commands.start as start

    monkeypatch.setattr(start, "window_problem", lambda: "no display here.")
    assert main(["trian"]) == 2
    one_line_error(capsys, "unknown command 'trian'")
    assert main([]) == 1
    assert one_line_error(capsys) == "studio: error: no display here.\n"


ALWAYS_THERE = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libdl.so.2",
                "libpthread.so.0", "ld-linux-x86-64.so.2", "libz.so.1", "libzstd.so.1"}
"""Libraries of every Debian and Ubuntu install (essential packages)."""


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("objdump") is None,
                    reason="reads Linux libraries with objdump")
def test_the_probe_covers_every_system_library_qt_links_the_window_to():
    import PySide6

    qt = Path(PySide6.__file__).parent / "Qt"
    files = [qt / "plugins" / "platforms" / "libqxcb.so",
             *(qt / "lib" / name for name in ("libQt6XcbQpa.so.6", "libQt6Gui.so.6",
                                               "libQt6DBus.so.6", "libQt6Widgets.so.6",
                                               "libQt6Core.so.6"))]
    needed = set()
    for file in files:
        dump = subprocess.run(["objdump", "-p", str(file)], capture_output=True, text=True,
                              check=True).stdout
        needed |= {line.split()[1] for line in dump.splitlines()
                   if line.strip().startswith("NEEDED")}
    shipped = {path.name for path in (qt / "lib").iterdir()}
    assert needed - shipped - ALWAYS_THERE == set(GUI_LIBRARIES) | set(XCB_LIBRARIES)
