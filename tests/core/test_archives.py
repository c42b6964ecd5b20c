"""What is read from a model file is capped: a member's size, how much it inflates, and the
config of a legacy .h5 file, each refused in one line naming the file and the limit."""

from __future__ import annotations

import keras
import pytest

from studio.core.base import archives
from studio.core.build.keras_import import ImportFailure, import_model
from studio.core.inference.predictor import ModelFileError, Predictor
from tests.keras_models import bomb_keras


def small_model():
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])


@pytest.mark.parametrize(("name", "what"), [("m.keras", "config.json"), ("m.h5", "model config")])
def test_a_config_over_the_cap_is_refused(tmp_path, monkeypatch, name, what):
    path = tmp_path / name
    small_model().save(path)
    monkeypatch.setattr(archives, "MAX_MEMBER_BYTES", 1024)
    with pytest.raises(ImportFailure) as refused:
        import_model(path)
    assert str(refused.value) == f"{name}: its {what} is larger than 1 KB, the most Layer " \
                                 "Studio reads."
    monkeypatch.undo()
    assert import_model(path).graph.nodes[-1].type == "Dense"


def test_a_bomb_is_refused_before_keras_reads_it_to_answer(tmp_path):
    with pytest.raises(ModelFileError) as refused:
        Predictor.load(bomb_keras(tmp_path), {"kind": "image"})
    assert str(refused.value) == ("bomb.keras: its config.json inflates from 8 KB to 8 MB, more "
                                  "than 1000 times (a decompression bomb).")
