"""A segmentation's evaluation in the Evaluate tab: the mean IoU and pixel accuracy, a table of
each class's IoU and Dice, the pixel confusion matrix (each row's shares), and the images of
lowest IoU with the model's mask and the true mask drawn over them side by side."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np
from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap, QStandardItemModel
from PySide6.QtWidgets import QLabel, QListWidgetItem, QSplitter, QVBoxLayout, QWidget

from studio.core.data.display import sample_images
from studio.core.inference.mask_files import class_colors, is_background
from studio.core.tasks.segmentation.evaluation import SegmentationEvaluation, percent_text
from studio.core.tasks.segmentation.fitting import mask_in_image
from studio.gui.tasks.mask_drawing import MaskLayers, draw_mask
from studio.gui.widgets.confusion import ConfusionView
from studio.gui.widgets.forms import hint
from studio.gui.widgets.images import array_pixmap
from studio.gui.widgets.score_table import class_row, headed_model, score_table
from studio.gui.widgets.thumbnail_grid import ThumbnailGrid

POSITION_ROLE = Qt.ItemDataRole.UserRole + 2
"""A gallery image's position in the split."""
CLASS_ROLE = Qt.ItemDataRole.UserRole + 3
"""The class a row of the table is about."""
SIDE = 120
"""The side of each of a gallery image's two pictures."""
GAP = 6
"""Pixels between the answer's picture and the truth's."""
CHUNK = 8
"""Gallery images added per turn of the event loop."""
LOWEST = 12
"""How many of the lowest-IoU images the gallery shows."""
COLUMNS = (("Class", "The class"),
           ("IoU", "Intersection over union: the pixels right for this class over those "
                   "that are this class in the truth or the answer"),
           ("Dice", "2 × the pixels right for this class over its true plus its answered "
                    "pixels (the F1 score of its pixels)"),
           ("True pixels", "Pixels of this class in the true masks"),
           ("Answered pixels", "Pixels the model answered as this class"))
MATRIX_TIP = ("Pixels. Rows: the true class. Columns: the model's answer. Each cell: its share "
              "of the row's pixels (blue: right, red: wrong); hover for the count.")
GALLERY_TIP = ("The split's images with the lowest IoU, the worst first: the model's mask "
               "(left) and the true mask (right) over each image")
TABLE_ROWS = 4
"""Rows the table shows at least: a short window scrolls the page rather than hide them."""


def class_model(evaluation: SegmentationEvaluation) -> QStandardItemModel:
    """One row per class: its IoU, Dice, true and answered pixels; a class in neither the
    truth nor the answers has no IoU nor Dice (—, sorted last)."""
    model = headed_model(COLUMNS)
    for k, row in enumerate(evaluation.to_dict()["per_class"]):
        model.appendRow(class_row(
            row["class"], k,
            [(percent_text(row["iou"]), row["iou"]), (percent_text(row["dice"]), row["dice"]),
             (f"{row['true_pixels']:,}", row["true_pixels"]),
             (f"{row['answered_pixels']:,}", row["answered_pixels"])], CLASS_ROLE,
            f"“{row['class']}” is in neither the true masks nor the answers: it has no IoU, "
            "and the mean IoU leaves it out."))
    return model


def legend_html(class_names: Sequence[str]) -> str:
    """Each class's colour swatch and name on one wrapping line (background: clear)."""
    colors = class_colors(class_names)
    return " &nbsp;".join(
        f"<span style='color:{QColor(*map(int, colors[k])).name()}'>■</span>&nbsp;"
        f"{escape(name)}{' (clear)' if is_background(name) else ''}"
        for k, name in enumerate(class_names))


def pair_picture(image: np.ndarray, answered: np.ndarray, true: np.ndarray,
                 class_names: Sequence[str], resize: str) -> QPixmap:
    """``image`` (uint8, as ``sample_images`` shows it) twice, SIDE pixels at most a side:
    with the ``answered`` mask over it on the left and the ``true`` mask on the right (both in
    the network's input pixels, taken back to the image's with ``resize``)."""
    size = image.shape[:2]
    factor = SIDE / max(size)
    width, height = round(size[1] * factor), round(size[0] * factor)
    picture = QPixmap(2 * SIDE + GAP, SIDE)
    picture.fill(QColor(0, 0, 0, 0))
    shown = array_pixmap(image).toImage()
    painter = QPainter(picture)
    for left, mask in ((0, answered), (SIDE + GAP, true)):
        layers = MaskLayers.of(mask_in_image(mask, size, resize), class_names)
        draw_mask(painter, QRectF(left + (SIDE - width) / 2, (SIDE - height) / 2, width, height),
                  shown, layers)
    painter.end()
    return picture


