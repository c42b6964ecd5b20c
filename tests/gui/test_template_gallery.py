"""File > New from Template…: the gallery, opening a template, and ImageNet weights offline."""

from __future__ import annotations

import io
import threading
import urllib.error
from itertools import pairwise

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

from studio.core.base import downloads
from studio.core.model.applications import BASES, HDF5_SIGNATURE, cache_dir
from studio.core.model.layout import NODE_WIDTH
from studio.core.project.templates import BLANK, TEMPLATES, from_template
from studio.gui.shell.template_gallery import TemplateGallery
from tests.gui.support import click_row

CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
OFFLINE = ("The ImageNet weights for MobileNetV2 could not be downloaded (no network?). "
           "The template still works with random initial weights.")


def open_gallery(qtbot, window) -> TemplateGallery:
    """Press Ctrl+Shift+N and return the gallery it shows."""
    qtbot.keyClick(window, Qt.Key.Key_N, CTRL_SHIFT)
    qtbot.waitUntil(lambda: window.findChild(TemplateGallery) is not None)
    gallery = window.findChild(TemplateGallery)
    qtbot.waitExposed(gallery)
    return gallery


def pick(qtbot, gallery: TemplateGallery, name: str, double: bool = False) -> None:
    """Click (or double-click) the gallery row of template ``name``."""
    item = gallery.item_for(name)
    gallery.tree.scrollToItem(item)
    pos = gallery.tree.visualItemRect(item).center()
    qtbot.mouseClick(gallery.tree.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert gallery.selected() == name
    if double:
        qtbot.mouseDClick(gallery.tree.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def application_params(window) -> dict:
    (node,) = [n for n in window.doc.project.graph.nodes if n.type == "Application"]
    return node.params


def test_gallery_lists_every_template_and_opens_one_on_the_canvas(qtbot, window):
    gallery = open_gallery(qtbot, window)
    for name, template in TEMPLATES.items():
        item = gallery.item_for(name)
        assert item.text(0) == template.title and item.parent().text(0) == template.category
    pick(qtbot, gallery, "resnet")
    assert gallery.title.text() == "ResNet (small)"
    assert gallery.size.text() == "31 layers · 309,418 parameters"
    assert gallery.description.text() == TEMPLATES["resnet"].description
    assert gallery.fit.text() == "Ready to train on MNIST-10k."
    qtbot.mouseClick(gallery.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.doc.project.name == "ResNet (small)")
    graph = from_template("resnet").graph
    assert set(window.scene.nodes) == set(graph.ids())
    assert set(window.scene.edges) == set(graph.edges)
    assert window.doc.undo_stack.isClean() and window.doc.path is None
    assert not window.weights.job.busy()  # nothing to download


def test_opening_a_template_first_offers_to_save_unsaved_changes(qtbot, window, dialogs):
    click_row(qtbot, window, "dense_1")
    qtbot.keyClick(window.model_list.table, Qt.Key.Key_Delete)
    assert not window.doc.undo_stack.isClean()
    pick(qtbot, open_gallery(qtbot, window), "mlp", double=True)
    qtbot.waitUntil(lambda: window.doc.project.name == "Multi-layer perceptron")
    assert dialogs == [("question", "Unsaved changes", "Save the changes to Small CNN?")]
    assert window.doc.undo_stack.isClean()


def test_other_data_is_explained_in_the_gallery(qtbot, window):
    gallery = open_gallery(qtbot, window)
    pick(qtbot, gallery, "lstm_text")
    assert "100 token ids (text). Choose a CSV of texts" in gallery.fit.text()
    pick(qtbot, gallery, "vgg16")
    assert gallery.fit.text().endswith(
        "Its ImageNet weights are downloaded when you open it; without a network it can "
        "start from random weights.")
    qtbot.mouseClick(gallery.buttons.button(gallery.buttons.StandardButton.Cancel),
                     Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not gallery.isVisible())
    assert window.doc.project.name == "Small CNN"


@pytest.fixture
def offline(monkeypatch):
    """The network call fails at once, as it does without a network."""
    def refuse(url, timeout):
        raise urllib.error.URLError("Name or service not known")

    monkeypatch.setattr(downloads, "_open_url", refuse)


def test_offline_transfer_template_opens_and_offers_random_weights(qtbot, window, offline):
    pick(qtbot, open_gallery(qtbot, window), "mobilenetv2", double=True)
    qtbot.waitUntil(lambda: window.weights.notice is not None and window.weights.notice.isVisible())
    assert window.weights.notice.text() == OFFLINE
    assert set(window.scene.nodes) == set(from_template("mobilenetv2").graph.ids())
    assert application_params(window)["weights"] == "imagenet"
    with qtbot.waitSignal(window.weights.settled):
        qtbot.mouseClick(window.weights.random_button, Qt.MouseButton.LeftButton)
    assert application_params(window) == {
        "name": "MobileNetV2", "weights": "random", "trainable_layers": BASES["MobileNetV2"].layers}
    assert "random" in window.scene.nodes["application_1"].look.key_params
    qtbot.waitUntil(lambda: not window.weights.job.busy())


class StalledResponse(io.BytesIO):
    """A download that sends one chunk, then waits for ``gate`` before the next."""

    def __init__(self, gate: threading.Event) -> None:
        super().__init__()
        self.headers = {"Content-Length": str(10 * downloads.CHUNK)}
        self.gate = gate
        self.chunks = 0

    def read(self, size: int = -1) -> bytes:
        self.chunks += 1
        if self.chunks > 1:
            self.gate.wait()
        return b"x" * size


def test_cancel_keeps_imagenet_weights_when_asked(qtbot, window, monkeypatch):
    gate = threading.Event()
    monkeypatch.setattr(downloads, "_open_url", lambda url, timeout: StalledResponse(gate))
    pick(qtbot, open_gallery(qtbot, window), "resnet50")
    qtbot.mouseClick(window.findChild(TemplateGallery).open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.weights.progress is not None
                    and window.weights.progress.value() > 0)
    assert "ResNet50" in window.weights.progress.labelText()
    cancel = window.weights.progress.findChild(QPushButton)
    assert cancel.text() == "Cancel"
    qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)
    gate.set()
    qtbot.waitUntil(lambda: window.weights.notice is not None and window.weights.notice.isVisible())
    assert "the download was cancelled" in window.weights.notice.text()
    keep = next(b for b in window.weights.notice.buttons() if b.text() == "Keep ImageNet weights")
    with qtbot.waitSignal(window.weights.settled):
        qtbot.mouseClick(keep, Qt.MouseButton.LeftButton)
    assert application_params(window)["weights"] == "imagenet"
    assert not list(cache_dir().iterdir())
    qtbot.waitUntil(lambda: not window.weights.job.busy())


def test_cached_weights_open_without_a_download(qtbot, window, offline):
    path = cache_dir() / BASES["EfficientNetB0"].weights_name
    path.parent.mkdir(parents=True)
    path.write_bytes(HDF5_SIGNATURE + b"weights")
    pick(qtbot, open_gallery(qtbot, window), "efficientnetb0", double=True)
    qtbot.waitUntil(lambda: window.doc.project.name == "EfficientNetB0 transfer learning")
    assert not window.weights.job.busy() and window.weights.notice is None


def test_inserting_a_template_adds_it_beside_the_model_in_one_step(qtbot, window):
    before = window.doc.project.graph.copy()
    steps = window.doc.undo_stack.count()
    gallery = open_gallery(qtbot, window)
    pick(qtbot, gallery, "mlp")
    qtbot.mouseClick(gallery.insert_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.doc.undo_stack.count() == steps + 1)
    assert window.doc.undo_stack.undoText() == "Insert Multi-layer perceptron"
    graph = window.doc.project.graph
    added = [i for i in graph.ids() if i not in before.ids()]
    assert len(added) == len(from_template("mlp").graph.nodes)
    assert window.scene.selected_ids() == added
    rightmost = max(window.scene.nodes[i].pos().x() for i in before.ids())
    assert all(window.scene.nodes[i].pos().x() > rightmost for i in added)
    assert window.doc.project.name == "Small CNN"

    window.undo_action.trigger()
    assert window.doc.project.graph == before


def grey_48(project) -> None:
    """The data the tests' blank projects fit: CIFAR-10 read at 48 × 48 in grey."""
    project.dataset.source, project.dataset.name = "keras", "cifar10"
    project.dataset.image_size, project.dataset.color = [48, 48], "grayscale"


def test_ctrl_n_offers_to_save_then_opens_an_input_that_fits_the_data(qtbot, window, dialogs):
    window.doc.edit("Use other data", grey_48)
    assert not window.doc.undo_stack.isClean()
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.doc.project.name == "Untitled")
    assert dialogs == [("question", "Unsaved changes", "Save the changes to Small CNN?")]
    assert [(n.type, n.params) for n in window.doc.project.graph.nodes] == [
        ("Input", {"shape": [48, 48, 1]})]
    assert set(window.scene.nodes) == {"input_1"}
    assert window.doc.project.dataset.image_size == [48, 48]  # the data stays
    assert window.doc.undo_stack.isClean() and window.doc.path is None
    assert "Cannot start" in window.training.start_button.toolTip()  # nothing learns yet


