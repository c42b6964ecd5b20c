"""Attention and sequence layers: how they are built and called, their plain-language shape
problems with one-click fixes, and Keras models using them importing as editable nodes."""

from __future__ import annotations

import keras
import pytest

from studio.core.build.analysis import analyze
from studio.core.build.keras_import import ImportFailure, import_model
from studio.core.build.keras_model import build_keras_model
from studio.core.export.python_code import model_code
from studio.core.model.flops import layer_flops
from studio.core.model.graph import Graph, Node
from studio.core.model.layers import OPAQUE_TYPE
from studio.core.model.registry import REGISTRY
from tests.core.test_code_export import summary
from tests.core.test_keras_import import KERNEL_DEFAULTS, round_trip, types

layers = keras.layers
RECURRENT_DEFAULTS = {**KERNEL_DEFAULTS, "recurrent_initializer": "orthogonal",
                      "recurrent_regularizer": "none", "recurrent_regularizer_factor": 0.01}
"""A recurrent layer's weights' settings as Keras has them by default."""


def attention_graph(*shapes: list[int], **params) -> Graph:
    """Inputs of ``shapes`` all feeding one MultiHeadAttention, in order."""
    inputs = [Node(f"in{i}", "Input", {"shape": shape}) for i, shape in enumerate(shapes)]
    graph = Graph(nodes=[*inputs, Node("mha", "MultiHeadAttention", params)])
    for node in inputs:
        graph.connect(node.id, "mha")
    return graph


def test_one_input_attends_to_itself_and_two_attend_across():
    self_attention = build_keras_model(attention_graph([6, 8], num_heads=2))
    layer = self_attention.get_layer("mha")
    assert layer.get_config()["key_dim"] == 4  # 8 features shared between 2 heads
    assert self_attention.output_shape == (None, 6, 8)
    call = self_attention.get_config()["layers"][-1]["inbound_nodes"][0]["args"]
    assert [t["config"]["keras_history"][0] for t in call] == ["in0", "in0"]
    cross = build_keras_model(attention_graph([6, 8], [3, 5], num_heads=2, output_shape=7))
    assert cross.output_shape == (None, 6, 7)
    assert cross.count_params() == analyze(attention_graph(
        [6, 8], [3, 5], num_heads=2, output_shape=7)).total_params


def test_features_that_do_not_split_into_the_heads_say_so_and_offer_fixes():
    graph = attention_graph([10, 64], num_heads=3)
    (problem,) = analyze(graph).problems
    assert problem.node_id == "mha"
    assert problem.message == (
        "64 features do not split into 3 heads. Choose a number of heads that divides 64, "
        "or set key_dim to the size each head should have.")
    assert [fix.label for fix in problem.fixes] == [
        "Set num heads to 2", "Set num heads to 4", "Set key dim to 21"]
    for fix in problem.fixes:
        fixed = graph.copy()
        fix.apply(fixed)
        assert analyze(fixed).ok
        assert build_keras_model(fixed).count_params() == analyze(fixed).total_params


@pytest.mark.parametrize(
    ("layer", "shape", "target", "words"),
    [("LSTM", [28, 28, 1], [28, 28], "LSTM expects a sequence of steps × features, but its "
      "input has shape 28 × 28 × 1 (3 dimensions). Add a Reshape to 28 × 28 first."),
     ("Bidirectional", [12], [12, 1], "Bidirectional expects a sequence of steps × features, "
      "but its input has shape 12 (1 dimension). Add a Reshape to 12 × 1 first."),
     ("MultiHeadAttention", [12], [12, 1], "MultiHeadAttention attends across the steps of a "
      "sequence (steps × features), but its input has shape 12. Reshape it to 12 × 1 first, "
      "which reads each value as a step.")],
)
def test_a_sequence_layer_after_an_image_or_a_vector_offers_a_reshape(
        layer, shape, target, words):
    graph = Graph.from_chain([Node("in", "Input", {"shape": shape}),
                              Node("seq", layer, {"num_heads": 1} if "Attention" in layer else {}),
                              Node("out", "Dense", {"units": 3})])
    (problem,) = analyze(graph).problems
    assert problem.node_id == "seq" and problem.message == words
    (fix,) = problem.fixes
    assert fix.label == f"Insert Reshape to {' × '.join(map(str, target))} before seq"
    fix.apply(graph)
    assert analyze(graph).ok
    assert graph.node(graph.inputs_of("seq")[0]).params == {"target_shape": target}


