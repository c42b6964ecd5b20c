"""Carrying a project's imported weights beside the file it is saved to: one pass that copies
and hashes, reports its progress, can be stopped, and leaves nothing half-written."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from studio.core.project import weights as weights_module
from studio.core.project.weights import (
    COPYING,
    CopyCancelled,
    WeightsError,
    carry_weights,
    file_sha256,
    read_weights,
    write_weights,
)


@pytest.fixture
def record(tmp_path):
    """Weights of two layers written in ``tmp_path/scratch``; copied in 1 KiB chunks."""
    rng = np.random.default_rng(0)
    return write_weights(tmp_path / "scratch" / "p.weights.h5",
                         {"dense": [rng.random((40, 30)), rng.random(30)],
                          "conv": [rng.random((3, 3, 2, 4))]})


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(weights_module, "CHUNK", 1024)


def test_the_copy_is_hashed_as_it_is_written_and_reports_its_progress(record, tmp_path,
                                                                      monkeypatch):
    reads = []
    real_sha256 = weights_module.file_sha256
    monkeypatch.setattr(weights_module, "file_sha256",
                        lambda path: reads.append(path) or real_sha256(path))
    progress = []
    target = tmp_path / "saved" / "p.weights.h5"
    carried = carry_weights(record, target, lambda *step: progress.append(step))
    assert reads == []  # no second pass over the file to hash it
    assert carried.path == target and carried.sha256 == record.sha256 == file_sha256(target)
    assert carried.layers == record.layers
    size = record.path.stat().st_size
    assert len(progress) == -(-size // 1024) > 1
    assert progress[-1] == (COPYING, size, size)
    assert [done for _, done, _ in progress] == sorted(done for _, done, _ in progress)
    for ours, theirs in zip(read_weights(carried)["dense"], read_weights(record)["dense"],
                            strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_a_stopped_copy_leaves_nothing_at_the_target(record, tmp_path):
    stop = threading.Event()
    target = tmp_path / "saved" / "p.weights.h5"

    def stop_halfway(what, done, total):
        if done * 2 >= total:
            stop.set()

    with pytest.raises(CopyCancelled, match="Copying p.weights.h5 was cancelled"):
        carry_weights(record, target, stop_halfway, stop)
    assert list(target.parent.iterdir()) == []


def test_a_file_changed_since_the_import_is_not_carried(record, tmp_path):
    with open(record.path, "ab") as handle:
        handle.write(b"changed")
    target = tmp_path / "saved" / "p.weights.h5"
    with pytest.raises(WeightsError, match="its SHA-256 differs"):
        carry_weights(record, target)
    assert list(target.parent.iterdir()) == []
    record.path.unlink()
    with pytest.raises(WeightsError, match="is missing"):
        carry_weights(record, target)


def test_weights_already_at_the_target_are_not_copied(record):
    assert carry_weights(record, record.path) is record
