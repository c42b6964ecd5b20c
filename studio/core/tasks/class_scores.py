"""How a classifier scores on a split: accuracy, the confusion matrix, per-class precision,
recall and F1, and the answers behind each cell."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

NEVER_PREDICTED = ("Precision is 0 for a class the model never answered ({names}): no "
                   "answer of it was right, as none was given.")


def per_class_scores(confusion: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall, F1 and support of each class from a confusion matrix (rows: true
    class, columns: answer). A score whose denominator is 0 is 0, not NaN: precision of a
    class never answered, recall of a class absent from the split, F1 when both are 0."""
    confusion = np.asarray(confusion, dtype=np.int64)
    right = np.diag(confusion).astype(np.float64)
    answered = confusion.sum(axis=0)
    support = confusion.sum(axis=1)
    precision = np.divide(right, answered, out=np.zeros_like(right), where=answered > 0)
    recall = np.divide(right, support, out=np.zeros_like(right), where=support > 0)
    both = precision + recall
    f1 = np.divide(2 * precision * recall, both, out=np.zeros_like(right), where=both > 0)
    return precision, recall, f1, support


@dataclass
class Evaluation:
    """A model's answers on one split and the scores they make.

    Per-sample arrays are in split order; a *position* indexes them (0 to n - 1) and
    ``indices[position]`` is that sample's index in the whole dataset. ``notes`` tell the
    person what to keep in mind (data changed since training, classes never answered).
    """

    split: str
    class_names: list[str]
    loss: float
    accuracy: float
    confusion: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    support: np.ndarray
    true: np.ndarray
    predicted: np.ndarray
    confidence: np.ndarray
    indices: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    notes: list[str] = field(default_factory=list)
    samples: Any = field(default=None, repr=False, compare=False)
    """The dataset's samples, to show those behind an answer (``data.display``)."""

    @classmethod
    def of_answers(cls, split: str, class_names: Sequence[str], true: np.ndarray,
                   probabilities: np.ndarray, loss: float, indices: np.ndarray | None = None,
                   samples: Any = None, notes: Sequence[str] = ()) -> Evaluation:
        """The evaluation of ``probabilities`` (n × classes) against the ``true`` classes."""
        names = [str(n) for n in class_names]
        true = np.asarray(true, dtype=np.int64)
        probabilities = np.asarray(probabilities, dtype=np.float64)
        predicted = probabilities.argmax(axis=1) if len(true) else np.zeros(0, np.int64)
        confidence = probabilities.max(axis=1) if len(true) else np.zeros(0)
        k = len(names)
        confusion = np.bincount(true * k + predicted, minlength=k * k).reshape(k, k)
        precision, recall, f1, support = per_class_scores(confusion)
        never = [names[i] for i in np.flatnonzero(confusion.sum(axis=0) == 0)]
        notes = list(notes) + ([NEVER_PREDICTED.format(names=", ".join(never))] if never else [])
        return cls(split, names, float(loss), float(np.trace(confusion) / max(len(true), 1)),
                   confusion, precision, recall, f1, support, true, predicted.astype(np.int64),
                   confidence,
                   np.arange(len(true), dtype=np.int64) if indices is None else indices,
                   notes, samples)

    def cell(self, true_class: int, predicted_class: int) -> np.ndarray:
        """Positions of the samples of ``true_class`` answered ``predicted_class``, in split
        order."""
        return np.flatnonzero((self.true == true_class) & (self.predicted == predicted_class))

    def confident_mistakes(self, count: int) -> np.ndarray:
        """Positions of up to ``count`` wrong answers, the most confident first."""
        wrong = np.flatnonzero(self.true != self.predicted)
        return wrong[np.argsort(-self.confidence[wrong], kind="stable")][:count]

    def sample_indices(self, positions: Sequence[int]) -> list[int]:
        """The dataset indices of the samples at ``positions`` (to show them)."""
        return [int(self.indices[p]) for p in positions]

    def to_dict(self) -> dict[str, Any]:
        """The scores as JSON-ready values (no per-sample arrays). Precision is 0 for a class
        never answered (``answered`` is 0), recall 0 for a class absent from the split."""
        answered = self.confusion.sum(axis=0)
        return {
            "split": self.split,
            "samples": int(len(self.true)),
            "loss": self.loss,
            "accuracy": self.accuracy,
            "mistakes": int(np.sum(self.true != self.predicted)),
            "class_names": self.class_names,
            "confusion": self.confusion.tolist(),
            "per_class": [
                {"class": name, "precision": float(self.precision[i]),
                 "recall": float(self.recall[i]), "f1": float(self.f1[i]),
                 "support": int(self.support[i]), "answered": int(answered[i])}
                for i, name in enumerate(self.class_names)],
            "macro": {"precision": float(np.mean(self.precision)),
                      "recall": float(np.mean(self.recall)), "f1": float(np.mean(self.f1))},
            "notes": list(self.notes),
        }


NAME_WIDTH = 16
"""The most characters of a class name a text table shows."""
COLUMN_WIDTH = 8
"""The most characters of a class name heading a column of the confusion matrix."""


def _name(name: str, width: int = NAME_WIDTH) -> str:
    return name if len(name) <= width else name[: width - 1].rstrip() + "…"


def evaluation_text(evaluation: Evaluation) -> str:
    """``evaluation`` as plain text: accuracy and loss, a table of each class's precision,
    recall, F1 and support with their macro average, the confusion matrix (rows: true class,
    columns: answer) and the notes."""
    names = [_name(n) for n in evaluation.class_names]
    first = max(len("macro average"), *(len(n) for n in names))
    mistakes = int(np.sum(evaluation.true != evaluation.predicted))
    lines = [f"{len(evaluation.true):,} samples: accuracy {evaluation.accuracy:.2%}, loss "
             f"{evaluation.loss:.4f}, {mistakes:,} {'mistake' if mistakes == 1 else 'mistakes'}",
             "",
             f"{'class':<{first}}  precision  recall      F1  support"]
    rows = zip(names, evaluation.precision, evaluation.recall, evaluation.f1,
               evaluation.support, strict=True)
    lines += [f"{name:<{first}}  {p:9.4f}  {r:6.4f}  {f:6.4f}  {int(s):7,}"
              for name, p, r, f, s in rows]
    lines += [f"{'macro average':<{first}}  {np.mean(evaluation.precision):9.4f}  "
              f"{np.mean(evaluation.recall):6.4f}  {np.mean(evaluation.f1):6.4f}  "
              f"{int(np.sum(evaluation.support)):7,}", "",
              "Confusion matrix (rows: true class, columns: answer)"]
    heads = [_name(n, COLUMN_WIDTH) for n in evaluation.class_names]
    digits = len(f"{int(evaluation.confusion.max(initial=0)):,}")
    widths = [max(digits, len(head)) for head in heads]
    lines.append(" " * first + "".join(f"  {h:>{w}}" for h, w in zip(heads, widths,
                                                                      strict=True)))
    lines += [f"{name:<{first}}" + "".join(f"  {int(v):>{w},}" for v, w in zip(row, widths,
                                                                                 strict=True))
              for name, row in zip(names, evaluation.confusion, strict=True)]
    lines += [f"Note: {note}" for note in evaluation.notes]
    return "\n".join(lines)
