"""The project document: model graph, dataset choice and training settings, as versioned JSON."""

from __future__ import annotations

import copy
import json
import math
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from studio.core.base.files import atomic_write_text
from studio.core.base.messages import QUOTE_LIMIT, count, format_bytes, quoted, shortened
from studio.core.model.graph import Graph, Node
from studio.core.model.registry import REGISTRY
from studio.core.project.migrations import migrate
from studio.core.project.weights import WEIGHTS_SUFFIX, ImportedWeights
from studio.core.tasks.registry import DEFAULT_TASK, TASKS

if TYPE_CHECKING:
    import jsonschema

FORMAT_VERSION = 11
SUFFIX = ".studio.json"
SCHEMA_PATH = Path(__file__).with_name("project.schema.json")
MAX_FILE_BYTES = 64 * 2**20
"""The largest project file read; a real project is a few kilobytes, an imported one with
its Keras configs a few megabytes."""
MAX_INT_BITS = 1024
"""Whole numbers must fit in a double, as JSON numbers are meant to."""
MAX_DEPTH = 100
"""The deepest nesting of a project document; imported Keras configs nest a dozen levels."""
PLAIN_KEY = re.compile(r"[\w.-]{1,80}", re.ASCII)
"""Keys that messages show as they are; others are quoted."""

OPTIMIZERS = ("adam", "adamw", "sgd", "rmsprop", "adagrad", "nadam")
SCHEDULES = ("constant", "step", "exponential", "cosine", "plateau")
DEVICE_KINDS = ("cpu", "gpu", "gpus")
PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16")
MONITORS = ("val_loss", "val_accuracy", "loss", "accuracy")
LOSSES = ("sparse_categorical_crossentropy", "cross_entropy", "dice", "cross_entropy_dice")
"""The losses a project can name: a classifier's, and a segmentation model's pixel
cross-entropy, Dice or their sum (``tasks.segmentation.loss.LOSS_KINDS``; a segmentation
project naming the first learns from the sum)."""
STARTS = ("random", "imported", "run")
"""What training starts from: random weights, the project's imported ones, or a run's model
(its final model or a checkpoint)."""


class ProjectFileError(Exception):
    """A project file cannot be read; the message names the file and the problem."""


SOURCES = ("bundled", "keras", "folder", "csv")
COLORS = ("auto", "grayscale", "rgb")
RESIZE_MODES = ("squash", "crop", "pad")
NORMALIZATIONS = ("unit", "symmetric", "standardize")
CACHES = ("auto", "none", "memory", "disk")
STRATEGIES = ("grid", "random", "bayes", "hyperband")
MAXIMISED = ("val_accuracy", "accuracy", "val_map50", "val_map", "val_mean_iou",
             "val_pixel_accuracy")
"""The scores a search maximises; it minimises the others (losses and errors)."""
OBJECTIVES = ("latency", "params", "size")
"""What a search may minimise besides its metric: the trained model's milliseconds per sample,
its parameter count, its saved file's bytes."""
SCALES = ("linear", "log")
FILL_MODES = ("constant", "nearest", "reflect", "wrap")
"""How rotation, zoom and shift fill the corners they uncover: black, the nearest edge pixel,
the edge mirrored, or the opposite edge (Keras's names)."""
DATA_PATH_FIELDS = ("path", "validation_path", "mask_path")
"""The dataset's fields naming files or folders: absolute in memory, stored relative to the
project file when the data lies in its folder."""


@dataclass
class Augmentation:
    """Random changes to training images; every amount at 0 (and no flips) means none.

    ``rotation`` is in degrees; ``zoom``, ``translation`` and ``crop`` are fractions of the
    image size; ``contrast`` and ``brightness`` are fractions of the full range; ``noise`` is
    the standard deviation of Gaussian noise as a fraction of the full range. ``fill_mode``
    (one of FILL_MODES) fills what rotation, zoom and shift uncover: ``constant`` black, as
    mirrored edges leave ghost strokes on digits.
    """

    flip_horizontal: bool = False
    flip_vertical: bool = False
    rotation: float = 0.0
    zoom: float = 0.0
    translation: float = 0.0
    contrast: float = 0.0
    brightness: float = 0.0
    noise: float = 0.0
    crop: float = 0.0
    fill_mode: str = "constant"

    def active(self) -> bool:
        """Whether any augmentation is switched on."""
        return any(bool(v) for k, v in asdict(self).items() if k != "fill_mode")


