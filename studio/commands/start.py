"""What ``studio`` checks before it opens the window, so that a mistyped command, a missing
display or a missing system library is one line and a non-zero exit, not Qt's abort.

Qt ends the process (SIGABRT, a core dump) when its platform plugin cannot load, so the checks
run before any Qt library does: the display from the environment, the libraries by loading
each with ``ctypes``, as the plugin would.
"""

from __future__ import annotations

import ctypes
import difflib
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from pathlib import Path

from studio.commands.errors import CliError, UsageError
from studio.core.base.messages import quoted

GUI_LIBRARIES = {
    "libGL.so.1": "libgl1",
    "libEGL.so.1": "libegl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libdbus-1.so.3": "libdbus-1-3",
    "libX11.so.6": "libx11-6",
    "libxkbcommon.so.0": "libxkbcommon0",
}
"""The system libraries PySide6's Qt GUI library links to (``objdump -p libQt6Gui.so.6``,
libQt6DBus), by soname, with the Debian and Ubuntu package holding each."""
XCB_LIBRARIES = {
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb.so.1": "libxcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
}
"""What the X11 platform plugin adds (``libqxcb.so`` and ``libQt6XcbQpa.so.6``): the xcb
libraries a fresh Debian or Ubuntu desktop often lacks (libxcb-cursor0, -icccm4, -keysyms1,
-image0, -render-util0 among them)."""
WINDOW_SYSTEMS = {"xcb": ("DISPLAY",), "wayland": ("WAYLAND_DISPLAY",),
                  "wayland-egl": ("WAYLAND_DISPLAY",)}
"""Qt platforms that need a display server, with the variables that name one; the others
(offscreen, vnc, eglfs…) need none."""
NAMED = 4
"""How many missing libraries the message names before it counts the rest."""


@cache
def _bundled_dirs() -> list[Path]:
    """Folders of libraries that ship with the app, where Qt's own search (its RUNPATH) finds
    them but ``dlopen`` by name does not: PySide6's Qt libraries, and a bundle's."""
    from importlib.util import find_spec

    folders = [Path(sys._MEIPASS)] if hasattr(sys, "_MEIPASS") else []
    spec = find_spec("PySide6")
    if spec is not None and spec.origin:
        folders.append(Path(spec.origin).parent / "Qt" / "lib")
    return folders


def loads(soname: str) -> bool:
    """Whether the library ``soname`` loads: from the system, or shipped with the app."""
    for candidate in (soname, *(str(folder / soname) for folder in _bundled_dirs())):
        try:
            ctypes.CDLL(candidate)
        except OSError:
            continue
        return True
    return False


def _platforms(env: Mapping[str, str]) -> list[str]:
    """The Qt platforms ``QT_QPA_PLATFORM`` asks for, in order (``xcb;offscreen``, with any
    ``:options`` cut), or [] for Qt's choice."""
    requested = env.get("QT_QPA_PLATFORM", "")
    return [name.split(":")[0].strip() for name in requested.split(";") if name.strip()]


def _uses_xcb(env: Mapping[str, str]) -> bool:
    """Whether Qt will try X11 first: asked for, or its choice outside a Wayland session."""
    platforms = _platforms(env)
    if platforms:
        return platforms[0] == "xcb"
    wayland_session = env.get("XDG_SESSION_TYPE") == "wayland" and env.get("WAYLAND_DISPLAY")
    return bool(env.get("DISPLAY")) and not wayland_session


def window_problem(env: Mapping[str, str] | None = None, platform: str = sys.platform,
                   probe: Callable[[str], bool] = loads) -> str | None:
    """Why the window cannot open here, in one line, or None if it can (as far as can be told
    before Qt loads): no display to show it on, or system libraries Qt needs that are not
    installed, with the ``apt`` command that installs them."""
    if not platform.startswith("linux"):
        return None
    env = os.environ if env is None else env
    platforms = _platforms(env)
    if platforms and platforms[0] not in WINDOW_SYSTEMS:
        return None  # offscreen, vnc and the like need no display
    names = WINDOW_SYSTEMS[platforms[0]] if platforms else ("DISPLAY", "WAYLAND_DISPLAY")
    if not any(env.get(name) for name in names):
        unset = " and ".join(names) + (" is" if len(names) == 1 else " are")
        return (f"there is no display to open the window on ({unset} not set): use the "
                "command line (studio --help), or run it on a desktop or with DISPLAY set "
                "(ssh -X).")
    libraries = {**GUI_LIBRARIES, **(XCB_LIBRARIES if _uses_xcb(env) else {})}
    absent = [soname for soname in libraries if not probe(soname)]
    if not absent:
        return None
    named = ", ".join(absent[:NAMED]) + (f" and {len(absent) - NAMED} more"
                                         if len(absent) > NAMED else "")
    packages = sorted({libraries[soname] for soname in absent})
    return (f"the window needs system libraries that are not installed ({named}); on Debian "
            f"or Ubuntu: sudo apt install {' '.join(packages)}")


def check_window() -> None:
    """Raise CliError if the window cannot open here (see ``window_problem``)."""
    problem = window_problem()
    if problem is not None:
        raise CliError(problem)


def unknown_command(word: str, commands: Iterable[str]) -> UsageError:
    """The error for a first word that is neither a command nor an existing file."""
    commands = list(commands)
    if os.sep in word or Path(word).suffix:  # meant as a file to open
        return UsageError(f"{quoted(word)} does not exist: give a project file to open, or a "
                          "command (studio --help).")
    close = difflib.get_close_matches(word, commands, n=1)
    hint = f"did you mean {close[0]!r}?" if close else "see studio --help"
    return UsageError(f"unknown command {quoted(word)} ({hint})")
