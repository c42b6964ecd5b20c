"""``studio search PROJECT --dim TARGET=VALUES ... [--epochs N] [--objective NAME]``: a search
space typed on the command line, checked with the dimension dialog's messages (and objectives
as the Search tab checks them): each bad one is one line, exit 2, and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.cli import main
from studio.commands.errors import UsageError
from studio.commands.search_space import parse_dimension
from studio.core.model.graph import Node
from studio.core.project.document import Dimension, load_project, save_project
from tests.core.test_search import LEARNING_RATES, searched, table_project
from tests.helpers import one_line_error, snapshot


@pytest.fixture
def project_file(tmp_path, private_workspace) -> Path:
    path = tmp_path / "table.studio.json"
    save_project(searched(table_project(tmp_path), "grid", LEARNING_RATES, workers=1), path)
    return path


@pytest.mark.parametrize(("spec", "dimension"), [
    ("training.learning_rate=0.01, 1e-3", Dimension("training.learning_rate",
                                                    values=[0.01, 0.001])),
    ("training.learning_rate=1e-4:1e-2:log:5", Dimension("training.learning_rate", low=1e-4,
                                                         high=1e-2, scale="log", count=5)),
    ("layer.dense_1.units=4:16", Dimension("layer.dense_1.units", low=4, high=16, count=3)),
    ("layer.dense_1.units=8:32:linear:4", Dimension("layer.dense_1.units", low=8, high=32,
                                                    count=4)),
    ("training.optimizer=adam,sgd", Dimension("training.optimizer", values=["adam", "sgd"])),
    ("training.nesterov=on,off", Dimension("training.nesterov", values=[True, False])),
    ("layer.dense_1.activation=relu,tanh", Dimension("layer.dense_1.activation",
                                                     values=["relu", "tanh"])),
])
def test_good_dimensions_are_read_as_the_dialog_makes_them(tmp_path, spec, dimension):
    assert parse_dimension(table_project(tmp_path), spec) == dimension


def test_the_typed_space_is_searched_with_the_epochs_given(project_file, capsys):
    before = project_file.read_bytes()
    code = main(["search", str(project_file), "--dim", "layer.dense_1.units=4:8:2",
                 "--dim", "training.optimizer=adam", "--epochs", "1", "--json"])
    assert code == 0
    document = json.loads(capsys.readouterr().out)
    assert sorted(t["params"]["layer.dense_1.units"] for t in document["trials"]) == [4, 8]
    assert all(t["params"]["training.optimizer"] == "adam" for t in document["trials"])
    assert all("training.learning_rate" not in t["params"] for t in document["trials"])
    for trial in document["trials"]:
        run = load_project(Path(trial["run_dir"]) / "project.studio.json")
        assert run.training.epochs == 1 and trial["status"] == "finished"
    assert project_file.read_bytes() == before  # the project file keeps its own space


@pytest.mark.parametrize(("args", "message"), [
    (["--dim", "learning_rate=0.1"], "--dim 'learning_rate=0.1': 'learning_rate' is neither a "
     "training setting, a layer parameter nor a block. Did you mean training.learning_rate?"),
    (["--dim", "training.learning_rate"], "--dim 'training.learning_rate' is not "
     "TARGET=V1,V2,... or TARGET=LOW:HIGH[:log][:COUNT]."),
    (["--dim", "training.learning_rate="], "is not TARGET=V1,V2,..."),
    (["--dim", "training.learning_rate=-1,0.1"], "Learning rate must be more than 0, not -1"),
    (["--dim", "training.learning_rate=abc"], "Learning rate: “abc” is not a number."),
    (["--dim", "layer.dense_1.units=4.5,8"], "Units takes whole numbers, not 4.5."),
    (["--dim", "training.learning_rate=0:0.1:log"], "a log scale needs values above 0, not 0"),
    (["--dim", "training.learning_rate=0.1:0.01"], "the lowest value 0.1 is above the highest "
     "0.01"),
    (["--dim", "training.learning_rate=1e-4:1e-2:log:3:4"], "a range is "
     "LOW:HIGH[:log][:COUNT]"),
    (["--dim", "layer.dense_1.units=4:8:0"], "Units: the number of points must be at least 1."),
    (["--dim", "layer.dense_1.units=4:8:lgo"], "Units: 'lgo' is neither a scale (linear or "
     "log) nor a number of points."),
    (["--dim", "layer.dense_1.units=4:8:lgo:3"], "Units: the scale must be linear or log."),
    (["--dim", "layer.dense_1.units=4:8:log:x"], "Number of points: “x” is not a number."),
    (["--dim", "training.optimizer=adam,adamx"], "Optimizer must be one of "),
    (["--dim", "training.optimizer=adam:sgd"], "Optimizer is not a number: list its values "
     "instead."),
    (["--dim", "training.nesterov=maybe"], "Nesterov is on or off, not “maybe”."),
    (["--dim", "layer.dense_9.units=4"], "The layer 'dense_9' is no longer in the model."),
    (["--dim", "layer.dense_1.shape=4"], "The layer 'dense_1' has no parameter 'shape'."),
    (["--dim", "layer.dense_1.present=on,off"], "dense_1 cannot be left out of the model: it "
     "changes the shape from 4 to 8."),
    (["--dim", "layer.dense_1.units=4", "--dim", "layer.dense_1.units=8"],
     "dense_1 · Units is searched twice."),
    (["--epochs", "0"], "--epochs: Epochs must be at least 1, not 0."),
    (["--epochs", "2", "--dim", "training.epochs=1,2"], "--epochs sets every trial's epochs, "
     "but the search varies them"),
    (["--dim", "x" * 300 + "=1"], "is neither a training setting, a layer parameter nor a block."),
    (["--objective", "speed"], "Unknown objective 'speed': choose one of latency, params, "
     "size."),
    (["--objective", "latency, params,size"], "Choose parameters or model file size as an "
     "objective, not both"),
    (["--objective", "latency", "--strategy", "hyperband"], "Optuna prunes no search of "
     "several objectives"),
])
def test_a_bad_dimension_is_one_line_with_exit_2_and_nothing_written(project_file, capsys,
                                                                    private_workspace, args,
                                                                    message):
    before = snapshot(project_file.parent)
    assert main(["search", str(project_file), *args]) == 2
    error = one_line_error(capsys, message)
    assert len(error) < 250  # a long value is quoted cut short
    assert snapshot(project_file.parent) == before
    assert not private_workspace.exists() or not any(private_workspace.rglob("*.json"))


def test_resume_takes_no_new_space(project_file, tmp_path, capsys):
    assert main(["search", str(project_file), "--resume", str(tmp_path), "--dim",
                 "training.learning_rate=0.1"]) == 1
    one_line_error(capsys, "--startup-trials and --objective do not apply")


def test_a_random_start_below_1_is_one_line(project_file, capsys):
    assert main(["search", str(project_file), "--startup-trials", "0"]) == 1
    one_line_error(capsys, "--startup-trials must be at least 1, not 0.")


def test_whether_a_layer_is_present_is_typed_on_or_off(tmp_path):
    project = table_project(tmp_path)
    project.graph.insert_between("dense_1", "dense_2", Node("dropout_1", "Dropout"))
    assert parse_dimension(project, "layer.dropout_1.present=on,off") == Dimension(
        "layer.dropout_1.present", values=[True, False])


def test_a_block_s_repeats_are_typed_as_whole_numbers(tmp_path):
    project = table_project(tmp_path)
    project.graph.blocks = {"block_1": ["dense_1"]}
    assert parse_dimension(project, "block.block_1.repeats=1,2,3") == Dimension(
        "block.block_1.repeats", values=[1, 2, 3])
    with pytest.raises(UsageError, match="Repeats takes whole numbers, not 1.5"):
        parse_dimension(project, "block.block_1.repeats=1.5")


def test_an_unknown_target_error_is_raised_as_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="Did you mean layer.dense_1.units"):
        parse_dimension(table_project(tmp_path), "layer.dense_1.unit=4")
