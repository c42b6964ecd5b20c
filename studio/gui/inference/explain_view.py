"""Why the model answered so: a Grad-CAM heat map over the image, the activation maps of a
chosen layer for it, and the learned filters of the first convolution layer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QFormLayout, QGridLayout, QLabel, QVBoxLayout, QWidget

from studio.core.inference.explain import Explanation, explain_image
from studio.core.inference.predictor import Prediction, Predictor
from studio.gui.tasks.registry import views_for
from studio.gui.widgets.errors import note_error
from studio.gui.widgets.forms import hint, narrow_box
from studio.gui.widgets.images import array_pixmap, mosaic
from studio.gui.widgets.jobs import JobSlot, Policy

CLICK_TEXT = "Click an answered image to see why the model answered so."
PICTURE = 160
"""The side of the image and heat-map pictures, in pixels."""
GRID_WIDTH = 330
"""The width the activation maps and filters are drawn in."""
MAX_MAPS = 64
MAX_FILTERS = 64
METHOD_NAMES = {"grad-cam": "Grad-CAM", "hires-cam": "HiResCAM"}


def _explain(predictor: Predictor, prediction: Prediction, class_index: int,
             layer: str | None) -> Explanation:
    """Run on the worker thread: the explanation of the answered image."""

    x = predictor.explained_input(prediction)
    return explain_image(predictor.model, x, prediction.thumbnail, class_index, layer)


def _to_uint8(values: np.ndarray) -> np.ndarray:
    return np.clip(values * 255.0 + 0.5, 0, 255).astype(np.uint8)


def _grid(pictures: np.ndarray) -> np.ndarray:
    """Square-ish tiles of uint8 pictures, as many columns as fit nicely."""
    columns = max(1, int(np.ceil(np.sqrt(len(pictures)))))
    return mosaic(pictures, columns, gap=1 if pictures.shape[1] < 8 else 2)


class ExplainView(QWidget):
    """Shows why the chosen prediction came out as it did; computes on a worker thread."""

    explained = Signal()
    """The pictures for the chosen image are drawn."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("explain-view")
        self.predictor: Predictor | None = None
        self.prediction: Prediction | None = None
        self.explanation: Explanation | None = None
        self.job = JobSlot(self, Policy.RERUN)
        """One explanation at a time (each holds the interpreter for a while)."""
        self.job.succeeded.connect(self._show)
        self.job.failed.connect(self._failed)
        self.title = QLabel("<b>Why</b>")
        self.title.setWordWrap(True)
        self.class_box = narrow_box()
        self.class_box.setObjectName("explain-class")
        self.class_box.setToolTip("The class whose evidence the heat map shows")
        self.class_box.activated.connect(lambda _: self._start())
        self.layer_box = narrow_box()
        self.layer_box.setObjectName("explain-layer")
        self.layer_box.setToolTip("The layer whose activation maps are shown for this image")
        self.layer_box.activated.connect(lambda _: self._start())
        self.image = self._picture("The image as the model was shown it")
        self.heat = self._picture("Red where the image most raised the model's score for the "
                                  "class chosen above (Grad-CAM, or HiResCAM when Grad-CAM "
                                  "finds nothing)")
        self.maps = QLabel()
        self.maps.setObjectName("explain-maps")
        self.maps.setToolTip("Each tile is one channel of the layer's output for this image: "
                             "bright where it responds")
        self.filters = QLabel()
        self.filters.setObjectName("explain-filters")
        self.filters.setToolTip("The first convolution layer's learned filters (kernels)")
        self.note = hint(CLICK_TEXT)
        form = QFormLayout()
        form.addRow("Heat map for", self.class_box)
        pictures = QGridLayout()
        pictures.addWidget(self.image, 0, 0)
        pictures.addWidget(self.heat, 0, 1)
        pictures.addWidget(hint("Image"), 1, 0, Qt.AlignmentFlag.AlignHCenter)
        self.heat_caption = hint("Heat map")
        pictures.addWidget(self.heat_caption, 1, 1, Qt.AlignmentFlag.AlignHCenter)
        self.body = QWidget()
        """The heat map, activation maps and filters (hidden where there is no explanation)."""
        body = QVBoxLayout(self.body)
        body.setContentsMargins(0, 0, 0, 0)
        body.addLayout(form)
        body.addLayout(pictures)
        maps_form = QFormLayout()
        maps_form.addRow("Activations of", self.layer_box)
        body.addLayout(maps_form)
        body.addWidget(self.maps)
        body.addWidget(QLabel("<b>First-layer filters</b>"))
        body.addWidget(self.filters)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.body)
        layout.addWidget(self.note)
        layout.addStretch(1)

    @staticmethod
    def _picture(tip: str) -> QLabel:
        label = QLabel()
        label.setFixedSize(PICTURE, PICTURE)
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        label.setStyleSheet("background: #f8f9fa;")
        label.setToolTip(tip)
        return label

    def show_prediction(self, predictor: Predictor, prediction: Prediction) -> None:
        """Explain ``prediction`` (an answered image file) made by ``predictor``; for a task
        whose answers get no explanation, say why."""
        not_explained = views_for(prediction.task).not_explained
        if not_explained:
            self.decline(not_explained)
            return
        self.body.show()
        self.predictor, self.prediction = predictor, prediction
        name = Path(prediction.source).name
        self.title.setText(f"<b>Why {name} is “{prediction.labels[0]}”</b>"
                           if prediction.labels else f"<b>{name}</b>")
        self.class_box.clear()
        for label in prediction.labels:
            self.class_box.addItem(label, predictor.class_names.index(label)
                                   if label in predictor.class_names else None)
        self.layer_box.clear()
        self.image.setPixmap(self._fit(prediction.thumbnail))
        if not predictor.can_explain(prediction):
            self._clear("Explanations are drawn for images the model answered.")
            return
        self._start()

    def expect(self, task: str) -> None:
        """Get ready for the answers of a model of ``task``: say at once why they get no
        explanation, or, after a model whose answers got none, invite a click again."""
        declined = views_for(task).not_explained
        if declined:
            self.decline(declined)
        elif self.body.isHidden():
            self.reset(CLICK_TEXT)

    def decline(self, text: str) -> None:
        """Say ``text`` (why there is no explanation) in place of the pictures."""
        self.reset(text)
        self.body.hide()

    def reset(self, text: str) -> None:
        """Show nothing but ``text``, dropping any explanation under way."""
        self.body.show()
        self.job.cancel()
        self.predictor = self.prediction = None
        self.title.setText("<b>Why</b>")
        self.class_box.clear()
        self.layer_box.clear()
        self.image.clear()
        self.heat_caption.setText("Heat map")
        self._clear(text)

    def _start(self) -> None:
        """Explain the chosen image, class and layer. One explanation is worked out at a time
        (each holds the interpreter for a while): a request made meanwhile waits for the one
        under way to end, whose pictures are then dropped, and only the newest request runs."""
        predictor, prediction = self.predictor, self.prediction
        if predictor is None or prediction is None or self.class_box.currentData() is None:
            return
        self.note.setText("Working out why…")
        class_index, layer = self.class_box.currentData(), self.layer_box.currentData()
        self.job.start(lambda on_event, stop: _explain(predictor, prediction, class_index,
                                                       layer))

    @Slot(str)
    def _failed(self, text: str) -> None:
        if not self.job.waiting():
            note_error("Could not explain", text)
            self._clear(f"Could not explain: {text}")

    @Slot(object)
    def _show(self, explanation: Explanation) -> None:
        if self.job.waiting():  # out of date: a newer request runs next
            return
        self.explanation = explanation
        self.layer_box.clear()
        for name in explanation.layers:
            self.layer_box.addItem(name, name)
        self.layer_box.setCurrentIndex(max(0, self.layer_box.findData(explanation.layer)))
        self.heat.setPixmap(self._fit(explanation.overlay))
        self.heat_caption.setText(METHOD_NAMES.get(explanation.method, "No heat map"))
        maps = explanation.maps
        self.maps.setPixmap(self._tiles(None if maps is None else _to_uint8(maps[:MAX_MAPS])))
        filters = explanation.filters
        if filters is not None:
            filters = filters[:MAX_FILTERS]
            filters = filters if filters.shape[-1] == 3 else filters.mean(axis=-1)
            filters = _to_uint8(filters)
        self.filters.setPixmap(self._tiles(filters))
        shown = "" if maps is None or len(maps) <= MAX_MAPS else \
            f"The first {MAX_MAPS} of {len(maps)} activation maps are shown. "
        self.note.setText(shown + explanation.note)
        self.explained.emit()

    def _clear(self, text: str) -> None:
        self.explanation = None
        for label in (self.heat, self.maps, self.filters):
            label.clear()
        self.note.setText(text)

    @staticmethod
    def _fit(image: np.ndarray | None):
        if image is None:
            return array_pixmap(np.full((1, 1), 248, np.uint8))
        return array_pixmap(image).scaled(PICTURE, PICTURE, Qt.AspectRatioMode.KeepAspectRatio,
                                          Qt.TransformationMode.SmoothTransformation)

    @staticmethod
    def _tiles(pictures: np.ndarray | None):
        if pictures is None or not len(pictures):
            return array_pixmap(np.full((1, 1), 240, np.uint8))
        grid = _grid(pictures)
        scale = max(1, GRID_WIDTH // grid.shape[1])
        return array_pixmap(grid, scale)