@dataclass
class DatasetChoice:
    """Which data to train on, how to read and split it, and how to augment it.

    ``source`` is ``bundled`` or ``keras`` (``name`` says which), ``folder`` (``path`` holds
    one subfolder per class, ``validation_path`` an optional separate validation folder) or
    ``csv`` (``path``; ``label_column``, and ``text_column`` for text) or ``detection`` (a
    detection dataset: the folder ``path`` with its labels in ``label_format``, ``auto`` to
    find which, or with no path the bundled demo set; ``task`` is then ``detection``) or
    ``segmentation`` (images with masks: the folder ``path`` in any layout
    ``data.segmentation.layouts`` reads, its masks in the separate folder ``mask_path`` if
    given, or with no path the bundled demo set; ``task`` is then ``segmentation``, and
    ``class_weights`` weighs each pixel's cross-entropy by its class). Image options apply
    to every image source: ``image_size`` is ``[height, width]`` (None keeps the native size
    of in-memory datasets); ``color`` ``auto`` keeps their channels and reads folders as RGB.
    ``validation_split`` and ``test_split`` are fractions of the samples, split per class.
    """

    source: str = "bundled"
    name: str = "mnist-10k"
    path: str = ""
    validation_path: str = ""
    image_size: list[int] | None = None
    color: str = "auto"
    resize: str = "squash"
    normalization: str = "unit"
    validation_split: float = 0.2
    test_split: float = 0.0
    seed: int = 0
    class_weights: bool = False
    cache: str = "auto"
    label_column: str = ""
    text_column: str = ""
    task: str = DEFAULT_TASK
    max_tokens: int = 10_000
    sequence_length: int = 100
    label_format: str = "auto"
    mask_path: str = ""
    augmentation: Augmentation = field(default_factory=Augmentation)

    @staticmethod
    def from_dict(data: dict[str, Any]) -> DatasetChoice:
        """The choice stored in a (validated) project document."""
        fields = {**data, "augmentation": Augmentation(**data.get("augmentation", {}))}
        if fields.get("image_size") is not None:
            fields["image_size"] = list(fields["image_size"])
        return DatasetChoice(**fields)


@dataclass
class Schedule:
    """How the learning rate changes over a run.

    ``constant``; ``step`` multiplies it by ``factor`` every ``step_epochs``; ``exponential``
    multiplies it by ``factor`` per epoch (smoothly, step by step); ``cosine`` rises linearly
    for ``warmup_epochs`` and then falls along a cosine to ``min_learning_rate``; ``plateau``
    multiplies it by ``factor`` after ``patience`` epochs without a better validation loss,
    down to ``min_learning_rate``.
    """

    kind: str = "constant"
    step_epochs: int = 10
    factor: float = 0.5
    warmup_epochs: int = 0
    min_learning_rate: float = 0.0
    patience: int = 3


@dataclass
class EarlyStopping:
    """Stop when ``monitor`` has not improved for ``patience`` epochs (if ``enabled``)."""

    enabled: bool = False
    monitor: str = "val_loss"
    patience: int = 5


@dataclass
class Checkpoints:
    """Save the model with its optimizer state every ``every_epochs`` epochs (0: never); with
    ``keep_best_only`` only when ``monitor`` improves, replacing the previous one."""

    every_epochs: int = 1
    keep_best_only: bool = False
    monitor: str = "val_loss"


@dataclass
class DeviceChoice:
    """Where to train: the CPU, one GPU or several (``gpus`` holds their indices), with which
    float precision, and whether ops must be deterministic (slower, reproducible)."""

    kind: str = "cpu"
    gpus: list[int] = field(default_factory=list)
    precision: str = "float32"
    deterministic: bool = False