def test_the_gallery_opens_with_a_blank_card_for_the_current_data(qtbot, window):
    window.doc.edit("Use other data", grey_48)
    window.doc.undo_stack.setClean()
    gallery = open_gallery(qtbot, window)
    item = gallery.item_for(BLANK)
    assert item.text(0) == "Blank" and item.parent().text(0) == "Start from scratch"
    assert gallery.tree.indexOfTopLevelItem(item.parent()) == 0
    pick(qtbot, gallery, BLANK)
    assert gallery.size.text() == "1 layer · 0 parameters"
    assert "(48 × 48 × 1)" in gallery.description.text()
    assert not gallery.insert_button.isEnabled()
    pick(qtbot, gallery, "mlp")
    assert gallery.insert_button.isEnabled()
    pick(qtbot, gallery, BLANK, double=True)
    qtbot.waitUntil(lambda: window.doc.project.name == "Untitled")
    assert [n.params for n in window.doc.project.graph.nodes] == [{"shape": [48, 48, 1]}]


@pytest.mark.parametrize(("name", "category"), [
    ("unet", "Classic architectures"), ("mobilenet_small", "Classic architectures"),
    ("cnn1d", "Sequences")])
def test_the_new_layers_templates_open_ready_for_mnist(qtbot, window, name, category):
    gallery = open_gallery(qtbot, window)
    assert gallery.item_for(name).parent().text(0) == category
    pick(qtbot, gallery, name, double=True)
    qtbot.waitUntil(lambda: window.doc.project.name == TEMPLATES[name].title)
    assert set(window.scene.nodes) == set(from_template(name).graph.ids())
    assert window.doc.analysis().ok
    assert window.doc.project.training == TEMPLATES[name].training()


