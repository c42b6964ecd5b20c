"""Where the Search tab runs a search: worker processes on this machine, a Ray instance started
for the search, or a Ray cluster at an address with its token. The engine and the address are
the machine's (the window keeps them in the preferences); the token is a secret, held by this
widget only while the app runs and never written anywhere."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.util import find_spec

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QLineEdit, QWidget

from studio.core.base.preferences import ENGINES
from studio.core.search.on_ray import LOCAL, RAY_EXTRA

ENGINE_NAMES = dict(zip(ENGINES, ("This machine (workers)", "New local Ray instance",
                                  "A Ray cluster at…"), strict=True))


@dataclass(frozen=True)
class RayTarget:
    """The Ray a search runs on: Ray's address and the cluster's token (empty: none)."""

    address: str
    token: str = ""


class EngineChoice(QWidget):
    """The engine box, and the cluster's address and token when a cluster is chosen."""

    changed = Signal(str, str)
    """The engine or the cluster's address changed: both, to be remembered."""

    def __init__(self, engine: str = ENGINES[0], address: str = "") -> None:
        super().__init__()
        self.box = QComboBox()
        self.box.setObjectName("search-engine")
        self.box.setToolTip("Where the trials run: worker processes on this machine, a Ray "
                            "instance started here for the search, or a Ray cluster (every "
                            "node needs Layer Studio and the project's folders)")
        installed = find_spec("ray") is not None
        for key, name in ENGINE_NAMES.items():
            self.box.addItem(name, key)
            if key != "workers" and not installed:  # said in the item's tooltip
                item = self.box.model().item(self.box.count() - 1)
                item.setEnabled(False)
                item.setToolTip(f"Not available: {RAY_EXTRA}")
        self.address = QLineEdit(address)
        self.address.setObjectName("search-ray-address")
        self.address.setPlaceholderText("HOST:PORT")
        self.address.setToolTip("The Ray cluster's head: HOST:PORT (port 6379 by default), or "
                                "auto for the cluster this machine belongs to")
        self.token = QLineEdit()
        self.token.setObjectName("search-ray-token")
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.token.setPlaceholderText("none")
        self.token.setToolTip("The cluster's token, if it asks for one (ray get-auth-token on "
                              "its head prints it); kept only while Layer Studio runs")
        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addRow("Engine", self.box)
        layout.addRow("Address", self.address)
        layout.addRow("Token", self.token)
        self.form = layout
        chosen = self.box.findData(engine)
        self.box.setCurrentIndex(chosen if installed and chosen >= 0 else 0)
        self._show_cluster()
        self.box.currentIndexChanged.connect(self._engine_changed)
        self.address.editingFinished.connect(self._remember)

    def engine(self) -> str:
        """The engine chosen: one of ``ENGINES``."""
        return self.box.currentData()

    def ray(self) -> RayTarget | None:
        """The Ray to search on, or None for worker processes on this machine."""
        engine = self.engine()
        if engine == "workers":
            return None
        if engine == "local":
            return RayTarget(LOCAL)
        return RayTarget(self.address.text().strip(), self.token.text().strip())

    def problem(self) -> str:
        """Why the engine cannot run a search as set (empty if it can)."""
        if self.engine() == "cluster" and not self.address.text().strip():
            return "Give the Ray cluster's address (HOST:PORT) under Engine."
        return ""

    def _engine_changed(self) -> None:
        self._show_cluster()
        self._remember()

    def _show_cluster(self) -> None:
        cluster = self.engine() == "cluster"
        for field in (self.address, self.token):
            self.form.setRowVisible(field, cluster)

    def _remember(self) -> None:
        self.changed.emit(self.engine(), self.address.text().strip())
