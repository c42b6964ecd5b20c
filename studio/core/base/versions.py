"""What Layer Studio runs on, for a run's record, the About box and a bug report: versions of
the packages it depends on, and the diagnostics text a person pastes into a report."""

from __future__ import annotations

import platform
from collections.abc import Mapping

TITLES = {"layer_studio": "Layer Studio", "python": "Python", "tensorflow": "TensorFlow",
          "keras": "Keras", "numpy": "NumPy", "qt": "Qt", "pyside6": "PySide6"}
"""How people write the names of the versions reported."""


def package_versions() -> dict[str, str]:
    """Versions of what a run depends on, read from the installed packages' metadata (no
    package is imported: TensorFlow's version is known without loading it)."""
    from importlib.metadata import PackageNotFoundError, version  # slow to import: on use

    versions = {}
    for name, package in (("layer_studio", "layer-studio"), ("python", ""),
                          ("tensorflow", "tensorflow"), ("keras", "keras"), ("numpy", "numpy")):
        try:
            versions[name] = version(package) if package else platform.python_version()
        except PackageNotFoundError:
            versions[name] = "unknown"
    return versions


def version_lines(versions: Mapping[str, str]) -> list[str]:
    """``TensorFlow 2.18.0`` for each version, in the order of ``versions``."""
    return [f"{TITLES.get(name, name)} {number}" for name, number in versions.items()]


def diagnostics_text(versions: Mapping[str, str], devices: str, last_error: str) -> str:
    """What a bug report needs, as plain text: the versions, the system, the devices and the
    last error the app showed (``none`` before any)."""
    lines = ["Layer Studio diagnostics", *version_lines(versions),
             f"System: {platform.platform()}", f"Devices: {devices}",
             f"Last error: {last_error or 'none'}"]
    return "\n".join(lines) + "\n"
