"""The Evaluate views' score tables: the names take the spare width and each score column is
as wide as its contents, also for a new source model; a click on a heading sorts by value; a
class's row says why it has no score."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from studio.gui.shell.app import create_application
from studio.gui.widgets.score_table import (
    SORT_ROLE,
    class_row,
    headed_model,
    number_cell,
    score_cell,
    score_table,
)
from tests.gui.support import names_stretch
from tests.gui.test_evaluation_panel import click_heading


def scores_model(columns: int, values: list[float]):
    model = headed_model([("Class", "The class"), *[(f"Score {i}", "") for i in
                                                     range(1, columns)]])
    for row, value in enumerate(values):
        model.appendRow([score_cell(f"class {row}", row),
                         *[number_cell(f"{value:.1%}", value) for _ in range(1, columns)]])
    return model


def test_the_names_stretch_and_the_scores_fit_and_sort(qtbot):
    create_application()
    owner = QWidget()
    qtbot.addWidget(owner)
    table, proxy = score_table(owner)
    qtbot.addWidget(table)
    table.resize(900, 300)
    table.show()
    qtbot.waitExposed(table)
    header = table.horizontalHeader()
    for columns, values in ((4, [0.5, 0.05, 0.125]), (3, [0.9, 0.1, 1.0, 0.25])):
        proxy.setSourceModel(scores_model(columns, values))  # as each evaluation does
        assert header.count() == columns and names_stretch(table)
        qtbot.waitUntil(lambda: header.sectionSize(0) > 500)
        assert all(header.sectionSize(i) < 150 for i in range(1, columns))
        click_heading(qtbot, table, columns - 1)
        shown = [proxy.index(r, columns - 1).data(SORT_ROLE) for r in range(len(values))]
        assert shown in (sorted(values), sorted(values, reverse=True))


def test_a_class_row_without_its_first_score_says_why_and_sorts_it_last():
    role = Qt.ItemDataRole.UserRole + 5
    scored, unscored = (class_row("cat", k, [(text, value), ("3", 3)], role, "No cat here.")
                        for k, (text, value) in enumerate((("50.0 %", 0.5), ("—", None))))
    assert [cell.text() for cell in unscored] == ["cat", "—", "3"]
    assert [cell.data(role) for cell in unscored] == [1, 1, 1]
    assert unscored[1].toolTip() == "No cat here." and scored[1].toolTip() == ""
    assert unscored[1].data(SORT_ROLE) < 0 < scored[1].data(SORT_ROLE)
    assert unscored[2].textAlignment() & Qt.AlignmentFlag.AlignRight