class LowestGallery(ThumbnailGrid):
    """The images of lowest IoU, each as its answer beside its truth, with its IoU."""

    def __init__(self) -> None:
        super().__init__("Evaluate to see the images with the lowest IoU.", SIDE,
                         QSize(2 * SIDE + GAP + 28, SIDE + 40), CHUNK)
        self.setIconSize(QSize(2 * SIDE + GAP, SIDE))
        self._evaluation: SegmentationEvaluation | None = None

    def show_lowest(self, evaluation: SegmentationEvaluation) -> None:
        """Show ``evaluation``'s images of lowest IoU, the worst first."""
        self._evaluation = evaluation
        positions = [int(p) for p in evaluation.lowest_iou(LOWEST)
                     if evaluation.masks(p) is not None]
        self.show_entries(positions, "No image of this split has a scored pixel.")

    def items(self, chunk: list[int]) -> list[QListWidgetItem]:
        evaluation = self._evaluation
        images = sample_images(evaluation.samples, evaluation.sample_indices(chunk))
        items = []
        for position, image in zip(chunk, images, strict=True):
            true, answered = evaluation.masks(position)
            iou = percent_text(float(evaluation.image_iou[position]))
            item = QListWidgetItem(QIcon(pair_picture(image, answered, true,
                                                      evaluation.class_names,
                                                      evaluation.resize)),
                                   f"#{position + 1}: IoU {iou}")
            item.setToolTip(f"Image {position + 1:,} of the {evaluation.split} split: mean IoU "
                            f"{iou}\nLeft: the model's mask. Right: the true mask.")
            item.setData(POSITION_ROLE, position)
            items.append(item)
        return items


def _titled(title: str, widget: QWidget, *under: QWidget) -> QWidget:
    """``widget`` under a bold ``title`` (and any ``under`` between them)."""
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    heading = QLabel(f"<b>{escape(title)}</b>")
    layout.addWidget(heading)
    for item in under:
        layout.addWidget(item)
    layout.addWidget(widget, 1)
    return box


class SegmentationEvaluationView(QWidget):
    """A segmentation's evaluation: the mean IoU and pixel accuracy, each class's IoU and
    Dice, the pixel confusion matrix and the images of lowest IoU."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("segmentation-evaluation")
        self.evaluation: SegmentationEvaluation | None = None
        self.headline = QLabel()
        self.headline.setObjectName("segmentation-evaluation-headline")
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setWordWrap(True)
        self.headline.setToolTip("Mean IoU: each class's intersection over union, averaged "
                                 "over the classes in the split. Pixel accuracy: the share of "
                                 "pixels answered with their true class.")
        self.notes = hint()
        self.notes.setObjectName("segmentation-evaluation-notes")

        self.table, self.proxy = score_table(self)
        self.table.setObjectName("segmentation-evaluation-classes")
        self.table.setToolTip("Each class's IoU and Dice; click a heading to sort")
        self.table.setMinimumHeight(
            self.table.horizontalHeader().sizeHint().height() + 2 * self.table.frameWidth()
            + TABLE_ROWS * self.table.verticalHeader().defaultSectionSize())
        self.confusion = ConfusionView(" pixels", shares=True, tip=MATRIX_TIP)
        self.confusion.setObjectName("segmentation-evaluation-confusion")
        self.legend = QLabel()
        self.legend.setObjectName("segmentation-evaluation-legend")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        self.legend.setToolTip("Each class's colour in the masks")
        self.gallery = LowestGallery()
        self.gallery.setObjectName("segmentation-evaluation-lowest")
        self.gallery.setToolTip(GALLERY_TIP)
        self.gallery.setMinimumHeight(self.gallery.gridSize().height() + 4
                                      + 2 * self.gallery.frameWidth())
        caption = hint("The model's mask (left) beside the true mask (right), the worst "
                       "first.")

        self.scores_view = scores = QSplitter(Qt.Orientation.Vertical)
        scores.addWidget(_titled("Each class", self.table))
        scores.addWidget(_titled("Pixel confusion matrix (share of each true class's pixels)",
                                 self.confusion))
        scores.setChildrenCollapsible(False)
        self.split_view = QSplitter()
        self.split_view.addWidget(scores)
        self.split_view.addWidget(_titled("Images with the lowest IoU", self.gallery, caption,
                                          self.legend))
        self.split_view.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.headline)
        layout.addWidget(self.notes)
        layout.addWidget(self.split_view, 1)

    def show_evaluation(self, evaluation: SegmentationEvaluation, what: str) -> str:
        """Show ``evaluation`` (of the model ``what`` describes); a one-line summary back."""
        self.evaluation = evaluation
        mean_iou = percent_text(evaluation.mean_iou)
        accuracy = percent_text(evaluation.pixel_accuracy)
        pixels = int(evaluation.confusion.sum())
        ignored = (f" ({evaluation.ignored:,} ignored)" if evaluation.ignored else "")
        self.headline.setText(
            f"<span style='font-size: 20pt; font-weight: 600;'>{mean_iou}</span>&nbsp; mean "
            f"IoU &nbsp;&nbsp; <span style='font-size: 14pt; font-weight: 600;'>{accuracy}"
            f"</span>&nbsp; pixel accuracy &nbsp;·&nbsp; loss <b>{evaluation.loss:.4f}</b> "
            f"&nbsp;·&nbsp; <b>{evaluation.size:,}</b> {evaluation.split} images, "
            f"<b>{pixels:,}</b> pixels{ignored} &nbsp;·&nbsp; {escape(what)}")
        self.notes.setText(" ".join(evaluation.notes))
        self.notes.setVisible(bool(evaluation.notes))
        self.proxy.setSourceModel(class_model(evaluation))
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.confusion.set_evaluation(evaluation)
        self.legend.setText(legend_html(evaluation.class_names))
        self.gallery.show_lowest(evaluation)
        total = sum(self.split_view.sizes())
        scores = min(self.confusion.full_width(), total * 3 // 5)
        self.split_view.setSizes([scores, total - scores])
        return (f"mean IoU {mean_iou}, pixel accuracy {accuracy} on {evaluation.size:,} "
                f"{evaluation.split} images")
