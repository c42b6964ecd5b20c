"""Generated project files for fuzzing the loader: mostly valid projects (from every template)
with a few values changed, removed, added or nested deeply, then written out whole, with a
BOM, truncated or with a byte changed; and some random JSON and random bytes.

Shared by the property test (tests/core/test_loader_fuzz.py) and bench/loader_fuzz.py.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

from hypothesis import strategies as st

from studio.core.templates import TEMPLATES, from_template

TEMPLATE_DOCUMENTS = [from_template(name).to_dict() for name in sorted(TEMPLATES)]
"""A valid document of every template, the starting points of mutations."""
DEEP = "@deep@"
"""A string value that ``file_bytes`` replaces by nesting as deep as the number after it."""

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8),
    st.sampled_from([math.nan, math.inf, -math.inf, 10**400, -(10**400), 1e308, -1, 0, 1, 2, 3,
                     4, 5, 6, "", "x" * 300, "Dense", "Input", "Keras", "Application",
                     "input_1", "dense_1", "accuracy", "sgd", "folder", "\ud800"]),
)
"""Single JSON values, with the edge cases a loader trips on over-represented."""

json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=6,
)
"""Any JSON value (and some that JSON cannot hold strictly: NaN, lone surrogates)."""


@st.composite
def mutated_documents(draw: st.DrawFn) -> Any:
    """A template's document with one to four places replaced, removed, added to, wrapped or
    nested deeply. Each mutation walks down from the top, copying only what it passes, so the
    template's document stays as it was."""
    document = dict(draw(st.sampled_from(TEMPLATE_DOCUMENTS)))
    for _ in range(draw(st.integers(1, 4))):
        parent: Any = document
        key = _pick(draw, parent)
        while isinstance(parent[key], dict | list) and parent[key] and draw(st.integers(0, 4)):
            parent[key] = copy.copy(parent[key])
            parent = parent[key]
            key = _pick(draw, parent)
        _mutate(draw, parent, key)
    return document


def _pick(draw: st.DrawFn, container: dict | list) -> Any:
    """A key of a non-empty dict or an index of a non-empty list."""
    keys = list(container) if isinstance(container, dict) else range(len(container))
    return keys[draw(st.integers(0, len(keys) - 1))]


def _mutate(draw: st.DrawFn, parent: dict | list, key: Any) -> None:
    action = draw(st.integers(0, 6))
    if action == 0:
        parent[key] = draw(scalars)
    elif action == 1:
        parent[key] = draw(json_values)
    elif action == 2:
        del parent[key]
    elif action == 3 and isinstance(parent, dict):
        parent[draw(st.text(max_size=6) | st.sampled_from(["bogus", "shape", "units"]))] = (
            draw(scalars))
    elif action == 3:
        parent.insert(key, draw(scalars) if draw(st.booleans()) else parent[key])
    elif action == 4:
        parent[key] = [[parent[key]], {"x": parent[key]}, str(parent[key])][
            draw(st.integers(0, 2))]
    elif action == 5:
        parent[key] = draw(scalars)
    else:
        parent[key] = f"{DEEP}{draw(st.integers(1, 5_000))}"


def _deepen(text: str) -> str:
    """``text`` with every DEEP marker replaced by lists nested that deep."""
    return re.sub(f'"{DEEP}([0-9]+)"', lambda m: "[" * int(m[1]) + "]" * int(m[1]), text)


@st.composite
def file_bytes(draw: st.DrawFn) -> bytes:
    """The bytes of a file given to the loader as a project."""
    kind = draw(st.sampled_from(["mutated"] * 6 + ["template", "json", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "json":
        document = draw(json_values)
    elif kind == "template":
        document = draw(st.sampled_from(TEMPLATE_DOCUMENTS))
    else:
        document = draw(mutated_documents())
    text = _deepen(json.dumps(document, indent=draw(st.sampled_from([None, 2]))))
    data = text.encode("utf-8", "surrogatepass")
    damage = draw(st.sampled_from(["none"] * 5 + ["bom", "truncate", "byte", "utf16"]))
    if damage == "bom":
        return b"\xef\xbb\xbf" + data
    if damage == "truncate":
        return data[: draw(st.integers(0, len(data)))]
    if damage == "byte" and data:
        at = draw(st.integers(0, len(data) - 1))
        return data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1:]
    if damage == "utf16":
        return text.encode("utf-16", "surrogatepass")
    return data
