"""One line under each model view: layers, parameters, FLOPs per sample, and readiness."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from studio.core.model.flops import format_flops
from studio.gui.widgets.document import ProjectDocument


class ModelSummary(QLabel):
    """Follows the document: counts, cost and the first problem in red if there is one."""

    def __init__(self, doc: ProjectDocument) -> None:
        super().__init__()
        self.doc = doc
        self.setObjectName("model-summary")
        self.setWordWrap(True)
        doc.changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Recount from the document's analysis."""
        analysis = self.doc.analysis()
        count = len(self.doc.project.graph.nodes)
        text = (f"{count} layers · {analysis.total_params:,} parameters · "
                f"{format_flops(analysis.total_flops)} per sample")
        if analysis.ok:
            self.setText(f"{text} · ready to train")
            self.setStyleSheet("")
        else:
            self.setText(f"{text} · {analysis.reason}")
            self.setStyleSheet("color: #b3261e;")
