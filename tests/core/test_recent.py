"""The memory of the datasets read last."""

from __future__ import annotations

from studio.core.base.recent import Recent


def test_remembering_one_more_forgets_the_one_remembered_longest_ago():
    recent: Recent[str] = Recent(2)
    assert recent.remember("a", "A") == "A"
    recent.remember("b", "B")
    recent.remember("a", "A again")  # remembered anew: now the newest
    recent.remember("c", "C")
    assert [recent.get(key) for key in "abc"] == ["A again", None, "C"]
