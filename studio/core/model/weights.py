"""The pre-trained weights a drawn model starts from: which are still to download, and
starting from random weights instead."""

from __future__ import annotations

from studio.core.model.applications import APPLICATION, cached_weights, chosen_part
from studio.core.model.graph import Graph


def missing_weights(graph: Graph) -> list[str]:
    """Bases in ``graph`` that start from ImageNet weights not downloaded yet."""
    missing = []
    for node in graph.nodes:
        if node.type == APPLICATION.name:
            params = APPLICATION.resolved(node.params)
            if params["weights"] == "imagenet" and cached_weights(params["name"]) is None:
                missing.append(params["name"])
    return list(dict.fromkeys(missing))


def use_random_weights(graph: Graph) -> None:
    """Start every Application in ``graph`` from random weights, with all its layers learning."""
    for node in graph.nodes:
        if node.type == APPLICATION.name:
            part = chosen_part(APPLICATION.resolved(node.params))
            # A part that ends before it starts has no layers (the analysis says why).
            node.params.update(weights="random", trainable_layers=max(part.layers, 0))
