"""Optimizers and learning-rate schedules: one description, built as Keras objects or drawn.

A project's optimizer and schedule are first described as :class:`KerasCall` values (a Keras
class and its arguments, step counts given in epochs). ``make_optimizer`` builds them with
Keras, the exported script prints them as code, and ``schedule_curve`` computes the same
rates in NumPy so the window can draw them without loading TensorFlow.

Schedules are Keras ``LearningRateSchedule`` objects of the optimizer step, so an optimizer
reloaded from a checkpoint (with its ``iterations``) continues its schedule exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from studio.core.project.document import OPTIMIZERS, SCHEDULES, TrainingSettings

OPTIMIZER_CLASSES = {"sgd": "SGD", "adam": "Adam", "adamw": "AdamW", "rmsprop": "RMSprop",
                     "adagrad": "Adagrad", "nadam": "Nadam"}
"""The project's optimizer names, with their classes in ``keras.optimizers``."""

OPTIMIZER_HELP = {
    "sgd": "Stochastic gradient descent: steps down the gradient, keeping some of its previous "
           "direction with momentum. Simple and often the most accurate in the end, with a "
           "good schedule.",
    "adam": "Adam adapts each weight's step from running averages of its gradients. A safe "
            "default that needs little tuning.",
    "adamw": "Adam with weight decay applied to the weights directly, which regularizes "
             "better than Adam with decay. Needs a weight decay above 0.",
    "rmsprop": "RMSprop divides each step by the recent size of that weight's gradients. "
               "Common for recurrent networks.",
    "adagrad": "Adagrad gives rarely updated weights larger steps, and its steps shrink over "
               "time. Suits sparse inputs such as word embeddings.",
    "nadam": "Adam with Nesterov momentum (a look ahead before each step); often converges a "
             "little faster than Adam.",
}
"""What each optimizer does, in plain words."""

PARAMETERS_BY_OPTIMIZER: dict[str, tuple[str, ...]] = {
    "sgd": ("momentum", "nesterov", "weight_decay"),
    "adam": ("beta_1", "beta_2", "weight_decay"),
    "adamw": ("beta_1", "beta_2", "weight_decay"),
    "rmsprop": ("rho", "momentum", "weight_decay"),
    "adagrad": ("weight_decay",),
    "nadam": ("beta_1", "beta_2", "weight_decay"),
}
"""The ``TrainingSettings`` fields each optimizer uses (besides the learning rate)."""

SCHEDULE_LABELS = {"constant": "Constant", "step": "Step", "exponential": "Exponential",
                   "cosine": "Cosine with warm-up", "plateau": "Reduce on plateau"}
"""The schedule kinds as a person reads them."""

SCHEDULE_HELP = {
    "constant": "The learning rate stays the same for the whole run.",
    "step": "The rate is multiplied by the factor every few epochs.",
    "exponential": "The rate is multiplied by the factor every epoch, a little at each step.",
    "cosine": "The rate rises from 0 during the warm-up, then falls along a half cosine to "
              "the minimum by the last epoch.",
    "plateau": "The rate is multiplied by the factor whenever the validation loss has not "
               "improved for a number of epochs (the patience), down to the minimum.",
}
"""What each schedule kind does, in plain words."""

PARAMETERS_BY_SCHEDULE: dict[str, tuple[str, ...]] = {
    "constant": (),
    "step": ("step_epochs", "factor"),
    "exponential": ("factor",),
    "cosine": ("warmup_epochs", "min_learning_rate"),
    "plateau": ("factor", "patience", "min_learning_rate"),
}
"""The ``Schedule`` fields each schedule kind uses."""

PLATEAU_MONITOR = "val_loss"
"""What reduce-on-plateau watches."""

CURVE_POINTS = 400
"""About how many points ``schedule_curve`` computes (more where the rate jumps)."""


@dataclass(frozen=True)
class EpochSteps:
    """A number of optimizer steps given in epochs: ``epochs * steps_per_epoch``."""

    epochs: int


