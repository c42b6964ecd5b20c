"""``packaging/bundle_files.py`` for the tests (``packaging`` is also a PyPI package's name,
so the folder cannot be imported as a package)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

PACKAGING_DIR = Path(__file__).resolve().parents[2] / "packaging"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, PACKAGING_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bundle_files = _load("bundle_files")
