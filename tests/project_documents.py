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

from studio.core.model.registry import REGISTRY
from studio.core.project.templates import TEMPLATES, from_template

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
    """A template's document with one to three places replaced (by anything, or by a value of
    the same type), removed, added to, wrapped or nested deeply. Each mutation walks down from
    the top, copying only what it passes, so the template's document stays as it was."""
    document = dict(draw(st.sampled_from(TEMPLATE_DOCUMENTS)))
    for _ in range(draw(st.integers(1, 3))):
        parent: Any = _layer_params(draw, document) if draw(st.booleans()) else document
        key = _pick(draw, parent)
        while isinstance(parent[key], dict | list) and parent[key] and draw(st.integers(0, 4)):
            parent[key] = copy.copy(parent[key])
            parent = parent[key]
            key = _pick(draw, parent)
        _mutate(draw, parent, key)
    return document


def _layer_params(draw: st.DrawFn, document: dict) -> dict:
    """The params of a random layer, copied into ``document`` (the document itself if an
    earlier mutation broke the way there): where most of a project's variety is."""
    model = document.get("model")
    if not isinstance(model, dict) or not isinstance(model.get("nodes"), list):
        return document
    model = document["model"] = dict(model)
    nodes = model["nodes"] = list(model["nodes"])
    index = draw(st.integers(0, len(nodes) - 1)) if nodes else None
    if index is None or not isinstance(nodes[index], dict):
        return document
    node = nodes[index] = dict(nodes[index])
    if not isinstance(node.get("params"), dict) or not node["params"]:
        return node or document
    node["params"] = dict(node["params"])
    return node["params"]


def _pick(draw: st.DrawFn, container: dict | list) -> Any:
    """A key of a non-empty dict or an index of a non-empty list."""
    keys = list(container) if isinstance(container, dict) else range(len(container))
    return keys[draw(st.integers(0, len(keys) - 1))]


def _same_kind(value: Any) -> st.SearchStrategy:
    """Values of the same JSON type as ``value``, which often still pass the schema and so
    reach the checks after it."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.integers(-2, 70_000) | st.sampled_from([2**31, 10**400])
    if isinstance(value, float):
        return st.floats(-2.0, 2.0) | st.sampled_from([math.nan, math.inf, 1e-300, 10.0])
    if isinstance(value, str):
        return st.sampled_from(sorted(REGISTRY) + ["input_1", "dense_1", "", "x" * 300]) | (
            st.text(max_size=6))
    return st.just(value)


ACTIONS = ("same", "same", "same", "same", "scalar", "json", "remove", "add", "wrap", "deep")
"""How a mutation changes its place, weighted towards changes that keep the value's type, so
that many documents pass the schema and reach the loader's later checks."""


def _mutate(draw: st.DrawFn, parent: dict | list, key: Any) -> None:
    action = draw(st.sampled_from(ACTIONS))
    if action == "same":
        parent[key] = draw(_same_kind(parent[key]))
    elif action == "scalar":
        parent[key] = draw(scalars)
    elif action == "json":
        parent[key] = draw(json_values)
    elif action == "remove":
        del parent[key]
    elif action == "add" and isinstance(parent, dict):
        parent[draw(st.text(max_size=6) | st.sampled_from(["bogus", "shape", "units"]))] = (
            draw(scalars))
    elif action == "add":
        parent.insert(key, draw(scalars) if draw(st.booleans()) else parent[key])
    elif action == "wrap":
        parent[key] = [[parent[key]], {"x": parent[key]}, str(parent[key])][
            draw(st.integers(0, 2))]
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
