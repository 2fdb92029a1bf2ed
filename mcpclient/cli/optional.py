"""The library layers only some commands need, imported on first use.

``mcpclient.config`` (host configuration files) serves ``servers``, SERVER
given by name, ``config`` and ``doctor``; ``mcpclient.export`` serves
``export``. Importing them late keeps ``call``/``list`` against a URL or a
command from paying for them.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["config_module", "export_module"]


def config_module() -> Any:
    """``mcpclient.config``."""
    return importlib.import_module("mcpclient.config")


def export_module() -> Any:
    """``mcpclient.export``."""
    return importlib.import_module("mcpclient.export")