@dataclass
class TrainingSettings:
    """How to train: optimizer and its parameters, learning-rate schedule, batch size, epochs,
    loss, metrics, seed, early stopping, checkpoints and device.

    ``momentum`` and ``nesterov`` apply to SGD (``momentum`` to RMSprop too), ``beta_1`` and
    ``beta_2`` to Adam, AdamW and Nadam, ``rho`` to RMSprop, ``weight_decay`` to every one.
    ``start_from`` (one of STARTS) says whether the model starts from random weights, from
    the project's imported ones (fine-tuning), or from a run's model: ``start_model``, a
    final model or checkpoint file, relative to the project's runs folder (``RUN/model.keras``,
    so it follows the runs when they move with the project) or absolute.
    """

    optimizer: str = "adam"
    learning_rate: float = 0.001
    batch_size: int = 64
    epochs: int = 10
    loss: str = "sparse_categorical_crossentropy"
    metrics: list[str] = field(default_factory=lambda: ["accuracy"])
    seed: int = 0
    momentum: float = 0.9
    nesterov: bool = False
    beta_1: float = 0.9
    beta_2: float = 0.999
    rho: float = 0.9
    weight_decay: float = 0.0
    schedule: Schedule = field(default_factory=Schedule)
    early_stopping: EarlyStopping = field(default_factory=EarlyStopping)
    checkpoints: Checkpoints = field(default_factory=Checkpoints)
    device: DeviceChoice = field(default_factory=DeviceChoice)
    start_from: str = "random"
    start_model: str = ""

    @staticmethod
    def from_dict(data: dict[str, Any]) -> TrainingSettings:
        """Settings from their JSON form (as validated by the project schema)."""
        fields = dict(data)
        fields["metrics"] = list(fields["metrics"])
        for name, kind in (("schedule", Schedule), ("early_stopping", EarlyStopping),
                           ("checkpoints", Checkpoints)):
            fields[name] = kind(**fields.get(name, {}))
        device = dict(fields.get("device", {}))
        device["gpus"] = list(device.get("gpus", []))
        fields["device"] = DeviceChoice(**device)
        return TrainingSettings(**fields)


@dataclass
class Dimension:
    """One searched value of the project: a list of ``values``, or a range (see the module)."""

    target: str
    values: list[Any] | None = None
    low: float | None = None
    high: float | None = None
    scale: str = "linear"
    step: float | None = None
    count: int | None = None

    @property
    def is_range(self) -> bool:
        """True for a range, False for a list of values."""
        return self.values is None


@dataclass
class SearchSettings:
    """A project's search: its dimensions, the strategy, how many trials (random, bayes and
    hyperband; a grid tries every combination), the sampler's seed, how many trials run at
    once, and the metric to optimise (losses and errors are minimised, accuracies and mAP
    maximised); a metric the project's task does not log gives way to the task's default
    (``search.space.search_metric``). ``startup_trials``: how many trials the TPE sampler of
    bayes and hyperband draws at random before its model proposes (None: by the number of
    trials, ``search.space.startup_trials``). ``objectives``: what the search also minimises,
    among OBJECTIVES (empty: the metric alone; else it searches for the Pareto front)."""

    dimensions: list[Dimension] = field(default_factory=list)
    strategy: str = "grid"
    trials: int = 10
    seed: int = 0
    workers: int = 1
    metric: str = "val_accuracy"
    startup_trials: int | None = None
    objectives: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored in the project."""
        return asdict(self)

    @staticmethod
    def from_dict(data: dict[str, Any]) -> SearchSettings:
        """Settings from their JSON form."""
        fields = dict(data)
        fields["dimensions"] = [Dimension(**d) for d in fields.get("dimensions", [])]
        return SearchSettings(**fields)

    @property
    def minimize(self) -> bool:
        """Whether a smaller metric is better."""
        return self.metric not in MAXIMISED


@dataclass
class Project:
    """Everything a person designs: the model, the data and the training settings.

    ``positions`` holds canvas positions (node id -> [x, y]); nodes without one are laid out
    automatically. ``weights`` records the weights of an imported model, kept in a file
    beside the project (None: there are none).
    """

    name: str = "Untitled"
    graph: Graph = field(default_factory=Graph)
    dataset: DatasetChoice = field(default_factory=DatasetChoice)
    training: TrainingSettings = field(default_factory=TrainingSettings)
    positions: dict[str, list[float]] = field(default_factory=dict)
    search: SearchSettings = field(default_factory=SearchSettings)
    weights: ImportedWeights | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON document for this project."""
        document = {
            "format_version": FORMAT_VERSION,
            "name": self.name,
            "model": {
                "nodes": [
                    {"id": n.id, "type": n.type, "params": copy.deepcopy(n.params)}
                    for n in self.graph.nodes
                ],
                "edges": [[src, dst] for src, dst in self.graph.edges],
                "blocks": _kept_blocks(self.graph.blocks, self.graph),
            },
            "dataset": asdict(self.dataset),
            "training": asdict(self.training),
            "positions": _kept_positions(self.positions, self.graph),
            "search": self.search.to_dict(),
        }
        if self.weights is not None:
            document["weights"] = self.weights.to_dict()
        return document

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Project:
        """Build a project from a document of this or an older format.

        Raise ProjectFileError if it is not valid. Positions of unknown layers are dropped.
        """
        data = validate_document(data)
        model = data["model"]
        graph = Graph(
            nodes=[Node(n["id"], n["type"], copy.deepcopy(n["params"])) for n in model["nodes"]],
            edges=[(src, dst) for src, dst in model["edges"]],
        )
        graph.blocks = _kept_blocks(model.get("blocks", {}), graph)
        return Project(
            name=data["name"],
            graph=graph,
            dataset=DatasetChoice.from_dict(data["dataset"]),
            training=TrainingSettings.from_dict(data["training"]),
            positions=_kept_positions(data.get("positions", {}), graph),
            search=SearchSettings.from_dict(data.get("search", {})),
            weights=ImportedWeights.from_dict(data["weights"]) if "weights" in data else None,
        )

    def copy(self) -> Project:
        """A deep copy."""
        return copy.deepcopy(self)

    def prune_positions(self) -> None:
        """Forget positions of layers that are no longer in the model."""
        self.positions = _kept_positions(self.positions, self.graph)


