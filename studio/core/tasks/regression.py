"""Regression: the model answers a number (or a few) for each sample."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from studio.core.model.fixes import Fix, Problem, regression_fixes, set_activation, set_units
from studio.core.model.graph import Graph
from studio.core.model.layers import Shape
from studio.core.model.params import format_shape
from studio.core.tasks.task import Curve, DatasetFacts, Task

NO_EVALUATION = ("This run predicts numbers (regression), so it has no classes to confuse: "
                 "its mean squared error (loss) and mean absolute error per epoch are in the "
                 "run's metrics.")


class Regression(Task):
    """A number per sample, learnt with mean squared error and reported as mean absolute
    error."""

    name = "regression"
    title = "Regression"
    description = "Predict a number"
    label_kind = "numbers"
    evaluation_refusal = NO_EVALUATION
    summary_metrics = ("val_mae", "val_loss")
    curve = Curve("mae", "Mean absolute error", "MAE")

    def loss_specs(self, probabilities: Sequence[bool], kind: str | None = None,
                   class_weights: Sequence[float] | None = None
                   ) -> list[tuple[str, dict[str, Any]]]:
        return [("MeanSquaredError", {}) for _ in probabilities]

    def metrics(self, chosen: Sequence[str], probabilities: Sequence[bool] = (True,),
                class_weights: Sequence[float] | None = None) -> list[str]:
        return ["mae"]

    def check_output(self, graph: Graph, out: str, shapes: Mapping[str, Shape | None],
                     dataset: DatasetFacts, several: bool) -> list[Problem]:
        """A regression model ends in one number, without softmax."""
        shape = shapes[out]
        params = graph.node(out).resolved_params()
        if params.get("activation") == "softmax":
            message = (f"This layer ends in softmax, which turns outputs into class "
                       f"probabilities, but {dataset.title} is a regression task: the model "
                       f"predicts a number.")
            fixes: tuple[Fix, ...] = (set_activation(out, "linear"),)
            if shape != (1,) and "units" in params:
                fixes = (set_activation(out, "linear"), set_units(out, 1))
        elif shape == (1,):
            return []
        else:
            message = (f"The model's output is {format_shape(shape)}, but a regression model "
                       f"for {dataset.title} must output one number. End with Dense(1)."
                       + (" (Every layer that feeds nothing is an output of the model.)"
                          if several else ""))
            fixes = ((set_units(out, 1),) if "units" in params and len(shape) == 1
                     else regression_fixes(out, shape))
        return [Problem(out, message, fixes)]

    def answers(self, outputs: np.ndarray, class_names: Sequence[str],
                top_k: int) -> list[dict[str, Any]]:
        return [{"value": [float(v) for v in row]} for row in outputs]

    def answer_text(self, answer: Any) -> str:
        """``value 1.5, 20.25``."""
        return "value " + ", ".join(f"{v:.6g}" for v in answer.value)

    def agreement(self, outputs: np.ndarray, expected: np.ndarray) -> float | None:
        return None

    def synthetic_labels(self, size: int, output_shape: Shape | None = None) -> np.ndarray:
        return np.zeros((size, 1), np.float32)
