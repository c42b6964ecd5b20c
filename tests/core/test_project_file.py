"""Project files: versioned JSON, validated on load, saved atomically, clear errors."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import jsonschema
import pytest

from studio.cli import main
from studio.core.base import files
from studio.core.project import document as project
from studio.core.project.document import (
    FORMAT_VERSION,
    SCHEMA_PATH,
    Checkpoints,
    DatasetChoice,
    DeviceChoice,
    EarlyStopping,
    Project,
    ProjectFileError,
    Schedule,
    load_project,
    project_schema,
    save_project,
)
from studio.core.project.migrations import migrate
from studio.core.project.templates import TEMPLATES, demo_project, from_template


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_templates_round_trip_and_match_schema(tmp_path, name):
    project = from_template(name)
    path = tmp_path / f"{name}.studio.json"
    save_project(project, path)
    document = json.loads(path.read_text())
    assert document["format_version"] == FORMAT_VERSION
    jsonschema.validate(document, project_schema())
    assert load_project(path).to_dict() == project.to_dict()


def test_schema_is_published_in_the_repo():
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["format_version"]["const"] == FORMAT_VERSION


def test_model_is_stored_as_a_graph():
    document = demo_project().to_dict()
    nodes = [n["id"] for n in document["model"]["nodes"]]
    assert document["model"]["edges"] == [[a, b] for a, b in zip(nodes, nodes[1:], strict=False)]
    assert {"optimizer", "learning_rate", "batch_size", "epochs", "loss", "metrics", "seed"} <= set(
        document["training"]
    )
    assert document["dataset"]["name"] == "mnist-10k"


def _write(tmp_path, text: str):
    path = tmp_path / "p.studio.json"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d.update(format_version=FORMAT_VERSION + 1), "newer Layer Studio"),
        (lambda d: d["training"].update(batch_size="big"), "training/batch_size"),
        (lambda d: d.pop("model"), "'model' is a required property"),
        (lambda d: d["model"]["nodes"][1].update(type="Warp"), "unknown type 'Warp'"),
        (lambda d: d["model"]["edges"].append(["input_1", "ghost"]), "'ghost' that does not exist"),
        (lambda d: d["model"]["nodes"].append(dict(d["model"]["nodes"][0])), "share the id"),
    ],
)
def test_invalid_documents_are_explained(tmp_path, mutate, expected):
    document = demo_project().to_dict()
    mutate(document)
    path = _write(tmp_path, json.dumps(document))
    with pytest.raises(ProjectFileError, match=expected) as info:
        load_project(path)
    assert str(info.value).startswith("p.studio.json:")


def _node(document, node_type):
    return next(n for n in document["model"]["nodes"] if n["type"] == node_type)


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: _node(d, "Dense")["params"].update(bogus=1),
         "Layer 'dense_1': Dense has no parameter 'bogus' (it takes units, activation, use_bias, "
         "kernel_initializer, kernel_regularizer, kernel_regularizer_factor)."),
        (lambda d: _node(d, "Conv2D")["params"].update(kernel_size=[3, 3, 3]),
         "Layer 'conv2d_1': Kernel size takes one number, or one per axis (height, width), not "
         "'3, 3, 3'."),
        (lambda d: _node(d, "Conv2D")["params"].update(strides=[1, 0]),
         "Layer 'conv2d_1': Strides must be at least 1, not 0."),
        (lambda d: _node(d, "Dense")["params"].update(kernel_regularizer="l3"),
         "Layer 'dense_1': Kernel regularizer must be one of none, l1, l2, l1_l2, not 'l3'."),
        (lambda d: _node(d, "Flatten")["params"].update(units=1),
         "Layer 'flatten_1': Flatten has no parameter 'units' (it takes no parameters)."),
        (lambda d: _node(d, "Input")["params"].pop("shape"),
         "Layer 'input_1': Shape is not given; a project must say it for every Input."),
        (lambda d: _node(d, "Dense")["params"].pop("units"),
         "Layer 'dense_1': Units is not given; a project must say it for every Dense."),
        (lambda d: _node(d, "Dense")["params"].update(units=0),
         "Layer 'dense_1': Units must be at least 1, not 0."),
        (lambda d: _node(d, "Dense")["params"].update(activation="x" * 10_000),
         "Layer 'dense_1': Activation must be one of linear, relu, sigmoid, tanh, softmax, gelu, "
         "elu, leaky_relu, not 'xxxxxxx"),
        (lambda d: d["model"]["nodes"].append({"id": "app", "type": "Application",
                                               "params": {"weights": "random"}}),
         "Layer 'app': Name is not given; a project must say it for every Application."),
    ],
)
def test_layer_parameters_are_checked_against_the_registry(tmp_path, mutate, expected):
    document = demo_project().to_dict()
    mutate(document)
    with pytest.raises(ProjectFileError) as info:
        load_project(_write(tmp_path, json.dumps(document)))
    assert str(info.value).startswith(f"p.studio.json: {expected}")
    assert len(str(info.value)) < 300


@pytest.mark.parametrize("command", [["export-code", "-o", "x.py"], ["train"]])
def test_the_command_line_refuses_an_input_without_shape_in_one_line(tmp_path, capsys,
                                                                    monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    document = demo_project().to_dict()
    _node(document, "Input")["params"].pop("shape")
    path = _write(tmp_path, json.dumps(document))
    assert main([command[0], str(path), *command[1:]]) == 1
    assert capsys.readouterr().err == (
        "studio: error: p.studio.json: Layer 'input_1': Shape is not given; a project must say "
        "it for every Input.\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.studio.json"]


def test_optional_parameters_left_out_take_their_default(tmp_path):
    document = demo_project().to_dict()
    _node(document, "Dense")["params"] = {"units": 10}
    document["model"]["nodes"].append({"id": "keras_1", "type": "Keras", "params": {}})
    project = load_project(_write(tmp_path, json.dumps(document)))
    assert project.graph.node("dense_1").resolved_params() == {
        "units": 10, "activation": "relu", "use_bias": True,
        "kernel_initializer": "glorot_uniform", "kernel_regularizer": "none",
        "kernel_regularizer_factor": 0.01}


def test_truncated_file_names_line_and_column(tmp_path):
    text = json.dumps(demo_project().to_dict(), indent=2)
    path = _write(tmp_path, text[: len(text) // 2])
    expected = r"not valid JSON at line \d+, column \d+.*truncated"
    with pytest.raises(ProjectFileError, match=expected):
        load_project(path)
    assert path.read_text() == text[: len(text) // 2]


@pytest.mark.parametrize(("text", "expected"), [("", "empty"), ("[1, 2]", "expected an object")])
def test_empty_and_wrong_kind(tmp_path, text, expected):
    with pytest.raises(ProjectFileError, match=expected):
        load_project(_write(tmp_path, text))


def test_missing_file(tmp_path):
    with pytest.raises(ProjectFileError, match="does not exist"):
        load_project(tmp_path / "nope.studio.json")


def test_a_fifo_is_refused_without_opening_it(tmp_path):
    fifo = tmp_path / "p.studio.json"
    os.mkfifo(fifo)
    # Safety net only: if the loader opened the FIFO it would block until a writer came, so a
    # writer comes after 10 s; the loader would then read nothing and the test fail.
    unblock = threading.Timer(10, lambda: os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)))
    unblock.start()
    try:
        with pytest.raises(ProjectFileError, match=r"^p\.studio\.json: not a regular file"):
            load_project(fifo)
    finally:
        unblock.cancel()


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_a_device_is_refused(device):
    with pytest.raises(ProjectFileError, match=r"^(zero|null): not a regular file"):
        load_project(device)


def test_a_folder_is_refused(tmp_path):
    with pytest.raises(ProjectFileError, match="a folder, not a project file"):
        load_project(tmp_path)


def test_a_file_over_the_size_cap_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "p.studio.json"
    save_project(demo_project(), path)
    monkeypatch.setattr(project, "MAX_FILE_BYTES", path.stat().st_size - 1)
    with pytest.raises(ProjectFileError, match="larger than a project can be") as info:
        load_project(path)
    assert len(str(info.value).splitlines()) == 1
    monkeypatch.setattr(project, "MAX_FILE_BYTES", path.stat().st_size)
    assert load_project(path) == demo_project()


def test_a_file_that_grows_after_the_size_check_is_read_only_up_to_the_cap(tmp_path,
                                                                            monkeypatch):
    path = tmp_path / "p.studio.json"
    path.write_text(" " * 100)
    (tmp_path / "small").write_text("{}")
    monkeypatch.setattr(project, "MAX_FILE_BYTES", 10)
    real_stat = os.stat
    monkeypatch.setattr(project.os, "stat", lambda p, **kw: real_stat(tmp_path / "small", **kw))
    with pytest.raises(ProjectFileError, match="larger than a project can be"):
        load_project(path)


def test_a_utf8_bom_is_accepted(tmp_path):
    path = tmp_path / "p.studio.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(demo_project().to_dict()).encode())
    assert load_project(path) == demo_project()


def _too_long_name(p: Project) -> None:
    p.name = "n" * 201


def _nan_momentum(p: Project) -> None:
    p.training.momentum = float("nan")


def _unknown_parameter(p: Project) -> None:
    p.graph.node("dense_1").params["bogus"] = 1


def _shape_as_tuple(p: Project) -> None:  # JSON writes a tuple as a list: this one saves
    p.graph.node("input_1").params["shape"] = (28, 28, 1)


@pytest.mark.parametrize(
    ("spoil", "expected"),
    [
        (_too_long_name, "at name: 'nnnnn.*' is too long"),
        (_nan_momentum, "at training/momentum: NaN is not a finite number"),
        (_unknown_parameter, "Layer 'dense_1': Dense has no parameter 'bogus'"),
    ],
)
@pytest.mark.parametrize("existing", [False, True])
def test_save_refuses_what_would_not_load_and_writes_nothing(tmp_path, spoil, expected,
                                                             existing):
    path = tmp_path / "p.studio.json"
    if existing:
        save_project(from_template("mlp"), path)
    before = path.read_bytes() if existing else None
    bad = demo_project()
    spoil(bad)
    refused = f"^p\\.studio\\.json: not saved, as it would not open again: .*{expected}"
    with pytest.raises(ProjectFileError, match=refused):
        save_project(bad, path)
    assert [p.name for p in tmp_path.iterdir()] == (["p.studio.json"] if existing else [])
    if existing:
        assert path.read_bytes() == before


def test_save_checks_the_text_it_writes(tmp_path):
    project = demo_project()
    _shape_as_tuple(project)
    save_project(project, tmp_path / "p.studio.json")
    assert load_project(tmp_path / "p.studio.json") == demo_project()


def test_save_refuses_a_file_over_the_size_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(project, "MAX_FILE_BYTES", 100)
    with pytest.raises(ProjectFileError, match="larger than a project can be"):
        save_project(demo_project(), tmp_path / "p.studio.json")
    assert list(tmp_path.iterdir()) == []


def test_save_is_atomic_when_writing_fails(tmp_path, monkeypatch):
    path = tmp_path / "p.studio.json"
    save_project(from_template("mlp"), path)
    before = path.read_text()

    def broken_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="disk full"):
        save_project(demo_project(), path)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["p.studio.json"]


def test_save_uses_a_temp_file_and_rename(tmp_path, monkeypatch):
    calls = []
    real_replace = os.replace

    def spy_replace(src, dst):
        calls.append((os.path.basename(src), os.path.basename(dst)))
        return real_replace(src, dst)

    monkeypatch.setattr(files.os, "replace", spy_replace)
    save_project(demo_project(), tmp_path / "p.studio.json")
    assert len(calls) == 1
    assert calls[0][1] == "p.studio.json" and calls[0][0].endswith(".tmp")


V1_FILE = Path(__file__).with_name("data") / "lenet5_v1.studio.json"


def test_a_format_1_file_still_loads():
    document = json.loads(V1_FILE.read_text())
    assert document["format_version"] == 1 and "positions" not in document
    project = load_project(V1_FILE)
    assert project.graph == from_template("lenet5").graph
    assert project.positions == {}
    assert project.to_dict()["format_version"] == FORMAT_VERSION == 11
    assert project.dataset == DatasetChoice(name="mnist-10k", validation_split=0.2, seed=0)
    assert project.training.momentum == 0.0  # format 3 and older trained SGD without it


def test_migrate_upgrades_v1_without_touching_the_input():
    document = json.loads(V1_FILE.read_text())
    original = json.loads(V1_FILE.read_text())
    upgraded = migrate(document)
    assert document == original
    assert upgraded["format_version"] == FORMAT_VERSION
    assert upgraded["dataset"]["source"] == "bundled"
    jsonschema.validate(upgraded, project_schema())
    current = demo_project().to_dict()
    assert migrate(current) == current
    for other in ([1, 2], {"format_version": True}, {"format_version": 99}, {}):
        assert migrate(other) == other


def test_a_format_5_file_that_rotates_keeps_its_mirrored_fill(tmp_path):
    document = demo_project().to_dict()
    document["format_version"] = 5
    for name, amounts in (("rotates", {"rotation": 20.0}), ("flips", {"flip_horizontal": True})):
        document["dataset"]["augmentation"] = amounts
        path = tmp_path / f"{name}.studio.json"
        path.write_text(json.dumps(document))
        augmentation = load_project(path).dataset.augmentation
        assert augmentation.fill_mode == ("reflect" if name == "rotates" else "constant")
    assert demo_project().dataset.augmentation.fill_mode == "constant"
    wrapping = demo_project()
    wrapping.dataset.augmentation.fill_mode = "wrap"
    save_project(wrapping, tmp_path / "wraps.studio.json")
    assert load_project(tmp_path / "wraps.studio.json").dataset.augmentation.fill_mode == "wrap"


def test_training_controls_round_trip(tmp_path):
    project = demo_project()
    training = project.training
    training.optimizer, training.momentum, training.nesterov = "sgd", 0.8, True
    training.schedule = Schedule(kind="cosine", warmup_epochs=2, min_learning_rate=1e-5)
    training.early_stopping = EarlyStopping(enabled=True, monitor="val_accuracy", patience=2)
    training.checkpoints = Checkpoints(every_epochs=3, keep_best_only=True)
    training.device = DeviceChoice(kind="gpus", gpus=[0, 1], precision="mixed_float16",
                                   deterministic=True)
    save_project(project, tmp_path / "p.studio.json")
    assert load_project(tmp_path / "p.studio.json") == project


def test_invalid_training_controls_are_refused():
    document = demo_project().to_dict()
    document["training"]["schedule"] = {"kind": "cosine", "factor": 0}
    with pytest.raises(ProjectFileError, match="training/schedule/factor"):
        Project.from_dict(document)


def test_positions_round_trip(tmp_path):
    project = from_template("mlp")
    project.positions = {"input_1": [0.0, 0.0], "dense_1": [-90.5, 224.0]}
    path = tmp_path / "p.studio.json"
    save_project(project, path)
    document = json.loads(path.read_text())
    assert document["positions"] == {"input_1": [0.0, 0.0], "dense_1": [-90.5, 224.0]}
    jsonschema.validate(document, project_schema())
    loaded = load_project(path)
    assert loaded.positions == project.positions
    assert loaded.to_dict() == project.to_dict()


def test_positions_are_optional_in_a_format_2_document():
    document = demo_project().to_dict()
    del document["positions"]
    assert Project.from_dict(document).positions == {}


def test_positions_of_unknown_layers_are_dropped_on_load(tmp_path):
    document = demo_project().to_dict()
    document["positions"] = {"ghost": [1, 2], "input_1": [3, 4]}
    project = load_project(_write(tmp_path, json.dumps(document)))
    assert project.positions == {"input_1": [3.0, 4.0]}


@pytest.mark.parametrize(
    ("section", "key", "token"),
    [
        ("dataset/augmentation", "rotation", "NaN"),
        ("dataset", "validation_split", "NaN"),
        ("training", "momentum", "NaN"),
        ("training", "learning_rate", "Infinity"),
        ("training", "learning_rate", "-Infinity"),
        ("training", "learning_rate", "1e999"),
        ("positions/input_1", 0, "NaN"),
    ],
)
def test_non_finite_numbers_are_refused(tmp_path, section, key, token):
    document = demo_project().to_dict()
    document["dataset"]["augmentation"]["rotation"] = 0
    document["positions"] = {"input_1": [0, 0]}
    parent = document
    for part in section.split("/"):
        parent = parent[part]
    parent[key] = "TOKEN"
    path = _write(tmp_path, json.dumps(document).replace('"TOKEN"', token))
    expected = (f"p.studio.json: The project is not valid at {section}/{key}: {token} is not a "
                "finite number; every number in a project must be finite.")
    with pytest.raises(ProjectFileError) as info:
        load_project(path)
    assert str(info.value) == expected


@pytest.mark.parametrize(
    ("digits", "expected"),
    [(310, "at dataset/seed: the number is too large"),
     (5000, "a number in the file has thousands of digits")],
)
def test_whole_numbers_too_large_for_a_double_are_refused(tmp_path, digits, expected):
    text = json.dumps(demo_project().to_dict()).replace('"seed": 0', '"seed": ' + "9" * digits, 1)
    with pytest.raises(ProjectFileError, match=expected):
        load_project(_write(tmp_path, text))


def test_non_finite_numbers_in_a_document_in_memory_are_refused():
    document = demo_project().to_dict()
    document["training"]["momentum"] = float("nan")
    with pytest.raises(ProjectFileError, match="at training/momentum: nan is not a finite"):
        Project.from_dict(document)
    document["training"]["momentum"] = 0.5
    document["training"]["seed"] = 2**1100
    with pytest.raises(ProjectFileError, match="at training/seed: the number is too large"):
        Project.from_dict(document)


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_deeply_nested_documents_are_refused(tmp_path, depth):
    document = demo_project().to_dict()
    document["model"]["nodes"].append({"id": "deep", "type": "Keras", "params": {"config": "X"}})
    text = json.dumps(document).replace('"X"', "[" * depth + "]" * depth)
    with pytest.raises(ProjectFileError) as info:
        load_project(_write(tmp_path, text))
    assert str(info.value) == ("p.studio.json: The project is nested more than 100 levels deep; "
                               "no project is.")


def test_deeply_nested_documents_in_memory_are_refused():
    document = demo_project().to_dict()
    nested: list = []
    for _ in range(5_000):
        nested = [nested]
    document["model"]["nodes"][0]["params"]["shape"] = nested
    with pytest.raises(ProjectFileError, match="nested more than 100 levels deep"):
        Project.from_dict(document)


HUGE = "x" * 200_000


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d.update(name=HUGE), "at name: 'xxx"),
        (lambda d: d["dataset"].update(image_size=[1] * 10_000), r"at dataset/image_size: \[1, "),
        (lambda d: d["training"].update(metrics=list(range(10_000))),
         r"at training/metrics: \[0, 1, 2, .*\] is too long"),
        (lambda d: d["training"].update(metrics=[HUGE]),
         r"at training/metrics/0: 'xxx.*' is not one of \['accuracy'\]"),
        (lambda d: d["training"].update({HUGE: 1, "bogus": 2}),
         "at training: unexpected key 'xxx.*' and 1 other"),
        (lambda d: d["positions"].update({HUGE: [0, 0, 0]}), "at positions/'xxx"),
        (lambda d: d["model"]["nodes"][1].update(type=HUGE), "unknown type 'xxx"),
        (lambda d: d["positions"].update({"a\nb": [0]}),
         r"at positions/'a\\nb': \[0\] is too short"),
        (lambda d: d["model"]["edges"].append(["input_1", HUGE]), "a layer 'xxx.*' that does"),
        (lambda d: d.update(format_version=10**300), "newer Layer Studio"),
        (lambda d: d["model"]["nodes"][0]["params"].update(shape=[HUGE]),
         "at model/nodes/0/params/shape/0: 'xxx"),
    ],
)
def test_error_lines_quote_values_short(tmp_path, mutate, expected):
    document = demo_project().to_dict()
    document["positions"] = {}
    mutate(document)
    with pytest.raises(ProjectFileError, match=expected) as info:
        load_project(_write(tmp_path, json.dumps(document)))
    message = str(info.value)
    assert len(message.splitlines()) == 1
    assert len(message) <= 300, message


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d["dataset"].update(image_size=[1] * 200_000),
        lambda d: d["training"].update(metrics=["accuracy"] * 200_000),
        lambda d: d["model"]["edges"].extend([["input_1", "dense_1"]] * 200_000),
        lambda d: d["model"]["nodes"][0]["params"].update({f"k{i}": 1 for i in range(100_000)}),
    ],
    ids=["image_size", "metrics", "edges", "params"],
)
def test_a_huge_list_is_refused_by_its_length(tmp_path, mutate):
    # Each bound comes before the check of the items in the schema, and the loader stops at
    # the first error: jsonschema took 3 s to check 200,000 items (see --durations).
    document = demo_project().to_dict()
    mutate(document)
    with pytest.raises(ProjectFileError, match=r"is too long|has too many properties"):
        load_project(_write(tmp_path, json.dumps(document)))


def test_a_file_name_with_a_line_break_is_quoted(tmp_path):
    path = tmp_path / "two\nlines.studio.json"
    path.write_text("[]")
    with pytest.raises(ProjectFileError, match=r"^'two\\nlines\.studio\.json': The file does not"):
        load_project(path)


def test_malformed_positions_are_explained(tmp_path):
    document = demo_project().to_dict()
    document["positions"] = {"input_1": [1]}
    with pytest.raises(ProjectFileError, match="positions/input_1"):
        load_project(_write(tmp_path, json.dumps(document)))


def test_prune_positions_keeps_only_layers_in_the_graph():
    project = demo_project()
    project.positions = {"input_1": [0, 0], "flatten_1": [0, 100], "gone": [5, 5]}
    project.graph.remove_nodes(["flatten_1"])
    project.prune_positions()
    assert project.positions == {"input_1": [0.0, 0.0]}
    assert project.copy().positions == project.positions
