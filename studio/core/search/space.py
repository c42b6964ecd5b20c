"""What a hyperparameter search varies: its dimensions, its strategy, and the checks that say
in plain words why a space cannot be searched.

A dimension's ``target`` names one value of the project: a training setting
(``training.learning_rate``, ``training.schedule.kind``), a layer parameter
(``layer.dense_1.units``), or whether a layer is in the model at all
(``layer.dropout_1.present``, on or off: a trial without it wires its input to its outputs),
or how many times a marked block is in the model (``block.block_1.repeats``, 0 to 8).
It takes either a list of ``values`` or a range ``low``..``high`` on a linear or log
``scale``, cut by a ``step`` (added on a linear scale, multiplied on a log one) or into
``count`` points. Grid search tries every combination of those points; the other strategies
sample the range itself (whole numbers for whole-number parameters).
"""

from __future__ import annotations

import copy
import math
from typing import Any

from studio.core.base.messages import quoted, shortened, unknown_choice
from studio.core.build.analysis import Analysis, analyze
from studio.core.model.blocks import MAX_REPEATS, block_ends, repeat_block
from studio.core.model.graph import GraphError
from studio.core.model.params import Param, format_shape
from studio.core.model.registry import REGISTRY
from studio.core.project.document import (
    OBJECTIVES,
    SCALES,
    STRATEGIES,
    Dimension,
    Project,
    SearchSettings,
    project_schema,
)
from studio.core.tasks.registry import task_for

STRATEGY_NAMES = {"grid": "Grid", "random": "Random", "bayes": "Bayesian (TPE)",
                  "hyperband": "Hyperband"}
OBJECTIVE_NAMES = {"latency": "Latency (ms per sample)", "params": "Parameters",
                   "size": "Model file size (bytes)"}
"""The extra objectives, as the Search tab and the front's axes name them."""
MAX_GRID_POINTS = 10_000
"""The most combinations a grid may have; more is refused as a mistake."""
TRAINING_TARGETS = ("learning_rate", "batch_size", "optimizer", "epochs", "momentum",
                    "weight_decay", "schedule.kind", "beta_1", "beta_2", "rho", "nesterov")
"""Training settings that can be searched, as paths under ``training``."""
TRAINING_PREFIX = "training."
LAYER_PREFIX = "layer."
SEARCHABLE_KINDS = ("int", "float", "choice", "bool")
"""The kinds of layer parameter a search can vary (a shape cannot)."""
PRESENT = "present"
"""The pseudo-parameter of a layer target that says whether the layer is in the model."""
PRESENT_PARAM = Param(PRESENT, "bool", True, "Whether the layer is in the model")
BLOCK_PREFIX = "block."
REPEATS = "repeats"
"""The pseudo-parameter of a block target: how many times the block is in the model."""
REPEATS_PARAM = Param(REPEATS, "int", 1, "How many times the block is in the model, one "
                      "copy after another", minimum=0, maximum=MAX_REPEATS)


DEFAULT_POINTS = 3
"""How many points a range is cut into when nothing else is said."""
TRUE_WORDS = ("on", "true", "yes", "1")
FALSE_WORDS = ("off", "false", "no", "0")
"""How a typed on/off value may be written."""


class SearchSpaceError(ValueError):
    """A dimension or a search setting that cannot be used; the message is for a person."""


def training_target(path: str) -> str:
    """The target of training setting ``path`` (``learning_rate``, ``schedule.kind``)."""
    return TRAINING_PREFIX + path


def layer_target(node_id: str, param: str) -> str:
    """The target of parameter ``param`` of layer ``node_id``."""
    return f"{LAYER_PREFIX}{node_id}.{param}"


def presence_target(node_id: str) -> str:
    """The target that says whether layer ``node_id`` is in the model."""
    return layer_target(node_id, PRESENT)


def repeats_target(block: str) -> str:
    """The target that says how many times block ``block`` is in the model."""
    return f"{BLOCK_PREFIX}{block}.{REPEATS}"


def _split_block(target: str) -> tuple[str, str]:
    block, _, param = target[len(BLOCK_PREFIX):].rpartition(".")
    return block, param


def repeats_problem(project: Project, block: str, times: int) -> str | None:
    """Why a trial cannot put block ``block`` in the model ``times`` times, or None: its
    copies must build, each fed what the block's exit gives (which a block that shrinks its
    input may not take again), and so must the layers after it."""
    graph = project.graph.copy()
    try:
        copies = repeat_block(graph, block, times)
    except GraphError as exc:
        return f"{block}: {exc}"
    found = analyze(graph).problems
    if not found:
        return None
    # a copy's id is made for the trial; a person knows the layer it copies
    named = {copy_id: f"copy {k + 2}'s {node_id}" for node_id, ids in copies.items()
             for k, copy_id in enumerate(ids)}
    where = f"{named.get(found[0].node_id, found[0].node_id)}: " if found[0].node_id else ""
    count = "once" if times == 1 else f"{times} times"
    return f"{block} cannot be in the model {count}: {where}{found[0].message}"


