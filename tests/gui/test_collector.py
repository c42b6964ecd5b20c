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
    """The test starts with nothing frozen (conftest freezes what is left once Keras has
    loaded), and objects the collector froze are handed back to the collector after it."""
    gc.unfreeze()
    yield
    gc.unfreeze()


def ticks(qtbot, collector: GuiCollector, count: int, kept: list) -> None:
    for _ in range(count):
        make_collection_due(kept)
        with qtbot.waitSignal(collector.timer.timeout, timeout=5000):
            pass


def make_collection_due(kept: list) -> None:
    """Allocate enough to make a young collection due. Done again before each wait: objects
    that an earlier test left to Qt are freed in the event loop, which lowers the count."""
    kept.append([[] for _ in range(2 * gc.get_threshold()[0])])


def collected(cycle: weakref.ref, kept: list) -> bool:
    make_collection_due(kept)
    return cycle() is None


def test_garbage_waits_while_tensorflow_loads_then_what_loaded_is_frozen(
        qtbot, monkeypatch, unfrozen):
    monkeypatch.delitem(sys.modules, "keras", raising=False)
    collector = GuiCollector(interval_ms=10)
    kept: list = []
    cycle = unreachable_cycle()
    with loading():
        ticks(qtbot, collector, 3, kept)
        assert cycle() is not None
    qtbot.waitUntil(lambda: collected(cycle, kept))
    assert gc.get_freeze_count() == 0

    monkeypatch.setitem(sys.modules, "keras", types.ModuleType("keras"))
    qtbot.waitUntil(lambda: collector.loaded)
    assert gc.get_freeze_count() >= sum(len(lists) for lists in kept)
    later = unreachable_cycle()
    qtbot.waitUntil(lambda: collected(later, kept))