def test_repeat_vector_and_time_distributed_explain_what_they_need():
    (problem,) = analyze(Graph.from_chain([
        Node("in", "Input", {"shape": [4, 4]}), Node("rep", "RepeatVector", {"n": 3})])).problems
    assert problem.message == ("RepeatVector repeats a flat vector, but its input has shape "
                               "4 × 4. Add Flatten first, or a recurrent layer without return "
                               "sequences.")
    (problem,) = analyze(Graph.from_chain([
        Node("in", "Input", {"shape": [4]}), Node("td", "TimeDistributed", {})])).problems
    assert problem.message.startswith("TimeDistributed applies its Dense layer to every step")


@pytest.mark.parametrize(
    ("layer", "inputs", "params", "expected"),
    [
        # Each head scores every query step against every key step (a multiply-add per key
        # value, then the softmax), and weighs the values likewise; the projections cost two
        # operations per weight per step.
        ("MultiHeadAttention", [(10, 8)], {"num_heads": 2},
         2 * (2 * 4 * (3 * 8 + 3) + 2 * 4 * 8 + 8) * 10 + 2 * 10 * 10 * (4 * 4 + 1)),
        ("SimpleRNN", [(12, 5)], {"units": 8}, 2 * 8 * (5 + 8 + 1) * 12),
        ("Bidirectional", [(12, 5)], {"layer": "GRU", "units": 8},
         2 * 2 * 3 * 8 * (5 + 8 + 2) * 12),
        ("TimeDistributed", [(6, 5)], {"units": 4, "activation": "relu"},
         2 * 5 * 4 * 6 + 2 * 4 * 6),
        ("RepeatVector", [(7,)], {"n": 3}, 0),
    ],
)
def test_flops_of_attention_and_sequence_layers(layer, inputs, params, expected):
    full = REGISTRY[layer].resolved(params)
    output, weights = REGISTRY[layer].output(full, inputs)
    assert layer_flops(layer, full, inputs, output, weights) == expected


def sequence_model():
    """Every attention and sequence layer, called in each way Keras records."""
    text = keras.Input((6, 8), name="text")
    other = keras.Input((4, 5), name="other")
    attended = layers.MultiHeadAttention(2, 4, name="self")(text, text)
    crossed = layers.MultiHeadAttention(2, 3, output_shape=8, name="cross",
                                        kernel_initializer="he_normal")(
        query=attended, value=other, key=other)
    keyed = layers.MultiHeadAttention(1, 2, name="keyed")(crossed, other, other)
    gru = layers.GRU(3, return_sequences=True, kernel_initializer="lecun_normal",
                     recurrent_regularizer=keras.regularizers.L2(0.25))
    both = layers.Bidirectional(gru, merge_mode="sum", name="both")(keyed)
    steps = layers.TimeDistributed(layers.Dense(5, activation="relu", kernel_regularizer="l2"),
                                   name="steps")(both)
    simple = layers.SimpleRNN(4, activation="relu", recurrent_initializer="glorot_uniform",
                              name="simple")(steps)
    repeated = layers.RepeatVector(3, name="repeat")(simple)
    last = layers.Bidirectional(layers.LSTM(2), name="last")(repeated)
    return keras.Model([text, other], layers.Dense(2, name="out")(last))