def bypass_problem(project: Project, node_id: str,
                   analysis: Analysis | None = None) -> str | None:
    """Why a trial cannot leave layer ``node_id`` out, or None if it can. Only a layer with
    one input whose output has its input's shape (a Dropout, a BatchNormalization) can go:
    the layers after it then see what they saw, so the model still builds. ``analysis``:
    the model's, when the caller has it (made here otherwise)."""
    graph = project.graph
    feeds = graph.inputs_of(node_id)
    if len(feeds) != 1 or not graph.outputs_of(node_id):
        return (f"{node_id} cannot be left out of the model: only a layer between one input "
                "and the layers it feeds can.")
    reports = (analysis or analyze(graph)).nodes
    if node_id not in reports or feeds[0] not in reports:
        return f"{node_id} cannot be left out of the model while its shapes are unknown."
    before, after = reports[feeds[0]].output_shape, reports[node_id].output_shape
    if before != after:
        return (f"{node_id} cannot be left out of the model: it changes the shape from "
                f"{format_shape(before)} to {format_shape(after)}.")
    return None


def bypassable_layers(project: Project) -> list[str]:
    """The layers a trial can leave out of ``project``'s model, in document order."""
    analysis = analyze(project.graph)  # one for every layer, not one each
    return [node_id for node_id in project.graph.ids()
            if bypass_problem(project, node_id, analysis) is None]


def _split_layer(target: str) -> tuple[str, str]:
    node_id, _, param = target[len(LAYER_PREFIX):].rpartition(".")
    return node_id, param


def _schema_param(path: str) -> Param:
    """A training setting's rules, read from the project schema (one source of truth)."""
    schema = project_schema()["properties"]["training"]
    *parents, name = path.split(".")
    for parent in parents:
        schema = schema["properties"][parent]
    spec = schema["properties"][name]
    name = parents[-1] if name == "kind" else name  # the schedule's kind reads "Schedule"
    if "enum" in spec:
        return Param(name, "choice", None, "", choices=tuple(spec["enum"]))
    kind = {"number": "float", "integer": "int", "boolean": "bool"}[spec["type"]]
    low = spec.get("minimum", spec.get("exclusiveMinimum"))
    high = spec.get("maximum", spec.get("exclusiveMaximum"))
    return Param(name, kind, None, "", minimum=low, maximum=high,
                 exclusive_maximum="exclusiveMaximum" in spec,
                 exclusive_minimum="exclusiveMinimum" in spec)


def param_for(project: Project, target: str) -> Param:
    """The rules of the value ``target`` names; SearchSpaceError if there is no such value."""
    if target.startswith(TRAINING_PREFIX):
        path = target[len(TRAINING_PREFIX):]
        if path not in TRAINING_TARGETS:
            raise SearchSpaceError(f"The training setting {quoted(path)} cannot be searched.")
        return _schema_param(path)
    if target.startswith(LAYER_PREFIX):
        node_id, name = _split_layer(target)
        if node_id not in project.graph.ids():
            raise SearchSpaceError(f"The layer {quoted(node_id)} is no longer in the model.")
        if name == PRESENT:
            problem = bypass_problem(project, node_id)
            if problem:
                raise SearchSpaceError(problem)
            return PRESENT_PARAM
        try:
            param = REGISTRY[project.graph.node(node_id).type].param(name)
        except KeyError:
            raise SearchSpaceError(f"The layer {quoted(node_id)} has no parameter "
                                   f"{quoted(name)}.") from None
        if param.kind not in SEARCHABLE_KINDS:
            raise SearchSpaceError(f"{node_id}'s {param.words} cannot be searched.")
        return param
    if target.startswith(BLOCK_PREFIX):
        block, name = _split_block(target)
        if block not in project.graph.blocks:
            raise SearchSpaceError(f"The block {quoted(block)} is no longer in the model.")
        if name != REPEATS:
            raise SearchSpaceError(f"A block's number of repeats can be searched, not its "
                                   f"{quoted(name)}.")
        try:
            block_ends(project.graph, project.graph.blocks[block])
        except GraphError as exc:
            raise SearchSpaceError(f"{block}: {exc}") from None
        return REPEATS_PARAM
    raise SearchSpaceError(f"{quoted(target)} is neither a training setting, a layer "
                           "parameter nor a block.")


