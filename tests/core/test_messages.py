"""Short text for messages: quoted values are cut, whatever their size."""

from __future__ import annotations

import pytest

from studio.core.base.messages import (
    QUOTE_LIMIT,
    count,
    format_duration,
    look_up,
    plural,
    quoted,
    shortened,
    unknown_choice,
)


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


@pytest.mark.parametrize(("seconds", "style", "text"), [
    (4.4, "words", "4 s"), (65, "words", "1 min 05 s"), (7380, "words", "2 h 03 min"),
    (-3, "words", "0 s"), (0.42, "fine", "0.42 s"), (12.34, "fine", "12.3 s"),
    (245, "fine", "4 min 05 s"), (0.2, "rough", "1 s"), (40, "rough", "40 s"),
    (130, "rough", "2 min"), (4800, "rough", "1 h 20 min"), (125, "clock", "2:05"),
    (3723, "clock", "1:02:03"),
])
def test_durations_read_plainly(seconds, style, text):
    assert format_duration(seconds, style) == text


def test_counted_nouns_take_the_plural_from_two_on():
    assert [count(n, "trial") for n in (0, 1, 2, 2000)] == [
        "0 trials", "1 trial", "2 trials", "2,000 trials"]
    assert count(3, "row has", "rows have") == "3 rows have"
    assert (plural(1, "was", "were"), plural(2, "was", "were"), plural(2, "GPU")) == (
        "was", "were", "GPUs")


def test_an_unknown_name_is_quoted_and_the_choices_listed():
    table = {"keras": 1, "onnx": 2}
    assert look_up(table, "onnx", "export format", LookupError) == 2
    with pytest.raises(LookupError) as raised:
        look_up(table, "pdf" * 100, "export format", LookupError)
    message = str(raised.value)
    assert message.startswith("Unknown export format 'pdfpdf")
    assert message.endswith(": choose one of keras, onnx.")
    assert len(message) < QUOTE_LIMIT + 60
    with pytest.raises(LookupError, match=r"Unknown template \['a'\]: choose one of keras"):
        look_up(table, ["a"], "template", LookupError)  # a list read from a file
    assert unknown_choice("metric", "auc", ("loss", "accuracy")) == (
        "Unknown metric 'auc': choose one of loss, accuracy.")