@dataclass(frozen=True)
class KerasCall:
    """A Keras class, by its path below ``keras`` (``optimizers.SGD``), with keyword arguments.

    Argument values are plain values, :class:`EpochSteps` or other calls.
    """

    path: str
    kwargs: dict[str, Any]

    def build(self, steps_per_epoch: int) -> Any:
        """The Keras object, with step counts for ``steps_per_epoch`` steps per epoch."""
        import keras

        target: Any = keras
        for part in self.path.split("."):
            target = getattr(target, part)
        return target(**{key: _built(value, steps_per_epoch)
                         for key, value in self.kwargs.items()})

    def source(self, steps_name: str = "steps_per_epoch") -> str:
        """Python code for this call, with step counts written in terms of ``steps_name``."""
        arguments = ", ".join(f"{key}={_source(value, steps_name)}"
                              for key, value in self.kwargs.items())
        return f"keras.{self.path}({arguments})"


def _built(value: Any, steps_per_epoch: int) -> Any:
    if isinstance(value, EpochSteps):
        return value.epochs * steps_per_epoch
    if isinstance(value, KerasCall):
        return value.build(steps_per_epoch)
    return value


def _source(value: Any, steps_name: str) -> str:
    if isinstance(value, EpochSteps):
        return steps_name if value.epochs == 1 else f"{value.epochs} * {steps_name}"
    if isinstance(value, KerasCall):
        return value.source(steps_name)
    return repr(value)


def schedule_problems(settings: TrainingSettings) -> list[str]:
    """Why the learning rate, its schedule or the optimizer's parameters cannot work as set,
    in plain words (empty when they can)."""
    schedule = settings.schedule
    lr, kind = settings.learning_rate, schedule.kind
    problems = []
    if settings.optimizer not in OPTIMIZERS:
        problems.append(f"Unknown optimizer {settings.optimizer!r}.")
    if kind not in SCHEDULES:
        problems.append(f"Unknown learning-rate schedule {kind!r}.")
    if not (math.isfinite(lr) and lr > 0):
        return [*problems, "The learning rate must be a number above 0."]
    if settings.optimizer == "adamw" and settings.weight_decay <= 0:
        problems.append("AdamW with no weight decay is plain Adam: set a weight decay above 0 "
                        "(0.004 is usual) or pick Adam.")
    uses = PARAMETERS_BY_SCHEDULE.get(kind, ())
    if "factor" in uses and schedule.factor == 1:
        problems.append("A factor of 1 keeps the rate constant: pick a factor below 1 "
                        "(0.5 halves it).")
    elif "factor" in uses and not 0 < schedule.factor < 1:
        problems.append(f"The factor must be above 0 and below 1 (it is {schedule.factor:g}).")
    if kind == "cosine" and schedule.warmup_epochs >= settings.epochs:
        problems.append(f"The warm-up ({schedule.warmup_epochs} epochs) is as long as the run "
                        f"({settings.epochs} epochs) or longer, so the rate would never fall: "
                        "shorten the warm-up or train for more epochs.")
    if "min_learning_rate" in uses and schedule.min_learning_rate >= lr:
        problems.append(f"The minimum learning rate ({schedule.min_learning_rate:g}) is not "
                        f"below the learning rate ({lr:g}), so the rate could never fall: "
                        "lower the minimum.")
    return problems