def search_targets(project: Project) -> list[str]:
    """Every value of ``project`` a search can vary: the training settings, then each layer's
    searchable parameters, then the presence of each layer a trial can leave out, then the
    repeats of each marked block."""
    return [training_target(path) for path in TRAINING_TARGETS] + [
        layer_target(node.id, param.name) for node in project.graph.nodes
        for param in searchable_params(node.type)] + [
        presence_target(node_id) for node_id in bypassable_layers(project)] + [
        repeats_target(block) for block in project.graph.blocks]


def parse_number(text: str, param: Param) -> float | int:
    """A typed number for ``param`` (whole for whole-number parameters); SearchSpaceError
    says in words what is wrong with it."""
    typed = text.strip()
    try:
        value = float(typed)
    except ValueError:
        what = f"“{shortened(typed)}” is not a number" if typed else "A value is missing"
        raise SearchSpaceError(f"{param.label}: {what}.") from None
    if not math.isfinite(value):
        raise SearchSpaceError(f"{param.label}: {typed} is not a usable number.")
    if param.kind == "int":
        if value != int(value):
            raise SearchSpaceError(f"{param.label} takes whole numbers, not {typed}.")
        return int(value)
    return value


def parse_value(text: str, param: Param) -> Any:
    """A typed value of any searchable kind: a number, a choice (checked later, with the
    parameter's rules) or on/off."""
    if param.kind in ("int", "float"):
        return parse_number(text, param)
    typed = text.strip()
    if param.kind == "bool":
        if typed.lower() in TRUE_WORDS + FALSE_WORDS:
            return typed.lower() in TRUE_WORDS
        raise SearchSpaceError(f"{param.label} is on or off, not “{shortened(typed)}”.")
    return typed


def parse_values(text: str, param: Param) -> list[Any]:
    """The comma-separated values of ``text`` for ``param``."""
    return [parse_value(part, param) for part in text.split(",") if part.strip()]


def searchable_params(layer_type: str) -> list[Param]:
    """The parameters of layers of type ``layer_type`` that a search can vary."""
    return [p for p in REGISTRY[layer_type].params if p.kind in SEARCHABLE_KINDS]


def target_label(target: str) -> str:
    """How a target is named to a person: ``Learning rate``, ``dense_1 · Units``."""
    if target.startswith(TRAINING_PREFIX):
        return _schema_param(target[len(TRAINING_PREFIX):]).label
    if target.startswith(BLOCK_PREFIX):
        return f"{_split_block(target)[0]} · Repeats"
    node_id, name = _split_layer(target)
    return f"{node_id} · {name.replace('_', ' ').capitalize()}"


def current_value(project: Project, target: str) -> Any:
    """The value ``target`` has in ``project``."""
    if target.startswith(TRAINING_PREFIX):
        value: Any = project.training
        for part in target[len(TRAINING_PREFIX):].split("."):
            value = getattr(value, part)
        return value
    if target.startswith(BLOCK_PREFIX):
        return 1  # the model as drawn has each block once
    node_id, name = _split_layer(target)
    if name == PRESENT:
        return node_id in project.graph.ids()
    node = project.graph.node(node_id)
    return REGISTRY[node.type].resolved(node.params)[name]


def start_value(project: Project, target: str) -> Any:
    """The current value of ``target`` as one point a search can try. A search tries one size
    for every axis of a per-axis size, so one that differs between axes starts from its
    largest."""
    value = current_value(project, target)
    return max(value) if isinstance(value, list) else value


def apply_values(project: Project, values: dict[str, Any]) -> Project:
    """A copy of ``project`` with each target in ``values`` set to its value. After every
    parameter is set, each block is repeated (its copies take the trial's parameters), then
    the layers whose presence is off go, with their copies, each one's single input wired to
    its outputs."""
    result = project.copy()
    absent = []
    repeats = {}
    for target, value in values.items():
        if target.startswith(BLOCK_PREFIX):
            repeats[_split_block(target)[0]] = value
        elif target.startswith(TRAINING_PREFIX):
            *parents, name = target[len(TRAINING_PREFIX):].split(".")
            holder: Any = result.training
            for part in parents:
                holder = getattr(holder, part)
            setattr(holder, name, copy.deepcopy(value))
        else:
            node_id, name = _split_layer(target)
            if name != PRESENT:
                result.graph.node(node_id).params[name] = copy.deepcopy(value)
            elif not value:
                absent.append(node_id)
    copies: dict[str, list[str]] = {}
    for block, times in repeats.items():
        copies.update(repeat_block(result.graph, block, times))
    left = set(result.graph.ids())
    result.graph.dissolve(i for node_id in absent for i in [node_id, *copies.get(node_id, [])]
                          if i in left)
    return result


