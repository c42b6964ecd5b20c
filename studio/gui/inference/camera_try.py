"""The Try view's Camera mode: the camera's live frames answered by the model, the answer
replaced in place by each newer one. Frames that come while the model works are dropped, not
queued: only the newest waits, so the answer never lags behind the camera."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QVBoxLayout, QWidget

from studio.core.inference.predictor import Prediction, Predictor
from studio.gui.camera.source import FrameSource
from studio.gui.camera.view import CameraView
from studio.gui.inference.answer_slot import beside, replace_answer
from studio.gui.widgets.errors import note_error
from studio.gui.widgets.forms import hint
from studio.gui.widgets.jobs import JobSlot, Policy

CAMERA = "Camera"
"""The name of the camera's answers."""
EMPTY_TEXT = "Start the camera: the model answers what it sees, frame after frame."
NO_MODEL_TEXT = "The camera is answered once a model is loaded (see above)."


class CameraTry(QWidget):
    """The camera's preview beside the model's answer to its newest frame. ``predictor``
    gives the loaded model (None while none is), ``top_k`` how many classes to show; the
    camera is ``source`` (the computer's by default)."""

    answered = Signal(object)
    """The answer to a frame is on screen (its Prediction)."""
    model_wanted = Signal()
    """A frame came with no model loaded."""

    def __init__(self, predictor: Callable[[], Predictor | None], top_k: Callable[[], int],
                 source: FrameSource | None = None) -> None:
        super().__init__()
        self.setObjectName("camera-try")
        self.predictor, self.top_k = predictor, top_k
        self.prediction: Prediction | None = None
        """The answer on screen, or None."""
        self.answered_frame: np.ndarray | None = None
        """The frame whose answer is on screen."""
        self._wanted = False
        self.job = JobSlot(self, Policy.RERUN)  # one frame waits, the newest: never a queue
        self.job.succeeded.connect(self._show)
        self.job.failed.connect(self._failed)
        self.view = CameraView(source, recording=False)
        self.view.frame.connect(self.ask)

        self.note = hint(EMPTY_TEXT)
        self.note.setObjectName("camera-note")
        self.answer: QWidget | None = None
        """The answer as the task draws it (bars for a classifier), or None."""
        self.answer_box = QVBoxLayout()
        self.answer_box.addWidget(self.note)
        answers = QWidget()
        answers_layout = QVBoxLayout(answers)
        answers_layout.addLayout(self.answer_box)
        answers_layout.addStretch(1)
        beside(self, self.view, answers, (3, 2))

    @Slot(object)
    def ask(self, frame: np.ndarray) -> None:
        """Answer ``frame`` once the answer under way (if any) has ended; a frame waiting
        for it gives way to this newer one."""
        predictor = self.predictor()
        if predictor is None or predictor.kind != "image":
            self.note.setText(NO_MODEL_TEXT)
            if not self._wanted:
                self._wanted = True
                self.model_wanted.emit()
            return
        self._wanted = False
        top_k = self.top_k()
        self.job.start(lambda on_event, stop: (
            frame, predictor.predict_images([frame], [CAMERA], top_k)[0]))

    @Slot(object)
    def _show(self, answer: tuple[np.ndarray, Prediction]) -> None:
        frame, prediction = answer
        if prediction.error:
            self._failed(prediction.error)
            return
        self.prediction, self.answered_frame = prediction, frame
        self.note.setText(f"Answered in {prediction.seconds * 1000:.0f} ms.")
        self.answer = replace_answer(self.answer_box, self.answer, prediction)
        self.answered.emit(prediction)

    @Slot(str)
    def _failed(self, text: str) -> None:
        said = f"Could not answer the camera: {text}"
        if self.note.text() != said:  # once, not for each frame
            note_error("Could not answer the camera", text)
            self.note.setText(said)