def schedule_call(settings: TrainingSettings) -> KerasCall | float:
    """The learning rate the optimizer gets: a Keras schedule, or a float (constant and
    plateau; plateau lowers it through ``callback_calls``)."""
    schedule, lr = settings.schedule, float(settings.learning_rate)
    schedules = "optimizers.schedules."
    if schedule.kind == "step":
        return KerasCall(schedules + "ExponentialDecay", {
            "initial_learning_rate": lr, "decay_steps": EpochSteps(schedule.step_epochs),
            "decay_rate": float(schedule.factor), "staircase": True})
    if schedule.kind == "exponential":
        return KerasCall(schedules + "ExponentialDecay", {
            "initial_learning_rate": lr, "decay_steps": EpochSteps(1),
            "decay_rate": float(schedule.factor)})
    if schedule.kind == "cosine":
        warmup = schedule.warmup_epochs
        kwargs: dict[str, Any] = {
            "initial_learning_rate": 0.0 if warmup else lr,
            "decay_steps": EpochSteps(settings.epochs - warmup),
            "alpha": float(schedule.min_learning_rate) / lr,
        }
        if warmup:
            kwargs.update(warmup_target=lr, warmup_steps=EpochSteps(warmup))
        return KerasCall(schedules + "CosineDecay", kwargs)
    return lr


def optimizer_call(settings: TrainingSettings) -> KerasCall:
    """The project's optimizer with the parameters that apply to it and its learning rate."""
    kwargs: dict[str, Any] = {"learning_rate": schedule_call(settings)}
    for name in PARAMETERS_BY_OPTIMIZER[settings.optimizer]:
        value = getattr(settings, name)
        if name == "weight_decay" and not value and settings.optimizer != "adamw":
            continue  # Keras skips the decay step entirely when it is None
        kwargs[name] = value if isinstance(value, bool) else float(value)
    return KerasCall(f"optimizers.{OPTIMIZER_CLASSES[settings.optimizer]}", kwargs)


def callback_calls(settings: TrainingSettings) -> list[KerasCall]:
    """Keras callbacks the schedule needs during ``fit``: reduce-on-plateau, or none."""
    schedule = settings.schedule
    if schedule.kind != "plateau":
        return []
    return [KerasCall("callbacks.ReduceLROnPlateau", {
        "monitor": PLATEAU_MONITOR, "factor": float(schedule.factor),
        "patience": int(schedule.patience), "min_lr": float(schedule.min_learning_rate)})]


def make_optimizer(settings: TrainingSettings, steps_per_epoch: int) -> Any:
    """A Keras optimizer for ``settings``, its schedule counted in steps of
    ``steps_per_epoch`` batches. Raise ValueError (plain words) if the settings cannot work."""
    problems = schedule_problems(settings)
    if problems:
        raise ValueError(" ".join(problems))
    if steps_per_epoch < 1:
        raise ValueError(f"An epoch needs at least one step (got {steps_per_epoch}).")
    return reduce_only_across_devices(optimizer_call(settings).build(steps_per_epoch))


def reduce_only_across_devices(optimizer: Any) -> Any:
    """Make ``optimizer`` (or the one a loss-scale optimizer wraps) all-reduce its gradients
    only under a distribution strategy, that is across several devices; return it.

    On one device Keras (3.3 and later) still all-reduces them through TensorFlow's default
    replica context: a no-op, but made with ``tf.custom_gradient``, which registers its
    gradient for good in a global registry with a closure that holds the traced train step
    (tensorflow/tensorflow#97697). Every model fitted in a process stayed in memory, even
    after ``keras.backend.clear_session``: ~5 MB a trial in a search worker.
    """
    import tensorflow as tf

    inner = getattr(optimizer, "inner_optimizer", optimizer)
    all_reduce = getattr(inner, "_all_reduce_sum_gradients", None)
    if all_reduce is None:  # an older Keras, which does not all-reduce
        return optimizer

    def across_devices(grads_and_vars: Any) -> Any:
        return all_reduce(grads_and_vars) if tf.distribute.has_strategy() else grads_and_vars

    inner._all_reduce_sum_gradients = across_devices
    return optimizer


def schedule_callbacks(settings: TrainingSettings) -> list[Any]:
    """Keras callbacks to add to ``fit`` for the schedule (ReduceLROnPlateau for plateau)."""
    return [call.build(1) for call in callback_calls(settings)]