def _as_kind(param: Param, value: float) -> Any:
    return int(round(value)) if param.kind == "int" else float(value)


def grid_points(dimension: Dimension, param: Param) -> list[Any]:
    """The values a grid tries for ``dimension``: its list, or its range cut by step or count
    (whole numbers rounded, repeats dropped). Raises SearchSpaceError for a bad range."""
    if not dimension.is_range:
        return list(dimension.values or [])
    low, high = _range_bounds(dimension, param)
    log = dimension.scale == "log"
    if dimension.count is not None:
        if dimension.count < 1:
            raise SearchSpaceError(f"{param.label}: the number of points must be at least 1.")
        n = dimension.count
        if n == 1:
            raw = [low]
        elif log:
            raw = [math.exp(math.log(low) + i * (math.log(high) - math.log(low)) / (n - 1))
                   for i in range(n)]
        else:
            raw = [low + i * (high - low) / (n - 1) for i in range(n)]
    elif dimension.step is not None:
        raw = _stepped(low, high, dimension.step, log, param)
    else:
        raise SearchSpaceError(f"{param.label}: give the range a step or a number of points.")
    points: list[Any] = []
    for value in raw:
        value = _as_kind(param, value)
        if param.kind == "float":
            value = float(f"{value:.6g}")
        if value not in points:
            points.append(value)
    return points


def _stepped(low: float, high: float, step: float, log: bool, param: Param) -> list[float]:
    if log and step <= 1:
        raise SearchSpaceError(f"{param.label}: on a log scale the step multiplies, so it must "
                               f"be more than 1, not {step:g}.")
    if not log and step <= 0:
        raise SearchSpaceError(f"{param.label}: the step must be more than 0, not {step:g}.")
    raw, value = [], low
    tolerance = 1e-9 * max(abs(high), 1.0)
    while value <= high + tolerance and len(raw) <= MAX_GRID_POINTS:
        raw.append(value)
        value = value * step if log else low + len(raw) * step
    return raw


def _range_bounds(dimension: Dimension, param: Param) -> tuple[float, float]:
    """The range's ends, checked against each other, the scale and the parameter's rules."""
    if param.kind not in ("int", "float"):
        raise SearchSpaceError(f"{param.label} is not a number: list its values instead.")
    if dimension.low is None or dimension.high is None:
        raise SearchSpaceError(f"{param.label}: the range needs a lowest and a highest value.")
    low, high = float(dimension.low), float(dimension.high)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise SearchSpaceError(f"{param.label}: the range must be finite.")
    if low > high:
        raise SearchSpaceError(f"{param.label}: the lowest value {low:g} is above the highest "
                               f"{high:g}.")
    if dimension.scale not in SCALES:
        raise SearchSpaceError(f"{param.label}: the scale must be linear or log.")
    if dimension.scale == "log" and low <= 0:
        raise SearchSpaceError(f"{param.label}: a log scale needs values above 0, not "
                               f"{low:g}.")
    for end in (low, high):
        problem = param.check(_as_kind(param, end))
        if problem:
            raise SearchSpaceError(problem)
    return low, high


def check_dimension(project: Project, dimension: Dimension) -> list[Any]:
    """The grid points of ``dimension``, after checking every one against the parameter's
    rules; raises SearchSpaceError naming the first problem."""
    param = param_for(project, dimension.target)
    if not dimension.is_range and dimension.values == []:
        raise SearchSpaceError(f"{param.label}: give at least one value.")
    points = grid_points(dimension, param)
    for value in points:
        problem = param.check(value)
        if problem:
            raise SearchSpaceError(problem)
    if dimension.target.startswith(BLOCK_PREFIX):
        block = _split_block(dimension.target)[0]
        # a sampled range may draw any whole number in it, not only the grid's points
        tried = (range(int(dimension.low), int(dimension.high) + 1) if dimension.is_range
                 else points)
        for times in tried:
            problem = repeats_problem(project, block, times)
            if problem:
                raise SearchSpaceError(problem)
    return points


