"""A small thread-safe memory of the last values made, by key (the datasets read last)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

Value = TypeVar("Value")


class Recent(Generic[Value]):
    """The last ``size`` values remembered, by key; remembering one more forgets the one
    remembered longest ago. Safe to share between threads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[Hashable, Value] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Value | None:
        """The value remembered for ``key``, or None."""
        with self._lock:
            return self._values.get(key)

    def remember(self, key: Hashable, value: Value) -> Value:
        """Remember ``value`` for ``key`` (as the newest), and return it."""
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.size:
                self._values.popitem(last=False)
        return value
