"""Where Layer Studio keeps what belongs to no saved project: the workspace."""

from __future__ import annotations

import os
from pathlib import Path


def workspace() -> Path:
    """Where unsaved projects keep their runs, and the caches live: ``$LAYER_STUDIO_HOME`` or
    ``~/LayerStudio``."""
    return Path(os.environ.get("LAYER_STUDIO_HOME") or Path.home() / "LayerStudio")