def problems(project: Project, search: SearchSettings) -> list[str]:
    """Everything that stops ``search`` from running, in plain words (empty if none)."""
    found: list[str] = []
    if not search.dimensions:
        found.append("The search space is empty: make at least one setting or layer "
                     "parameter a search dimension.")
    seen: set[str] = set()
    for dimension in search.dimensions:
        if dimension.target in seen:
            found.append(f"{target_label(dimension.target)} is searched twice.")
        seen.add(dimension.target)
        try:
            check_dimension(project, dimension)
        except SearchSpaceError as exc:
            found.append(str(exc))
    if search.strategy not in STRATEGIES:
        found.append(unknown_choice("strategy", search.strategy, STRATEGIES))
    elif search.strategy != "grid" and search.trials < 1:
        found.append("The number of trials must be at least 1.")
    if search.workers < 1:
        found.append("At least one trial must run at a time.")
    if search.startup_trials is not None and search.startup_trials < 1:
        found.append("The random start-up trials must be at least 1.")
    found.extend(objective_problems(search))
    if not found and search.strategy == "grid" and grid_size(project, search) > MAX_GRID_POINTS:
        found.append(f"The grid has {grid_size(project, search):,} combinations, more than "
                     f"{MAX_GRID_POINTS:,}: use fewer values, or random or Bayesian search.")
    return found


def objective_problems(search: SearchSettings) -> list[str]:
    """What is wrong with ``search``'s extra objectives, in plain words (empty if nothing)."""
    found = [unknown_choice("objective", name, OBJECTIVES)
             for name in search.objectives if name not in OBJECTIVES]
    if len(set(search.objectives)) < len(search.objectives):
        found.append("An objective is listed twice.")
    if {"params", "size"} <= set(search.objectives):
        found.append("Choose parameters or model file size as an objective, not both: they "
                     "measure the same thing.")
    if search.objectives and search.strategy == "hyperband":
        found.append("Hyperband stops trials early by one metric, and Optuna prunes no search "
                     "of several objectives: choose grid, random or Bayesian search, or no "
                     "extra objective.")
    return found


def metric_choices(project: Project) -> tuple[str, ...]:
    """The metrics a search of ``project`` may optimise, as its task logs them, the task's
    default first (validation accuracy for a classifier, mAP@0.5 for a detector)."""
    return task_for(project.dataset.task).search_metrics


def search_metric(project: Project) -> str:
    """The metric a search of ``project`` optimises: the one chosen, if its task logs it, else
    the task's default (the classifier's default, validation accuracy, on a detector's
    project is its mAP@0.5)."""
    choices = metric_choices(project)
    return project.search.metric if project.search.metric in choices else choices[0]


def searched_project(project: Project) -> Project:
    """The snapshot of ``project`` a search runs: a copy whose search metric is the one it
    optimises (``search_metric``)."""
    snapshot = project.copy()
    snapshot.search.metric = search_metric(project)
    return snapshot


def grid_size(project: Project, search: SearchSettings) -> int:
    """How many combinations the grid of ``search`` has (dimensions assumed valid)."""
    return math.prod(len(check_dimension(project, d)) for d in search.dimensions)


def trial_count(project: Project, search: SearchSettings) -> int:
    """How many trials the search will run: the grid's size, or the number asked for."""
    if search.strategy == "grid":
        return grid_size(project, search)
    return search.trials


def auto_startup_trials(trials: int) -> int:
    """The random start-up trials of a TPE search of ``trials`` trials when none are set: a
    fifth of them, at least 2 (TPE needs points to model) and at most 10 (Optuna's default,
    which left a search of 10 trials or fewer without a model)."""
    return min(10, max(2, trials // 5))


def startup_trials(search: SearchSettings) -> int:
    """How many trials ``search``'s TPE sampler (bayes, hyperband) draws at random before its
    model proposes: the one set, or the automatic count."""
    if search.startup_trials is not None:
        return search.startup_trials
    return auto_startup_trials(search.trials)


def mean_epochs(project: Project, search: SearchSettings) -> float:
    """The epochs an average trial trains (epochs may be a dimension)."""
    for dimension in search.dimensions:
        if dimension.target == training_target("epochs"):
            param = param_for(project, dimension.target)
            points = grid_points(dimension, param)
            if search.strategy != "grid" and dimension.is_range:
                return (float(dimension.low) + float(dimension.high)) / 2
            return sum(points) / len(points)
    return float(project.training.epochs)


def estimated_seconds(project: Project, search: SearchSettings, seconds_per_epoch: float,
                      cores: int, overhead_per_trial: float = 1.0) -> float:
    """About how long the search takes if an epoch takes ``seconds_per_epoch``: trials run in
    waves of as many as run at once (at most one per core), each wave as long as one trial."""
    trials = trial_count(project, search)
    at_once = max(1, min(search.workers, trials, cores))
    per_trial = mean_epochs(project, search) * seconds_per_epoch + overhead_per_trial
    return math.ceil(trials / at_once) * per_trial
