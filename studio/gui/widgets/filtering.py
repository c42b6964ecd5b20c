"""Filtering a proxy model's rows again once what it filters on has changed."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSortFilterProxyModel


def refilter(proxy: QSortFilterProxyModel, change: Callable[[], None]) -> None:
    """Make ``change`` to what ``proxy`` filters rows on, then filter its rows again (the
    change announced, as Qt 6.10 and later ask; earlier ones only invalidate)."""
    announced = hasattr(proxy, "beginFilterChange")
    if announced:
        proxy.beginFilterChange()
    change()
    if announced:
        proxy.endFilterChange(QSortFilterProxyModel.Direction.Rows)
    else:
        proxy.invalidateRowsFilter()
