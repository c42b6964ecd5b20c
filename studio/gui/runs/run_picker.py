"""Listing trained runs in a combo box, as the Try and Evaluate views offer them."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from studio.core.runs.history import RunSummary


def offer_runs(box: QComboBox, runs: Sequence[RunSummary], keep: str | None) -> int:
    """List ``runs`` in ``box`` as given (id and best validation accuracy; the run folder as
    item data), or "No trained runs yet"; select the folder ``keep`` if listed, else the
    first. Returns the index of ``keep``, -1 if it is not listed."""
    box.clear()
    for row, run in enumerate(runs):
        score = run.best.get("val_accuracy")
        box.addItem(run.id + (f"  ·  {score:.1%} val. accuracy" if score is not None else ""),
                    str(run.path))
        box.setItemData(row, f"{run.name}: {run.status}, {run.epochs} epochs",
                        Qt.ItemDataRole.ToolTipRole)
    if not runs:
        box.addItem("No trained runs yet", None)
    index = box.findData(keep) if keep else -1
    box.setCurrentIndex(max(index, 0))
    return index
