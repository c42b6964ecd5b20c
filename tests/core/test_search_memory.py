"""Memory across trials: a trial, once over, leaves none of its traced graphs behind, so a
search worker (or the app training run after run) stays the same size however many it trains."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

from studio.core.search.worker import _release_memory, run_trial
from studio.core.training.trainer import train
from tests.helpers import tiny_project


def live_graphs() -> int:
    """How many TensorFlow function graphs (a traced train or test step, its branches) live."""
    from tensorflow.python.framework.func_graph import FuncGraph

    gc.collect()
    return sum(isinstance(thing, FuncGraph) for thing in gc.get_objects())


def test_a_search_worker_keeps_no_graph_of_its_finished_trials(tmp_path: Path):
    project = tiny_project()
    graphs = []
    for number, rate in enumerate((0.01, 0.003, 0.001)):
        project.training.learning_rate = rate
        task = {"number": number, "project": project.to_dict(), "runs_root": str(tmp_path),
                "report_every": 5}
        assert run_trial(task, lambda message: None, threading.Event())["status"] == "finished"
        _release_memory()
        graphs.append(live_graphs())
    assert graphs == [graphs[0]] * 3


def test_the_app_keeps_no_graph_of_its_finished_runs(tmp_path: Path):
    """The Training dock trains on a thread of the app, run after run, without clearing
    Keras's session."""
    project = tiny_project()
    graphs, results = [], []
    for _ in range(3):
        worker = threading.Thread(target=lambda: results.append(train(project, tmp_path)))
        worker.start()
        worker.join()
        assert results.pop().status == "finished"
        graphs.append(live_graphs())
    assert graphs == [graphs[0]] * 3
