"""The GUI's garbage collector: it collects on its timer, waits while TensorFlow loads, and
then freezes what loaded instead of scanning it."""

from __future__ import annotations

import gc
import sys
import types
import weakref

import pytest

from studio.core.base.runtime import loading
from studio.gui.widgets.collector import GuiCollector


class Node:
    """An object in a reference cycle, which only the cyclic collector frees."""

    def __init__(self) -> None:
        self.me = self


def unreachable_cycle() -> weakref.ref:
    return weakref.ref(Node())


@pytest.fixture
def unfrozen():
    """Objects the collector froze are handed back to the collector after the test."""
    yield
    gc.unfreeze()


def ticks(qtbot, collector: GuiCollector, count: int) -> None:
    for _ in range(count):
        with qtbot.waitSignal(collector.timer.timeout, timeout=5000):
            pass


def test_garbage_waits_while_tensorflow_loads_then_what_loaded_is_frozen(
        qtbot, monkeypatch, unfrozen):
    monkeypatch.delitem(sys.modules, "keras", raising=False)
    collector = GuiCollector(interval_ms=10)
    kept = [[] for _ in range(2 * gc.get_threshold()[0])]  # enough to make a collection due
    cycle = unreachable_cycle()
    with loading():
        ticks(qtbot, collector, 3)
        assert cycle() is not None
    qtbot.waitUntil(lambda: cycle() is None)
    assert gc.get_freeze_count() == 0

    monkeypatch.setitem(sys.modules, "keras", types.ModuleType("keras"))
    qtbot.waitUntil(lambda: collector.loaded)
    assert gc.get_freeze_count() >= len(kept)
    later = unreachable_cycle()
    kept += [[] for _ in range(2 * gc.get_threshold()[0])]
    qtbot.waitUntil(lambda: later() is None)
