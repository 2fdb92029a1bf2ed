"""The user's mcpclient state directory (consents, stored catalogs).

``$XDG_STATE_HOME/mcpclient`` (default ``~/.local/state/mcpclient``);
``~/Library/Application Support/mcpclient`` on macOS, ``%LOCALAPPDATA%\\mcpclient``
on Windows. Shared by the CLI's trust store and the host's catalog store.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["state_dir"]


def state_dir(environ: Mapping[str, str], platform: str | None = None) -> Path:
    """The user's mcpclient state directory (not created here)."""
    platform = platform or sys.platform
    home = Path(environ["HOME"]) if environ.get("HOME") else Path.home()
    if platform == "win32":
        local = environ.get("LOCALAPPDATA")
        return (Path(local) if local else home / "AppData" / "Local") / "mcpclient"
    if platform == "darwin":
        return home / "Library" / "Application Support" / "mcpclient"
    xdg = environ.get("XDG_STATE_HOME")
    return (Path(xdg) if xdg and os.path.isabs(xdg) else home / ".local" / "state") / "mcpclient"