def test_a_keras_model_with_attention_and_sequence_layers_imports_as_editable_nodes(tmp_path):
    model = sequence_model()
    project = round_trip(model, tmp_path / "sequence.keras")
    assert OPAQUE_TYPE not in types(project)
    graph = project.graph
    assert graph.inputs_of("self") == ["text"]
    assert graph.inputs_of("cross") == ["self", "other"]
    assert graph.inputs_of("keyed") == ["cross", "other"]
    assert graph.node("cross").params == {"num_heads": 2, "key_dim": 3, "dropout": 0.0,
                                          "output_shape": 8, **KERNEL_DEFAULTS,
                                          "kernel_initializer": "he_normal"}
    assert graph.node("both").params == {
        "layer": "GRU", "units": 3, "return_sequences": True, "merge_mode": "sum",
        **RECURRENT_DEFAULTS, "kernel_initializer": "lecun_normal",
        "recurrent_regularizer": "l2", "recurrent_regularizer_factor": 0.25}
    assert graph.node("last").params == {"layer": "LSTM", "units": 2, "return_sequences": False,
                                         "merge_mode": "concat", **RECURRENT_DEFAULTS}
    assert graph.node("steps").params == {"units": 5, "activation": "relu", **KERNEL_DEFAULTS,
                                          "kernel_regularizer": "l2"}
    assert graph.node("simple").params == {"units": 4, "activation": "relu",
                                           "return_sequences": False, **RECURRENT_DEFAULTS,
                                           "recurrent_initializer": "glorot_uniform"}
    assert graph.node("repeat").params == {"n": 3}
    rebuilt = build_keras_model(graph)
    both = rebuilt.get_layer("both")
    for gru in (both.forward_layer, both.backward_layer):  # the wrapped layers get them too
        assert gru.recurrent_regularizer.get_config() == {"l2": 0.25}
        assert type(gru.cell.kernel_initializer).__name__ == "LecunNormal"
    assert rebuilt.get_layer("steps").layer.kernel_regularizer.get_config() == {"l2": 0.01}
    assert type(rebuilt.get_layer("cross")._kernel_initializer).__name__ == "HeNormal"

    code = model_code(graph, project.name)  # made for other data than MNIST-10k's
    assert ("Bidirectional(\n        layer=keras.layers.GRU(units=3, return_sequences=True, "
            "kernel_initializer='lecun_normal'") in code
    namespace = {"keras": keras}
    exec(code, namespace)  # noqa: S102 - our own output
    assert summary(namespace["build_model"]()) == summary(build_keras_model(graph))


def test_a_legacy_h5_file_with_attention_and_sequence_layers_imports_the_same(tmp_path):
    assert OPAQUE_TYPE not in types(round_trip(sequence_model(), tmp_path / "sequence.h5"))


def test_a_separate_key_is_a_third_input(tmp_path):
    query, value, key = keras.Input((5, 4)), keras.Input((3, 6)), keras.Input((3, 2))
    model = keras.Model([query, value, key],
                        layers.MultiHeadAttention(2, 3, name="mha")(query, value, key))
    project = round_trip(model, tmp_path / "key.keras")
    assert len(project.graph.inputs_of("mha")) == 3
    assert project.graph.node("mha").type == "MultiHeadAttention"


@pytest.mark.parametrize(
    "layer",
    [lambda: layers.MultiHeadAttention(2, 3, use_bias=False),
     lambda: layers.Bidirectional(layers.LSTM(3, dropout=0.1)),
     lambda: layers.TimeDistributed(layers.Dense(3, use_bias=False))],
)
def test_settings_the_registry_cannot_express_stay_opaque_and_still_build(tmp_path, layer):
    text, other = keras.Input((6, 8)), keras.Input((4, 8))
    original = layer()
    if isinstance(original, layers.MultiHeadAttention):
        model = keras.Model([text, other], original(text, other))
    else:
        model = keras.Model(text, original(text))
    project = round_trip(model, tmp_path / "m.keras")
    assert types(project)[OPAQUE_TYPE] == 1


def test_attention_whose_key_is_its_query_but_not_its_value_is_refused(tmp_path):
    query, value = keras.Input((5, 4)), keras.Input((5, 4))
    model = keras.Model([query, value],
                        layers.MultiHeadAttention(2, 3, name="mha")(query, value, query))
    model.save(tmp_path / "m.keras")
    with pytest.raises(ImportFailure, match="^m.keras: layer mha takes one layer's output for "
                                            "two of its query, value, key"):
        import_model(tmp_path / "m.keras")
