"""A detector's evaluation in the Evaluate tab: mAP@0.5 and mAP@[0.5:0.95], a table of each
class's AP, the precision-recall curves, and for the class clicked (in the table, on a curve
or in the legend) the images with its false positives and missed boxes drawn on them."""

from __future__ import annotations

from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import (
    QModelIndex,
    QRectF,
    QSize,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import (
    QColor,
    QIcon,
    QPainter,
    QPen,
    QPixmap,
    QStandardItemModel,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QListWidgetItem,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from studio.core.base.messages import count
from studio.core.data.display import sample_images
from studio.core.tasks.detection.evaluation import DetectionEvaluation, ImageMistakes, ap_text
from studio.core.tasks.detection.map_callback import SCORE_THRESHOLD
from studio.gui.widgets.forms import hint
from studio.gui.widgets.images import array_pixmap
from studio.gui.widgets.plot_style import GRID_PEN, TEXT_PEN, TITLE_COLOR, EpochPlot, legend_below
from studio.gui.widgets.score_table import class_row, headed_model, score_table
from studio.gui.widgets.tagged_box import draw_tagged_box
from studio.gui.widgets.thumbnail_grid import ThumbnailGrid

CLASS_ROLE = Qt.ItemDataRole.UserRole + 2
"""The class a row of the AP table is about."""
MISTAKES_ROLE = Qt.ItemDataRole.UserRole + 3
"""A gallery image's mistakes (an ImageMistakes)."""
THUMBNAIL = 150
"""The side of a gallery image."""
CHUNK = 16
"""Gallery images added per turn of the event loop, so a long list never freezes the window."""
MAX_IMAGES = 200
"""The most images the gallery shows for one class (those with the surest mistakes)."""
FALSE_POSITIVE = QColor("#d93025")
MISSED = QColor("#f29900")
LEGEND_COLUMNS = 5
COLUMNS = (("Class", "The class"),
           ("AP@0.5", "Average precision at IoU 0.5: the area under this class's precision-"
                      "recall curve, as COCO reads it"),
           ("AP@[.5:.95]", "Average precision averaged over IoU 0.50, 0.55, …, 0.95 (COCO's "
                             "headline AP): it asks for tighter boxes"),
           ("Boxes", "True boxes of this class in the split"),
           ("False\npositives", "Boxes the model found of this class that match no true box "
                               "(IoU 0.5)"),
           ("Missed", "True boxes of this class no box of the model found (IoU 0.5)"))
PLACEHOLDER = "Click a class in the table, a curve or the legend to see its mistakes."
LEGEND = (f"<span style='color:{FALSE_POSITIVE.name()}'>■</span> false positive, with its "
          f"score &nbsp;&nbsp; <span style='color:{MISSED.name()}'>■</span> missed box (dashed)")
TABLE_ROWS = 4
"""Rows the AP table shows at least: a short window scrolls the page rather than hide them."""


def class_color(index: int) -> QColor:
    """A colour per class, for its curve."""
    return pg.intColor(index, hues=10, values=1, maxValue=200)


def ap_model(evaluation: DetectionEvaluation) -> QStandardItemModel:
    """One row per class: its APs, true boxes, false positives and missed boxes; a class
    without true boxes has no AP (—, sorted last)."""
    model = headed_model(COLUMNS)
    for row in evaluation.to_dict()["per_class"]:
        model.appendRow(class_row(
            row["class"], evaluation.class_names.index(row["class"]),
            [(ap_text(row["ap50"]), row["ap50"]), (ap_text(row["ap"]), row["ap"]),
             (f"{row['boxes']:,}", row["boxes"]),
             (f"{row['false_positives']:,}", row["false_positives"]),
             (f"{row['missed']:,}", row["missed"])], CLASS_ROLE,
            f"No true box of “{row['class']}” is in this split: it has no AP, and the mAPs "
            "leave it out."))
    return model


def mistakes_picture(image: np.ndarray, mistakes: ImageMistakes) -> QPixmap:
    """``image`` (uint8, as ``sample_images`` shows it) at THUMBNAIL a side, with the false
    positives outlined in FALSE_POSITIVE and tagged with their scores, and the missed boxes
    dashed in MISSED (the boxes are in the image's own pixels)."""
    shown = array_pixmap(image)
    height, width = mistakes.image_size
    factor = THUMBNAIL / max(height, width, 1)
    picture = QPixmap(round(width * factor), round(height * factor))
    picture.fill(QColor("white"))
    painter = QPainter(picture)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    painter.drawPixmap(picture.rect(), shown)
    font = painter.font()
    font.setPointSizeF(7)
    painter.setFont(font)

    def scaled(box: np.ndarray) -> QRectF:
        x0, y0, x1, y1 = (float(v) * factor for v in box)
        return QRectF(x0, y0, x1 - x0, y1 - y0)

    for box in mistakes.missed:
        draw_tagged_box(painter, scaled(box), QPen(MISSED, 2, Qt.PenStyle.DashLine))
    for box, score in zip(mistakes.false_positives, mistakes.scores, strict=True):
        draw_tagged_box(painter, scaled(box), QPen(FALSE_POSITIVE, 1.5), f"{score:.2f}")
    painter.end()
    return picture


class ClassSample(pg.ItemSample):
    """A legend entry that picks its class when clicked (pyqtgraph's hides the curve)."""

    def mouseClickEvent(self, event) -> None:  # noqa: N802 - pyqtgraph's name
        if event.button() == Qt.MouseButton.LeftButton:
            self.sigClicked.emit(self.item)
        event.accept()


class MistakesGallery(ThumbnailGrid):
    """The images of one class's mistakes, their boxes drawn, added a chunk per turn of the
    event loop."""

    def __init__(self) -> None:
        super().__init__(PLACEHOLDER, THUMBNAIL, QSize(THUMBNAIL + 16, THUMBNAIL + 36), CHUNK)
        self._evaluation: DetectionEvaluation | None = None

    def show_mistakes(self, evaluation: DetectionEvaluation | None,
                      mistakes: list[ImageMistakes], placeholder: str = PLACEHOLDER) -> None:
        """Show the images of ``mistakes`` (of ``evaluation``'s split)."""
        self._evaluation = evaluation
        self.show_entries(mistakes if evaluation is not None else [], placeholder)

    def items(self, chunk: list[ImageMistakes]) -> list[QListWidgetItem]:
        evaluation = self._evaluation
        images = sample_images(evaluation.samples,
                               evaluation.sample_indices([m.position for m in chunk]))
        items = []
        for mistakes, image in zip(chunk, images, strict=True):
            wrong, missed = len(mistakes.false_positives), len(mistakes.missed)
            caption = ", ".join(part for part in (
                f"{wrong} false" if wrong else "", f"{missed} missed" if missed else "") if part)
            item = QListWidgetItem(QIcon(mistakes_picture(image, mistakes)),
                                   f"#{mistakes.position + 1}: {caption}")
            item.setToolTip(f"Image {mistakes.position + 1:,} of the {evaluation.split} split"
                            f"\n{count(wrong, 'false positive')} (red, with their scores)"
                            f"\n{count(missed, 'missed box', 'missed boxes')} (orange, dashed)")
            item.setData(MISTAKES_ROLE, mistakes)
            items.append(item)
        return items


class DetectionEvaluationView(QWidget):
    """A detector's evaluation: the mAPs, the AP table and precision-recall curves, and the
    chosen class's mistakes on the images."""

    class_chosen = Signal(int)
    """The class whose mistakes show."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("detection-evaluation")
        self.evaluation: DetectionEvaluation | None = None
        self.headline = QLabel()
        self.headline.setObjectName("detection-evaluation-headline")
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setWordWrap(True)
        self.headline.setToolTip("COCO-style mean average precision over the classes with "
                                 "true boxes in the split")
        self.notes = hint()
        self.notes.setObjectName("detection-evaluation-notes")

        self.table, self.proxy = score_table(self)
        self.table.setObjectName("detection-evaluation-ap")
        self.table.setToolTip("Each class's average precision and mistakes; click a row to "
                              "see its mistakes, a heading to sort")
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.clicked.connect(self._row_clicked)
        self.table.setMinimumHeight(
            self.table.horizontalHeader().sizeHint().height() + 2 * self.table.frameWidth()
            + TABLE_ROWS * self.table.verticalHeader().defaultSectionSize())

        self.plot = self._make_plot()
        self.caption = hint()
        self.caption.setObjectName("detection-evaluation-caption")
        legend = QLabel(LEGEND)
        legend.setObjectName("detection-evaluation-legend")
        legend.setTextFormat(Qt.TextFormat.RichText)
        legend.setWordWrap(True)
        legend.setToolTip("False positive: a box the model found of this class that overlaps no "
                          "true box of it by IoU 0.5 or more. Missed: a true box of this class "
                          "that no box of the model found.")
        self.gallery = MistakesGallery()
        self.gallery.setObjectName("detection-evaluation-mistakes")
        self.gallery.setToolTip("The chosen class's false positives (red, with their scores) "
                                "and missed boxes (orange, dashed), image by image")
        gallery = QWidget()
        gallery_layout = QVBoxLayout(gallery)
        gallery_layout.setContentsMargins(0, 0, 0, 0)
        gallery_layout.addWidget(self.caption)
        gallery_layout.addWidget(legend)
        gallery_layout.addWidget(self.gallery, 1)
        self.gallery.setMinimumHeight(self.gallery.gridSize().height() + 4
                                      + 2 * self.gallery.frameWidth())

        self.scores_view = scores = QSplitter(Qt.Orientation.Vertical)
        scores.addWidget(self.table)
        scores.addWidget(self.plot)
        scores.setChildrenCollapsible(False)
        self.split_view = QSplitter()
        self.split_view.addWidget(scores)
        self.split_view.addWidget(gallery)
        self.split_view.setChildrenCollapsible(False)
        self.split_view.setStretchFactor(0, 1)
        self.split_view.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.headline)
        layout.addWidget(self.notes)
        layout.addWidget(self.split_view, 1)
        self.curves: list[pg.PlotDataItem] = []

    def _make_plot(self) -> EpochPlot:
        plot = EpochPlot(background="w")
        plot.setObjectName("detection-evaluation-curves")
        plot.setTitle("Precision-recall at IoU 0.5", color=TITLE_COLOR, size="10pt")
        plot.setLabel("bottom", "recall")
        plot.setLabel("left", "precision")
        plot.showGrid(x=True, y=True, alpha=1.0)
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            axis.setPen(GRID_PEN)
            axis.setTextPen(TEXT_PEN)
            axis.setZValue(-1)
        plot.setXRange(0, 1, padding=0.05)
        plot.setYRange(0, 1, padding=0.05)
        plot.setMouseEnabled(x=False, y=False)
        plot.hideButtons()
        self.legend = legend_below(plot, LEGEND_COLUMNS)
        self.legend.sampleType = ClassSample
        self.legend.sigSampleClicked.connect(self._curve_clicked)
        plot.setToolTip("Each class's precision against its recall as the score threshold "
                        "falls; click a curve or a legend entry to see its mistakes")
        return plot

    def show_evaluation(self, evaluation: DetectionEvaluation, what: str) -> str:
        """Show ``evaluation`` (of the model ``what`` describes); a one-line summary back."""
        self.evaluation = evaluation
        scores = evaluation.scores
        self.headline.setText(
            f"<span style='font-size: 20pt; font-weight: 600;'>{ap_text(scores.map50)}</span>"
            f"&nbsp; mAP@0.5 &nbsp;&nbsp; <span style='font-size: 14pt; font-weight: 600;'>"
            f"{ap_text(scores.map)}</span>&nbsp; mAP@[0.5:0.95] &nbsp;·&nbsp; loss "
            f"<b>{evaluation.loss:.4f}</b> &nbsp;·&nbsp; <b>{len(evaluation.truths):,}</b> "
            f"{evaluation.split} images, <b>{evaluation.box_count:,}</b> boxes &nbsp;·&nbsp; "
            f"{escape(what)}")
        notes = [f"Boxes scoring at least {SCORE_THRESHOLD:g} count, as in training's "
                 "val_map50; a box matches a true one at IoU 0.5 or more.", *evaluation.notes]
        self.notes.setText(" ".join(notes))
        self.proxy.setSourceModel(ap_model(evaluation))
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self._draw_curves(evaluation)
        # the gallery about as wide as the scores, the table as tall as the curves
        for splitter, share in ((self.split_view, 0.55), (self.scores_view, 0.5)):
            total = sum(splitter.sizes())
            splitter.setSizes([round(total * share), total - round(total * share)])
        self.gallery.show_mistakes(None, [], PLACEHOLDER)
        self.caption.setText("")
        return (f"mAP@0.5 {ap_text(scores.map50)}, mAP@[0.5:0.95] {ap_text(scores.map)} on "
                f"{len(evaluation.truths):,} {evaluation.split} images")

    def _draw_curves(self, evaluation: DetectionEvaluation) -> None:
        self.plot.clear()
        self.legend.clear()
        self.curves = []
        for k, (name, curve) in enumerate(zip(evaluation.class_names,
                                              evaluation.scores.curves, strict=True)):
            ap = evaluation.scores.class_ap50[k]
            item = self.plot.plot(curve.recall, curve.precision, name=f"{name} ({ap_text(ap)})",
                                  pen=pg.mkPen(class_color(k), width=2))
            item.setCurveClickable(True, width=8)
            item.sigClicked.connect(self._curve_clicked)
            item.class_index = k
            self.curves.append(item)

    def choose_class(self, k: int) -> None:
        """Show class ``k``'s mistakes, select its row and bring out its curve."""
        evaluation = self.evaluation
        if evaluation is None:
            return
        name = evaluation.class_names[k]
        mistakes = evaluation.scores.mistakes[k]
        images = evaluation.image_mistakes(k)
        wrong, missed = len(mistakes.false_positive_boxes), len(mistakes.missed_boxes)
        text = (f"“{name}”: {count(wrong, 'false positive')} and "
                f"{count(missed, 'missed box', 'missed boxes')} in "
                f"{count(len(images), 'image')}")
        if len(images) > MAX_IMAGES:
            text += f" (the {MAX_IMAGES:,} with the surest mistakes shown)"
        self.caption.setText(text + ".")
        self.gallery.show_mistakes(evaluation, images[:MAX_IMAGES],
                                   f"The model made no mistake on “{name}” in this split.")
        for index, curve in enumerate(self.curves):
            curve.setPen(pg.mkPen(class_color(index), width=4 if index == k else 1.5))
            curve.setZValue(1 if index == k else 0)
        row = next((r for r in range(self.proxy.rowCount())
                    if self.proxy.index(r, 0).data(CLASS_ROLE) == k), None)
        if row is not None and self.table.currentIndex().row() != row:
            self.table.selectRow(row)
            self.table.scrollTo(self.proxy.index(row, 0))
        self.class_chosen.emit(k)

    @Slot(QModelIndex)
    def _row_clicked(self, index: QModelIndex) -> None:
        self.choose_class(int(index.data(CLASS_ROLE)))

    def _curve_clicked(self, item, *_) -> None:
        self.choose_class(int(item.class_index))
