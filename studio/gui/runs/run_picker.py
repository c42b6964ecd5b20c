"""Listing trained runs in a combo box, as the Try and Evaluate views offer them."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from studio.core.runs.history import RunSummary
from studio.core.training.imported_model import IMPORTED_MODEL

IMPORTED_CHOICE = "imported-model"
"""The item data of the "Imported model" entry (a run made when it is chosen)."""


def offer_runs(box: QComboBox, runs: Sequence[RunSummary], keep: str | None) -> int:
    """List ``runs`` in ``box`` as given (id and its task's most telling best score; the run
    folder as item data), or "No trained runs yet"; select the folder ``keep`` if listed,
    else the first. Returns the index of ``keep``, -1 if it is not listed."""
    box.clear()
    for row, run in enumerate(runs):
        score = run.headline()
        box.addItem(run.id + (f"  ·  {score}" if score else ""), str(run.path))
        box.setItemData(row, f"{run.name}: {run.status}, {run.epochs} epochs",
                        Qt.ItemDataRole.ToolTipRole)
    if not runs:
        box.addItem("No trained runs yet", None)
    index = box.findData(keep) if keep else -1
    box.setCurrentIndex(max(index, 0))
    return index


def offer_imported(box: QComboBox, offered: bool) -> bool:
    """Add the "Imported model" entry to ``box`` if ``offered`` (the project has imported
    weights and no run of them yet); returns ``offered``."""
    if offered:
        box.addItem(IMPORTED_MODEL, IMPORTED_CHOICE)
        box.setItemData(box.count() - 1, "Keep the imported model, untrained, as a run and "
                        "answer with it", Qt.ItemDataRole.ToolTipRole)
    return offered


def imported_run(runs: Sequence[RunSummary]) -> RunSummary | None:
    """The newest of ``runs`` (given newest first) holding an imported model, if any."""
    return next((r for r in runs if str(r.path).endswith(IMPORTED_CHOICE)), None)
