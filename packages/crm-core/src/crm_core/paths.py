"""Where USL keeps downloads and built artefacts on a user's machine."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$USL_CACHE_DIR``, else ``$XDG_CACHE_HOME/usl``, else ``~/.cache/usl``."""
    if os.environ.get("USL_CACHE_DIR"):
        return Path(os.environ["USL_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "usl"