def test_the_unets_skip_wires_run_clear_of_the_layers_they_pass_in_lanes_of_their_own(
        qtbot, window):
    pick(qtbot, open_gallery(qtbot, window), "unet", double=True)
    qtbot.waitUntil(lambda: window.doc.project.name == "U-Net (small)")
    scene = window.scene
    skips = {key: edge for key, edge in scene.edges.items() if key[1].startswith("concatenate")
             and key[0].startswith("conv2d_") and not key[0].startswith("conv2d_transpose")}
    assert sorted(skips) == [("conv2d_2", "concatenate_2"), ("conv2d_4", "concatenate_1")]
    columns = {item.pos().x() for item in scene.nodes.values()}
    assert len(columns) == 3  # 20 layers wrapped into columns
    for (source, target), edge in skips.items():
        assert scene.nodes[source].pos().x() != scene.nodes[target].pos().x()
        wire = [edge.mapToScene(edge.path().pointAtPercent(i / 200)) for i in range(201)]
        for item in scene.nodes.values():
            if item.node_id not in (source, target):
                assert not any(item.sceneBoundingRect().contains(p) for p in wire), item.node_id
    # Between two columns, each wire climbs its own lane: none runs along another.
    climbs = [(round(a.x()), sorted((a.y(), b.y()))) for edge in scene.edges.values()
              for a, b in pairwise(edge.path().toFillPolygon())
              if a.x() == b.x() and not any(round(a.x()) == round(x + NODE_WIDTH / 2)
                                            for x in columns)]
    assert len(climbs) >= 4  # the two skips, and the wires on to the next column
    for i, (x, (top, bottom)) in enumerate(climbs):
        for other, (low, high) in climbs[i + 1:]:
            assert other != x or high <= top or low >= bottom, (x, top, bottom)


DETECTION_DEMO = "Detection demo (digits)"


class Served(io.BytesIO):
    """A download of these bytes, its length not announced."""

    headers: dict[str, str] = {}


