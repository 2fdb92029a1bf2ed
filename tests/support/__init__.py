"""Helpers shared by every test module: one event recorder, one wait, one family of servers.

``from tests.support import Events, wait_until, soon`` instead of a per-file copy.
"""

from __future__ import annotations

from .events import Events
from .waiting import soon, wait_until

__all__ = ["Events", "soon", "wait_until"]