def _kept_blocks(blocks: dict[str, list[str]], graph: Graph) -> dict[str, list[str]]:
    """The blocks' members that are in the graph, each in one block only (the first that
    names it), as fresh lists in document order; blocks left empty are dropped."""
    kept: dict[str, list[str]] = {}
    taken: set[str] = set()
    order = graph.ids()
    for name, ids in blocks.items():
        wanted = set(ids) - taken
        members = [node_id for node_id in order if node_id in wanted]
        if members:
            kept[name] = members
            taken.update(members)
    return kept


def _kept_positions(positions: dict[str, Any], graph: Graph) -> dict[str, list[float]]:
    """Finite positions of the graph's nodes, as fresh ``[x, y]`` lists in node order."""
    kept = {}
    for node_id in graph.ids():
        point = positions.get(node_id)
        if point is not None and all(math.isfinite(v) for v in point):
            kept[node_id] = [float(point[0]), float(point[1])]
    return kept


@cache
def project_schema() -> dict[str, Any]:
    """The published JSON Schema of the project format, with the task names of the tasks
    registered in this version."""
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    schema["properties"]["dataset"]["properties"]["task"]["enum"] = list(TASKS)
    return schema


@cache
def _validator() -> jsonschema.Draft202012Validator:
    import jsonschema  # when a document is first read: it takes 0.1 s to import

    return jsonschema.Draft202012Validator(project_schema())


def _schema_problem(error: jsonschema.ValidationError) -> str:
    """The schema's complaint with the offending value quoted short: jsonschema's own message
    holds the whole value (a 200 KB name gave a 200 KB message)."""
    if error.validator == "additionalProperties":
        extra = [key for key in error.instance if key not in error.schema.get("properties", {})]
        more = f" and {count(len(extra) - 1, 'other')}" if len(extra) > 1 else ""
        return f"unexpected key {quoted(extra[0])}{more}"
    whole = repr(error.instance)
    if error.message.startswith(whole):  # "<instance> is too long" and most others
        return quoted(error.instance) + shortened(error.message[len(whole):])
    return shortened(error.message, 2 * QUOTE_LIMIT)


