"""Every layer type the designer offers, by name: the built-in layers and the pre-trained
Application base. Kept apart from both, so neither has to know of the other."""

from __future__ import annotations

from studio.core.model.applications import APPLICATION
from studio.core.model.layers import LAYER_TYPES, LayerType

REGISTRY: dict[str, LayerType] = {t.name: t for t in (*LAYER_TYPES, APPLICATION)}


def layer_type(name: str) -> LayerType:
    """The registered layer type called ``name``; raise KeyError with a readable message."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"Unknown layer type {name!r}.") from None
