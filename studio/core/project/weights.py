"""A project's imported weights: the file beside the project that holds them, and the record
of it the project keeps (its name, its SHA-256 and each layer's weight shapes).

The file is HDF5 written with h5py, one group per layer named by its node id and one dataset
per weight, in Keras's order (``layer.get_weights()``); nothing in it is pickled, and reading
it runs no code. The project records each layer's shapes, so the editor can tell which
layers an edit leaves without their weights without opening the file.
"""

from __future__ import annotations

import copy
import hashlib
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.base.events import Progress
from studio.core.base.files import atomic_file, atomic_path
from studio.core.base.messages import first_line

WEIGHTS_SUFFIX = ".weights.h5"
WEIGHTS_FORMAT = 1
"""The layout of the file (``format`` attribute), for readers of later versions."""


class WeightsError(ValueError):
    """The imported weights cannot be used; the message is one line for a person."""


@dataclass
class ImportedWeights:
    """Where a project's imported weights are, the file's SHA-256, and each layer's weight
    shapes by node id (in Keras's order). ``file`` is absolute in memory and stored relative
    to the project file when it lies beside it."""

    file: str
    sha256: str
    layers: dict[str, list[list[int]]] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        """The weights file."""
        return Path(self.file)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored in the project."""
        return {"file": self.file, "sha256": self.sha256, "layers": copy.deepcopy(self.layers)}

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> ImportedWeights:
        """The record in a (validated) project document."""
        return ImportedWeights(data["file"], data["sha256"],
                               {node: [list(shape) for shape in shapes]
                                for node, shapes in data.get("layers", {}).items()})


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, as hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def write_weights(path: str | Path, weights: Mapping[str, Sequence[np.ndarray]]
                  ) -> ImportedWeights:
    """Write each layer's weights (node id -> arrays; layers without any are left out) to
    ``path`` atomically, and return the project's record of the file."""
    import h5py

    path = Path(os.path.abspath(path))
    kept = {node: [np.asarray(value) for value in values]
            for node, values in weights.items() if len(values)}
    with atomic_path(path) as temp:
        with h5py.File(temp, "w") as h5:
            h5.attrs["format"] = WEIGHTS_FORMAT
            for node, values in kept.items():
                group = h5.create_group(node)
                for index, value in enumerate(values):
                    group.create_dataset(str(index), data=value)
        digest = file_sha256(temp)
    return ImportedWeights(str(path), digest, {node: [list(map(int, v.shape)) for v in values]
                                              for node, values in kept.items()})


def check_weights(record: ImportedWeights) -> None:
    """WeightsError, in one line, if the weights file is missing or not the one the project
    recorded."""
    path = _existing(record)
    try:
        digest = file_sha256(path)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if digest != record.sha256:
        raise _replaced(path)


def _existing(record: ImportedWeights) -> Path:
    """The weights file; WeightsError if it is missing."""
    path = record.path
    if not path.is_file():
        raise WeightsError(f"The imported weights file {path.name} is missing (expected at "
                           f"{str(path.parent)[:80]}); import the model again, or start "
                           "from random weights.")
    return path


def _unreadable(path: Path, exc: OSError) -> WeightsError:
    return WeightsError(f"The imported weights file {path.name} cannot be read "
                        f"({exc.strerror or exc}).")


def _replaced(path: Path) -> WeightsError:
    return WeightsError(f"The imported weights file {path.name} is not the one this project "
                        "imported (its SHA-256 differs): it was changed or replaced. Import "
                        "the model again, or start from random weights.")


def read_weights(record: ImportedWeights) -> dict[str, list[np.ndarray]]:
    """Each recorded layer's weights, after checking the file (see ``check_weights``)."""
    import h5py

    check_weights(record)
    try:
        with h5py.File(record.path, "r") as h5:
            return {node: [np.asarray(h5[node][str(i)]) for i in range(len(shapes))]
                    for node, shapes in record.layers.items()}
    except (OSError, KeyError, ValueError) as exc:
        raise WeightsError(f"The imported weights file {record.path.name} is damaged "
                           f"({first_line(exc)}).") from None


class CopyCancelled(Exception):
    """Copying the weights was stopped; nothing was left at the target."""


COPYING = "Copying the imported weights"
"""What ``carry_weights`` reports progress on."""
CHUNK = 1 << 20


def carry_weights(record: ImportedWeights, target: str | Path, on_progress: Progress | None = None,
                  stop: threading.Event | None = None) -> ImportedWeights:
    """The record of the weights once at ``target``: the file is copied there unless it
    already is there, and hashed in the same pass. The copy appears at ``target`` only once
    complete, synced and found to be the recorded file (atomically); otherwise nothing is left
    there. WeightsError (one line) if the file is missing, unreadable or not the recorded one;
    CopyCancelled if ``stop`` is set meanwhile; OSError if ``target`` cannot be written. The
    old file is left as it is: another project may still use it."""
    target = Path(os.path.abspath(target))
    if record.path == target:
        return record
    path = _existing(record)
    try:
        source = open(path, "rb")  # noqa: SIM115 - closed by the with below
        total = os.fstat(source.fileno()).st_size
    except OSError as exc:
        raise _unreadable(path, exc) from None
    digest, done = hashlib.sha256(), 0
    with source, atomic_file(target) as out:
        while True:
            if stop is not None and stop.is_set():
                raise CopyCancelled(f"Copying {path.name} was cancelled.")
            chunk = source.read(CHUNK)
            if not chunk:
                break
            digest.update(chunk)
            out.write(chunk)
            done += len(chunk)
            if on_progress is not None:
                on_progress(COPYING, done, total)
        if digest.hexdigest() != record.sha256:
            raise _replaced(path)
    return ImportedWeights(str(target), record.sha256, copy.deepcopy(record.layers))