def current_learning_rate(optimizer: Any) -> float:
    """The rate ``optimizer``'s next update uses: its schedule at its ``iterations``, or its
    (possibly reduced) float rate. On a curve it belongs at ``iterations / steps_per_epoch``."""
    import keras

    return float(keras.ops.convert_to_numpy(optimizer.learning_rate))


def optimizer_slots(settings: TrainingSettings) -> int:
    """How many tensors the size of each weight the optimizer keeps (momentum and the like)."""
    momentum = settings.momentum > 0
    return {"sgd": int(momentum), "adam": 2, "adamw": 2, "nadam": 2,
            "rmsprop": 1 + int(momentum), "adagrad": 1}[settings.optimizer]


class ScheduleCurve(NamedTuple):
    """The learning rate over a run: ``x`` in epochs (step / steps per epoch) and ``rate``.

    ``note`` is empty unless the rate depends on how training goes (reduce on plateau): then
    ``rate`` is the starting rate and ``note`` says when it drops.
    """

    x: np.ndarray
    rate: np.ndarray
    note: str


def schedule_curve(settings: TrainingSettings, epochs: int, steps_per_epoch: int,
                   points: int = CURVE_POINTS) -> ScheduleCurve:
    """The rate each step's update uses over ``epochs`` epochs, computed like Keras's
    schedules but in NumPy (no TensorFlow): about ``points`` steps, plus both sides of
    every jump, and the last step's rate again at the end of the run (``x == epochs``)."""
    spe = max(1, int(steps_per_epoch))
    total = max(1, int(epochs)) * spe
    steps = np.sort(np.concatenate([
        np.round(np.linspace(0, total - 1, min(points, total))),
        _jumps(settings, spe, total),
    ])).astype(np.float64)
    # Each step once; not np.unique, whose first call imports numpy.ma (0.1 s of start-up).
    steps = steps[np.concatenate([[True], np.diff(steps) > 0])]
    rates = _rates(settings, steps, spe)
    schedule = settings.schedule
    note = ""
    if schedule.kind == "plateau":
        note = (f"Starts at {settings.learning_rate:g} and is multiplied by {schedule.factor:g} "
                f"after {schedule.patience} epochs without a lower validation loss, down to "
                f"{schedule.min_learning_rate:g}.")
    return ScheduleCurve(np.append(steps / spe, total / spe), np.append(rates, rates[-1]), note)


def _jumps(settings: TrainingSettings, spe: int, total: int) -> np.ndarray:
    """Steps on both sides of each place where the rate jumps or turns, before ``total``."""
    schedule = settings.schedule
    if schedule.kind == "step" and schedule.step_epochs >= 1:
        at = np.arange(schedule.step_epochs * spe, total, schedule.step_epochs * spe)
    elif schedule.kind == "cosine" and schedule.warmup_epochs:
        at = np.array([schedule.warmup_epochs * spe])
    else:
        return np.empty(0)
    at = at[at < total]
    return np.concatenate([at - 1, at])


def _rates(settings: TrainingSettings, steps: np.ndarray, spe: int) -> np.ndarray:
    """The schedule's rate at each of ``steps`` (as Keras computes it, in float64)."""
    schedule, lr = settings.schedule, float(settings.learning_rate)
    if schedule.kind == "step":
        return lr * schedule.factor ** np.floor(steps / (max(1, schedule.step_epochs) * spe))
    if schedule.kind == "exponential":
        return lr * schedule.factor ** (steps / spe)
    if schedule.kind == "cosine":
        warmup = schedule.warmup_epochs * spe
        decay = max(1, (settings.epochs - schedule.warmup_epochs) * spe)
        alpha = schedule.min_learning_rate / lr
        clipped = np.minimum(steps, warmup + decay)
        falling = np.maximum(clipped - warmup, 0) / decay
        cosine = lr * ((1 - alpha) * 0.5 * (1 + np.cos(np.pi * falling)) + alpha)
        return np.where(clipped < warmup, lr * clipped / max(warmup, 1), cosine)
    return np.full(steps.shape, lr)
