"""The user's preferences as the window uses them: where the file lives, the recent projects
(and the File > Open Recent menu), whether this is the first run, the Search tab's
engine and the dataset editor's way of adding images."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtWidgets import QApplication, QMenu

from studio.core.base.preferences import FILE_NAME, Preferences


def preferences_path() -> Path:
    """The preferences file: beside Qt's settings file of this user and app (the platform's
    config folder, for example ~/.config/Layer Studio on Linux or %APPDATA%\\Layer Studio on
    Windows), so that whatever moves Qt's settings (as the tests do) moves it too."""
    app = QApplication.instance()
    settings = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope,
                         app.organizationName(), app.applicationName())
    return Path(settings.fileName()).parent / FILE_NAME


class RecentProjects(QObject):
    """The preferences, read when first needed; remembers projects as they are opened or saved."""

    note = Signal(str)
    """Why the preferences file on disk was not used (it is broken or from a newer version)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._preferences: Preferences | None = None

    @property
    def preferences(self) -> Preferences:
        """The preferences, read from disk the first time they are asked for."""
        if self._preferences is None:
            self._preferences = Preferences.load(preferences_path())
            if self._preferences.note:
                self.note.emit(self._preferences.note)
        return self._preferences

    def paths(self) -> list[Path]:
        """The recent projects that still exist, most recent first."""
        return self.preferences.existing_recent()

    def add(self, path: Path) -> None:
        """Remember ``path`` as the most recent project."""
        self.preferences.add_recent(path)
        self._save()

    def first_run(self) -> bool:
        """True the first time it is asked on a machine (the welcome page is due); False
        afterwards, as it is remembered, and when a newer version wrote the preferences."""
        if self.preferences.welcome_seen or not self.preferences.writable:
            return False
        self.preferences.welcome_seen = True
        self._save()
        return True

    def remember_engine(self, engine: str, address: str) -> None:
        """Remember where the Search tab runs searches (and the Ray cluster's address)."""
        preferences = self.preferences
        if (preferences.search_engine, preferences.ray_address) != (engine, address):
            preferences.search_engine, preferences.ray_address = engine, address
            self._save()

    def remember_adding(self, max_side: int, keep_originals: bool) -> None:
        """Remember the largest side the dataset editor shrinks images added to, and whether
        it keeps their originals."""
        preferences = self.preferences
        if (preferences.max_side, preferences.keep_originals) != (max_side, keep_originals):
            preferences.max_side, preferences.keep_originals = max_side, keep_originals
            self._save()

    def _save(self) -> None:
        try:
            self.preferences.save()
        except OSError as exc:
            self.note.emit(f"Your preferences could not be saved in {self.preferences.path} "
                           f"({exc.strerror or exc}).")

    def fill_menu(self, menu: QMenu, open_path) -> None:
        """Replace ``menu``'s entries with the recent projects; choosing one calls
        ``open_path(path)``."""
        menu.clear()
        paths = self.paths()
        for number, path in enumerate(paths, 1):
            action = menu.addAction(f"&{number % 10} {path.name}")
            action.setStatusTip(str(path))
            action.triggered.connect(lambda _=False, p=path: open_path(p))
        if not paths:
            menu.addAction("No recent projects").setEnabled(False)
