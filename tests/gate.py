"""A gate that holds background work at a point the test chooses until the test has acted, so
the outcome is exact instead of depending on how fast the machine is."""

from __future__ import annotations

import threading
from typing import Any

HOLD_SECONDS = 300
"""How long held work waits for a test that never opens the gate before failing."""


class Gate:
    """Closed until ``open``: work calling ``hold`` waits there; ``reached`` says it came."""

    def __init__(self, monkeypatch: Any) -> None:
        self.reached = threading.Event()
        self._opened = threading.Event()
        self._monkeypatch = monkeypatch

    def hold(self) -> None:
        """Say the work got here, and wait until the gate opens."""
        self.reached.set()
        if not self._opened.wait(HOLD_SECONDS):
            raise TimeoutError("the test never opened the gate")

    def open(self) -> None:
        """Let held work go on; from now on ``hold`` passes straight through."""
        self._opened.set()

    def after(self, owner: Any, name: str) -> None:
        """Make ``owner.name`` (a function or method) hold at this gate each time it ends."""
        real = getattr(owner, name)

        def held(*args: Any, **kwargs: Any) -> Any:
            result = real(*args, **kwargs)
            self.hold()
            return result

        self._monkeypatch.setattr(owner, name, held)

    def before(self, owner: Any, name: str) -> list[tuple]:
        """Make ``owner.name`` hold at this gate each time before it runs; the arguments of
        each call, in order, are added to the list returned."""
        real = getattr(owner, name)
        calls: list[tuple] = []

        def held(*args: Any, **kwargs: Any) -> Any:
            calls.append(args)
            self.hold()
            return real(*args, **kwargs)

        self._monkeypatch.setattr(owner, name, held)
        return calls
