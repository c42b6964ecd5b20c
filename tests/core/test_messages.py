"""Short text for messages: quoted values are cut, whatever their size."""

from __future__ import annotations

import pytest

from studio.core.base.messages import QUOTE_LIMIT, quoted, shortened


@pytest.mark.parametrize(
    "value",
    ["x" * 200_000, list(range(1_000_000)), {"k" * 300: [[[[[[[[1]]]]]]]]}, 10**4000, b"\0" * 999],
)
def test_quoted_values_are_cut_to_the_limit(value):
    text = quoted(value)
    assert len(text) <= QUOTE_LIMIT
    assert text[0] == repr(value)[0]


def test_short_values_are_quoted_whole():
    assert quoted("bogus") == "'bogus'"
    assert quoted([1, 2]) == "[1, 2]"
    assert quoted(0.5, limit=3) == "0.5"


def test_shortened_ends_with_an_ellipsis_only_when_cut():
    assert shortened("abc", 3) == "abc"
    assert shortened("abcd", 3) == "ab…"