def validate_document(data: Any) -> dict[str, Any]:
    """Check a project document and return it upgraded to the current format.

    Raise ProjectFileError naming the first problem if it is not a valid project.
    """
    if not isinstance(data, dict):
        raise ProjectFileError(
            "The file does not hold a Layer Studio project (expected an object)."
        )
    _check_values(data)
    version = data.get("format_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
        raise ProjectFileError(
            f"This project was saved by a newer Layer Studio (format {quoted(version)}; this "
            f"version reads format {FORMAT_VERSION}). Update Layer Studio to open it."
        )
    data = migrate(data)
    # The first error only: the schema puts each bound on a list before the check of its items,
    # so a list of a million items stops at its size instead of taking a minute to check.
    error = next(_validator().iter_errors(data), None)
    if error is not None:
        raise ProjectFileError(
            f"The project is not valid at {_where(error.absolute_path)}: {_schema_problem(error)}."
        )
    ids = {n["id"] for n in data["model"]["nodes"]}
    seen: set[str] = set()
    for node in data["model"]["nodes"]:
        if node["id"] in seen:
            raise ProjectFileError(f"Two layers share the id {quoted(node['id'])}.")
        seen.add(node["id"])
        if node["type"] not in REGISTRY:
            raise ProjectFileError(
                f"Layer {quoted(node['id'])} has an unknown type {quoted(node['type'])}. "
                "It may come from a newer Layer Studio."
            )
        problem = REGISTRY[node["type"]].check_stored(node["params"])
        if problem:
            raise ProjectFileError(f"Layer {quoted(node['id'])}: {problem}")
    for src, dst in data["model"]["edges"]:
        for end in (src, dst):
            if end not in ids:
                raise ProjectFileError(
                    f"A connection refers to a layer {quoted(end)} that does not exist."
                )
    return data


class _Refused(str):
    """A number token of the file that no setting can hold (NaN, ±Infinity, or a fraction too
    large for a double), kept as its text so that validation can say where it is."""


def _finite_float(token: str) -> float | _Refused:
    value = float(token)
    return value if math.isfinite(value) else _Refused(token)


def _number_problem(value: Any) -> str | None:
    """Why ``value`` is a number no project may hold, or None."""
    if isinstance(value, _Refused) or isinstance(value, float) and not math.isfinite(value):
        return (f"{shortened(str(value))} is not a finite number; every number in a project "
                "must be finite")
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        return "the number is too large"
    return None


def _check_values(data: Any) -> None:
    """Raise ProjectFileError at the first number that is not finite or too large, or where
    the document is nested deeper than MAX_DEPTH (which later recursion could not handle).

    Quick on a million values: a container's path is kept as a link to its parent's, and
    followed only to report a problem.
    """
    stack: list[tuple[Any, int, Any]] = [(data, 0, None)]
    while stack:
        container, depth, link = stack.pop()
        if depth > MAX_DEPTH:
            raise ProjectFileError(_too_deep())
        items = container.items() if isinstance(container, dict) else enumerate(container)
        for key, item in items:
            if type(item) is str:  # the commonest value, and never a problem
                continue
            if isinstance(item, dict | list | tuple):
                stack.append((item, depth + 1, (link, key)))
            elif problem := _number_problem(item):
                raise ProjectFileError(
                    f"The project is not valid at {_where(_path(link, key))}: {problem}.")


def _path(link: Any, key: Any) -> list[Any]:
    """The keys from the top of the document down to ``key`` in the container at ``link``."""
    keys = [key]
    while link is not None:
        link, key = link
        keys.append(key)
    return keys[::-1]


def _too_deep() -> str:
    return f"The project is nested more than {MAX_DEPTH} levels deep; no project is."


def _where(path: Iterable[Any]) -> str:
    """``training/momentum``: where in the document a problem is; keys that are not plain
    words are quoted, so that a line break in a key does not break the line."""
    parts = (str(p) if isinstance(p, int) or PLAIN_KEY.fullmatch(p) else quoted(p) for p in path)
    return shortened("/".join(parts)) or "the top level"


def _file_name(path: Path) -> str:
    """The name of ``path`` as messages show it, quoted if it holds line breaks or the like."""
    return path.name if path.name.isprintable() else quoted(path.name)


def _parse(text: str) -> Any:
    """The JSON document in ``text``; non-finite numbers are kept as _Refused tokens."""
    if not text.strip():
        raise ProjectFileError("the file is empty.")
    try:
        return json.loads(text, parse_constant=_Refused, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise ProjectFileError(
            f"not valid JSON at line {exc.lineno}, column {exc.colno} "
            f"({exc.msg}). The file may be truncated or damaged."
        ) from None
    except ValueError:  # Python reads at most 4,300 digits of a whole number
        raise ProjectFileError("a number in the file has thousands of digits; no setting "
                               "takes such a number.") from None
    except RecursionError:
        raise ProjectFileError(_too_deep()) from None


def _read_file(path: Path) -> str:
    """The text of the project file at ``path``; raise ProjectFileError (without the file's
    name) if it is missing, not a regular file, over MAX_FILE_BYTES or not UTF-8."""
    try:
        info = os.stat(path)  # before opening: opening a FIFO would block until a writer comes
        if stat.S_ISDIR(info.st_mode):
            raise ProjectFileError("this is a folder, not a project file.")
        if not stat.S_ISREG(info.st_mode):
            raise ProjectFileError(
                "not a regular file (a device, pipe or socket), so it is not read.")
        _check_size(info.st_size)
        with open(path, "rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)  # the file may have grown since stat
    except FileNotFoundError:
        raise ProjectFileError("the file does not exist.") from None
    except OSError as exc:
        raise ProjectFileError(f"cannot be read ({exc.strerror or exc}).") from None
    _check_size(len(data))
    try:
        return data.decode("utf-8-sig")  # editors on Windows start UTF-8 files with a BOM
    except UnicodeDecodeError as exc:
        raise ProjectFileError(f"cannot be read ({exc}).") from None


def _check_size(size: int) -> None:
    if size > MAX_FILE_BYTES:
        raise ProjectFileError(f"the file is {format_bytes(size)}, larger than a project can "
                               f"be ({format_bytes(MAX_FILE_BYTES)} at most).")


def load_project(path: str | Path) -> Project:
    """Read a project file; raise ProjectFileError with a clear message if it is unusable."""
    path = Path(path)
    try:
        project = Project.from_dict(_parse(_read_file(path)))
    except ProjectFileError as exc:
        raise ProjectFileError(f"{_file_name(path)}: {exc}") from None
    for name in DATA_PATH_FIELDS:
        setattr(project.dataset, name,
                absolute_data_path(getattr(project.dataset, name), path.parent))
    if project.weights is not None:
        project.weights.file = absolute_data_path(project.weights.file, path.parent)
    return project


def save_project(project: Project, path: str | Path, home: str | Path | None = None) -> None:
    """Write ``project`` to ``path`` atomically. Its data paths are stored relative to the
    file's folder when the data lies inside ``home`` (by default that folder), so the folder
    can move with its data; absolute otherwise. Raise ProjectFileError, writing nothing, if
    load_project would refuse the file: the text is checked exactly as a loaded file is."""
    path = Path(path)
    document = project.to_dict()
    folder = os.path.abspath(path.parent)
    home = os.path.abspath(folder if home is None else home)
    for name in DATA_PATH_FIELDS:
        document["dataset"][name] = _stored_path(document["dataset"][name], folder, home)
    if "weights" in document:
        document["weights"]["file"] = _stored_path(document["weights"]["file"], folder, home)
    text = json.dumps(document, indent=2) + "\n"
    try:
        _check_size(len(text.encode("utf-8")))
        validate_document(_parse(text))
    except ProjectFileError as exc:
        raise ProjectFileError(
            f"{_file_name(path)}: not saved, as it would not open again: {exc}") from None
    atomic_write_text(path, text)


def _stored_path(value: str, folder: str, home: str) -> str:
    """A path as a project file stores it: relative to the file's ``folder`` when it lies
    inside ``home``, absolute otherwise (empty stays empty)."""
    if not value:
        return value
    absolute = absolute_data_path(value)
    inside = Path(absolute).is_relative_to(home)
    return Path(os.path.relpath(absolute, folder)).as_posix() if inside else absolute


def absolute_data_path(path: str | Path, folder: str | Path | None = None) -> str:
    """A data path as a project holds it in memory: absolute, with ``~`` expanded, a relative
    one taken from ``folder`` (a project file's folder; by default the current directory, for
    a path just typed). An empty path stays empty."""
    if not str(path):
        return ""
    return os.path.abspath(os.path.join(folder or os.getcwd(), os.path.expanduser(path)))


def weights_path_for(project_path: str | Path) -> Path:
    """Where the imported weights of the project saved at ``project_path`` are kept:
    ``NAME.weights.h5`` beside ``NAME.studio.json``."""
    project_path = Path(project_path)
    return project_path.with_name(project_stem(project_path) + WEIGHTS_SUFFIX)


def project_stem(path: str | Path) -> str:
    """``mnist.studio.json`` gives ``mnist``."""
    name = Path(path).name
    return name[: -len(SUFFIX)] if name.endswith(SUFFIX) else Path(path).stem