def open_detection_template(qtbot, window, name: str) -> None:
    """Open template ``name`` from the gallery and see it fit the detection demo set."""
    gallery = open_gallery(qtbot, window)
    pick(qtbot, gallery, name)
    assert gallery.category.text() == "Detection"
    assert gallery.fit.text().startswith(f"Ready to train on {DETECTION_DEMO}.")
    qtbot.mouseClick(gallery.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.doc.project.name == TEMPLATES[name].title)
    assert set(window.scene.nodes) == set(from_template(name).graph.ids())
    info = window.doc.dataset()
    assert info.title == DETECTION_DEMO and info.num_classes == 10
    (head,) = [n for n in window.doc.project.graph.nodes if n.type == "DetectionHead"]
    assert head.params["classes"] == info.num_classes
    assert window.doc.analysis().ok, window.doc.analysis().problems
    look = window.scene.nodes[head.id].look
    assert look.shape == "16 × 16 × 14" and look.params and not look.problem  # 10 + 4 channels


def test_the_small_detector_template_opens_on_the_detection_demo(qtbot, window):
    open_detection_template(qtbot, window, "small_detector")
    assert not window.weights.job.busy()  # nothing to download


def test_the_mobilenetv2_detector_offline_says_so_and_starts_from_random_weights(
        qtbot, window, offline):
    gallery = open_gallery(qtbot, window)
    pick(qtbot, gallery, "mobilenetv2_detector")
    assert gallery.fit.text().endswith(
        "Its ImageNet weights are downloaded when you open it; without a network it can "
        "start from random weights.")
    gallery.reject()
    open_detection_template(qtbot, window, "mobilenetv2_detector")
    qtbot.waitUntil(lambda: window.weights.notice is not None and window.weights.notice.isVisible())
    assert window.weights.notice.text() == OFFLINE
    with qtbot.waitSignal(window.weights.settled):
        qtbot.mouseClick(window.weights.random_button, Qt.MouseButton.LeftButton)
    assert application_params(window) == {
        "name": "MobileNetV2", "weights": "random", "trainable_layers": 119,
        "output_stride": "16"}
    assert "stride 16, random" in window.scene.nodes["application_1"].look.key_params
    assert window.doc.analysis().ok
    qtbot.waitUntil(lambda: not window.weights.job.busy())


def test_the_mobilenetv2_detector_keeps_the_imagenet_weights_it_downloads(
        qtbot, window, monkeypatch):
    body = HDF5_SIGNATURE + b"weights"
    monkeypatch.setattr(downloads, "_open_url", lambda url, timeout: Served(body))
    messages = []
    window.weights.message.connect(messages.append)
    open_detection_template(qtbot, window, "mobilenetv2_detector")
    qtbot.waitUntil(lambda: messages == ["The ImageNet weights for MobileNetV2 are ready."])
    assert window.weights.notice is None
    assert (cache_dir() / BASES["MobileNetV2"].weights_name).read_bytes() == body
    assert application_params(window)["weights"] == "imagenet"
    assert "stride 16, ImageNet" in window.scene.nodes["application_1"].look.key_params
    qtbot.waitUntil(lambda: not window.weights.job.busy())


SEGMENTATION_DEMO = "Segmentation demo (digits)"


@pytest.mark.parametrize(("name", "shape"), [("small_unet_segmenter", [64, 64, 1]),
                                             ("mobilenetv2_unet_segmenter", [64, 64, 3])])
def test_the_segmentation_templates_open_on_the_segmentation_demo_ready_to_train(
        qtbot, window, offline, name, shape):
    gallery = open_gallery(qtbot, window)
    pick(qtbot, gallery, name)
    assert gallery.category.text() == "Segmentation"
    assert gallery.fit.text().startswith(f"Ready to train on {SEGMENTATION_DEMO}.")
    pick(qtbot, gallery, name, double=True)
    qtbot.waitUntil(lambda: window.doc.project.name == TEMPLATES[name].title)
    assert set(window.scene.nodes) == set(from_template(name).graph.ids())
    info = window.doc.dataset()
    assert info.title == SEGMENTATION_DEMO and info.num_classes == 11
    assert window.doc.project.graph.nodes[0].params["shape"] == shape
    assert window.doc.analysis().ok, window.doc.analysis().problems
    assert window.doc.project.training == TEMPLATES[name].training()
    qtbot.waitUntil(lambda: not window.weights.job.busy())
