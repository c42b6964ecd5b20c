"""What the desktop bundle holds besides Python code, and where inside the bundle.

The app finds its files relative to the ``studio`` package (``ASSETS_DIR`` in
``studio.core.data.bundled`` is the folder holding ``studio/``), and PyInstaller puts the
package at the top of the bundle's ``_internal`` folder: so ``assets/`` goes there too, next
to ``studio/``.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "assets"
README = ROOT / "README.md"
"""Shown offline by Help > Layer Studio Guide, with its screenshots: beside ``assets/``."""
ICON_SIZES = (16, 32, 48, 64, 128, 256, 512)
APP_ICON = ASSETS / "icons" / "layer-studio-256.png"
GUI_EXECUTABLE = "layer-studio"
CLI_EXECUTABLE = "studio"


def icon_path(size: int) -> Path:
    """The PNG icon ``size`` pixels wide."""
    return ASSETS / "icons" / f"layer-studio-{size}.png"


def data_files() -> list[tuple[str, str]]:
    """(file, folder inside the bundle) for every asset the app reads at run time."""
    files = [ASSETS / "mnist-10k.npz", ASSETS / "icon.svg"]
    files += [icon_path(size) for size in ICON_SIZES]
    files += [README, *sorted((ASSETS / "screenshots").glob("*.png"))]  # Help > Guide
    return [(str(path), str(path.parent.relative_to(ROOT))) for path in files]
