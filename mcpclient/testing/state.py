"""The test server's runtime state that is not the catalog: scripted knobs and the handshake.

:class:`RuntimeKnobs` holds what ``mutate_catalog`` and the ``script_result``
hostile action change while the server runs (list failures, delays, missing
list methods, scripted raw results); :class:`LegacyHandshake` what the legacy
``initialize`` and ``logging/setLevel`` settled.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from .catalog import FAMILIES
from .config import ServerConfig

__all__ = ["NOTHING", "LegacyHandshake", "RuntimeKnobs"]

#: "No scripted result pending" (a scripted result may itself be JSON null).
NOTHING: Any = object()


class RuntimeKnobs:
    """The list knobs and scripted results of one core, changed at runtime.

    Thread safety: any thread.
    """

    def __init__(self, config: ServerConfig) -> None:
        """Start from the command-line values."""
        self._lock = threading.Lock()
        # Runtime list knobs (``mutate_catalog``): seconds before each list answer,
        # and how many list requests still fail (-1: all until reset).
        self._list_delay: float = config.list_delay
        self._fail_lists = 0
        # Families whose list method answers -32601 though declared (``missing_lists``).
        self._missing_lists: frozenset[str] = frozenset(config.missing_lists)
        # Raw results scripted by the hostile ``script_result`` action, per method (FIFO).
        self._scripted: dict[str, list[Any]] = {}

    def script_result(self, method: str, result: Any) -> None:
        """Answer the next request of ``method`` with exactly ``result`` (queued, FIFO)."""
        with self._lock:
            self._scripted.setdefault(method, []).append(result)

    def take_script(self, method: str) -> Any:
        """Consume the next scripted result of ``method``, or return :data:`NOTHING`."""
        with self._lock:
            queue = self._scripted.get(method)
            scripted = queue.pop(0) if queue else NOTHING
            if queue is not None and not queue:
                del self._scripted[method]
        return scripted

    def set_fail_lists(self, count: int) -> None:
        """Make the next ``count`` list requests fail with -32603 (-1: all, until 0)."""
        if count < -1:
            raise ValueError("fail_lists must be >= -1")
        with self._lock:
            self._fail_lists = count

    def set_list_delay(self, seconds: float) -> None:
        """Make every later list request wait ``seconds`` before answering."""
        if seconds < 0:
            raise ValueError("list_delay must be >= 0")
        with self._lock:
            self._list_delay = seconds

    def set_missing_lists(self, families: Iterable[str]) -> None:
        """Make exactly ``families``' list methods answer -32601 (though declared)."""
        chosen = frozenset(families)
        unknown = chosen - set(FAMILIES)
        if unknown:
            raise ValueError(f"missing_lists: unknown families {sorted(unknown)}")
        with self._lock:
            self._missing_lists = chosen

    def is_missing(self, family: str) -> bool:
        """True when ``family``'s list method is to answer -32601."""
        with self._lock:
            return family in self._missing_lists

    def take_list_plan(self) -> tuple[bool, float]:
        """Consume one induced failure if any is pending; return it and the list delay."""
        with self._lock:
            fail = self._fail_lists != 0
            if self._fail_lists > 0:
                self._fail_lists -= 1
            return fail, self._list_delay


class LegacyHandshake:
    """The legacy era's session state: the negotiated version and the log threshold.

    Thread safety: any thread.
    """

    def __init__(self, log_level: str) -> None:
        """Not initialized yet; logs pass ``log_level`` (``--log-level``)."""
        self._lock = threading.Lock()
        self._version: str | None = None
        self._log_level = log_level

    @property
    def version(self) -> str | None:
        """The negotiated protocol version, None before ``initialize``."""
        with self._lock:
            return self._version

    def establish(self, version: str) -> bool:
        """Record the negotiated ``version``; False if ``initialize`` already happened."""
        with self._lock:
            if self._version is not None:
                return False
            self._version = version
            return True

    @property
    def log_level(self) -> str:
        """The threshold of ``notifications/message`` (``logging/setLevel``)."""
        return self._log_level

    def set_log_level(self, level: str) -> None:
        """Change the threshold (``logging/setLevel``)."""
        with self._lock:
            self._log_level = level
