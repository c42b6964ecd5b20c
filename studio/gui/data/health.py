"""The data health report: the problems to look at, then the report and charts of the
dataset's kind of label (its task's data views say how)."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QTextBrowser, QWidget

from studio.core.base.messages import count
from studio.core.data.types import LoadedData
from studio.gui.data.folder_health import html_list
from studio.gui.data.registry import DATA_VIEWS, data_views_for
from studio.gui.data.views import DataViews

OK = "#188038"
WARN = "#b06000"


def _problems(notes: list[str]) -> str:
    if not notes:
        return f"<p style='color:{OK}'>✔ No problems found.</p>"
    return (f"<h3 style='color:{WARN}'>⚠ {count(len(notes), 'thing')} to look at</h3>"
            + html_list(notes))


def report_html(loaded: LoadedData) -> str:
    """The health report of ``loaded`` as HTML for a person."""
    return (_problems(loaded.notes + loaded.split_notes())
            + data_views_for(loaded.info.task).health_html(loaded))


class HealthView(QWidget):
    """The report as text, beside the charts of the data's kind of label."""

    def __init__(self) -> None:
        super().__init__()
        self.text = QTextBrowser()
        self.text.setObjectName("health-report")
        self.text.setOpenLinks(False)
        layout = QHBoxLayout(self)
        layout.addWidget(self.text, 3)
        self.side: dict[DataViews, QWidget] = {}
        """Each data views' charts, built at once as the report is (one shows at a time)."""
        for views in DATA_VIEWS.values():
            if views not in self.side:
                self.side[views] = views.health_charts()
                layout.addWidget(self.side[views], views.health_stretch)
        self.clear("No data yet.")

    def charts_of(self, label_kind: str) -> QWidget:
        """The charts shown for data of ``label_kind`` (a task's ``label_kind``)."""
        return self.side[DATA_VIEWS[label_kind]]

    @property
    def charts(self) -> QWidget:
        """The charts of class and number labels: a folder's image sizes and modes."""
        return self.charts_of("classes")

    @property
    def box_charts(self) -> QWidget:
        """The charts of a detection dataset's boxes."""
        return self.charts_of("boxes")

    def clear(self, message: str) -> None:
        """Show ``message`` instead of a report."""
        self.text.setPlainText(message)
        for charts in self.side.values():
            charts.hide()

    def show_data(self, loaded: LoadedData) -> None:
        """Show the report of ``loaded``."""
        self.text.setHtml(report_html(loaded))
        views = data_views_for(loaded.info.task)
        for other, charts in self.side.items():
            if other is not views:
                charts.hide()
        charts = self.side[views]
        charts.setVisible(charts.show_data(loaded))
