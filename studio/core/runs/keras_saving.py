"""Keras's own ``save``, without the work it needlessly repeats at every call.

To walk a model's state, Keras's saving (3.x, up to 3.15 at least) skips the attributes every
object of a kind has, which it finds by making a throw-away object of each kind (a ``Layer``,
an ``Optimizer``, ...) and listing its attributes. It means to keep those sets, but looks for
them under another name than it stores them under, and in a per-thread store: every save
makes them again, about 40% of saving the demo CNN. They are made once here and put where it
looks, in the thread that saves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

KINDS = ("Operation", "Layer", "Functional", "Sequential", "Metric", "Optimizer", "Loss")

_skipsets: dict[str, set[str]] = {}


def save_model(model: Any, path: Path) -> None:
    """``model.save(path)``, with Keras's sets of attributes to skip made only once."""
    _offer_skipsets()
    model.save(path)


def _offer_skipsets() -> None:
    try:
        from keras.src.backend.common import global_state
        from keras.src.saving.saving_lib import get_attr_skipset
    except ImportError:  # a Keras laid out otherwise: it saves as it does
        return
    for kind in KINDS:
        key = f"saving_attr_skiplist_{kind}"  # the name get_attr_skipset looks under
        if global_state.get_global_attribute(key) is None:
            if kind not in _skipsets:
                _skipsets[kind] = get_attr_skipset(kind)
            global_state.set_global_attribute(key, _skipsets[kind])
