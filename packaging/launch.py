"""Entry point of the bundled executables: ``layer-studio`` (windowed) and ``studio`` (console).

Both run ``studio.cli.main``: with no command it opens the app, with one it works headless.
``freeze_support`` comes first so the search's spawned worker processes, which start this
executable again, run their task instead of a second app.

``LAYER_STUDIO_CLOSE_AFTER_MS=N`` closes the app's windows N ms after the event loop starts
(as a person closing the window would): the bundle's smoke test opens the app this way.
"""

import multiprocessing
import os
import sys

CLOSE_AFTER = "LAYER_STUDIO_CLOSE_AFTER_MS"


def close_windows_later(milliseconds: int) -> None:
    """Make the app's QApplication now and have it close every window once it has run a while."""
    from PySide6.QtCore import QTimer

    from studio.gui.shell.app import create_application

    app = create_application()
    QTimer.singleShot(milliseconds, app.closeAllWindows)


if __name__ == "__main__":
    multiprocessing.freeze_support()
    if os.environ.get(CLOSE_AFTER):
        close_windows_later(int(os.environ[CLOSE_AFTER]))
    from studio.cli import main

    sys.exit(main())
