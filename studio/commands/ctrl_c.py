"""Ctrl+C as a stop request: a command's long work ends cleanly (keeping what it did) rather
than at a KeyboardInterrupt wherever it happens to be."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def ctrl_c_stops() -> Iterator[threading.Event]:
    """An event Ctrl+C sets during the block, for the work's stop; the handler before is
    restored after."""
    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)
