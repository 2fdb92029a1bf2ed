"""The one family of server fixtures: the testing server over stdio, any stdio peer, recordings.

Every binding :func:`definition` opens runs ``python -m mcpclient.testing.server``
from the repository root (the package is not installed, so the child finds it
through its working directory) with a short shutdown grace, so a test that
closes its client stops the server in well under a second. :func:`make_definition`
does the same for any other stdio command (the SDK server, server-everything).
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import mcpclient

from .waiting import wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]
#: Seconds a server gets after stdin closes (and after SIGTERM): keeps close() quick.
GRACE = 0.2
SHUTDOWN_GRACE = GRACE
MODERN = "2026-07-28"
LATEST_LEGACY = "2025-11-25"
#: Slack allowed past a deadline or a promised bound (DESIGN: "held" = well under a second;
#: we allow more, the CI machine has 2 cores and many threads).
SLACK = 1.5

_unique = itertools.count(1)


def server_transport(
    *flags: str,
    record: Path | None = None,
    unique: bool = True,
    grace: float = GRACE,
) -> mcpclient.StdioTransport:
    """A transport running the testing server with ``flags``.

    ``unique`` adds a distinct ``--server-version`` so the process-wide era
    cache (keyed by command and arguments) never carries over between tests.
    """
    args = ["-m", "mcpclient.testing.server", *flags]
    if record is not None:
        args += ["--record", str(record)]
    if unique:
        args += ["--server-version", f"engine-{os.getpid()}-{next(_unique)}"]
    return mcpclient.StdioTransport(sys.executable, args, cwd=str(REPO_ROOT), shutdown_grace=grace)


def definition(
    *flags: str,
    record: Path | None = None,
    unique: bool = True,
    name: str = "engine",
    **fields: Any,
) -> mcpclient.Definition:
    """A definition for the testing server; ``fields`` go to :class:`Definition`."""
    fields.setdefault("timeouts", mcpclient.Timeouts(startup=15, request=10))
    return mcpclient.Definition(
        name=name, transport=server_transport(*flags, record=record, unique=unique), **fields
    )


class Recording:
    """The inbound messages a server wrote with ``--record FILE``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def messages(self) -> list[dict[str, Any]]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        out = []
        for line in text.splitlines(keepends=True):
            if line.endswith("\n"):  # a line still being written is skipped
                out.append(json.loads(line))
        return out

    def methods(self) -> list[str]:
        return [m.get("method", "") for m in self.messages() if isinstance(m, dict)]

    def requests(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.messages() if m.get("method") == method and "id" in m]

    def tool_call_ids(self, name: str, arguments: dict[str, Any] | None = None) -> list[Any]:
        """Ids of the recorded ``tools/call`` requests of ``name`` (with ``arguments``)."""
        ids = []
        for m in self.requests("tools/call"):
            params = m.get("params") or {}
            if params.get("name") != name:
                continue
            if arguments is not None and params.get("arguments") != arguments:
                continue
            ids.append(m["id"])
        return ids

    def cancelled_ids(self) -> list[Any]:
        return [
            (m.get("params") or {}).get("requestId")
            for m in self.messages()
            if m.get("method") == "notifications/cancelled"
        ]

    def wait_cancelled(self, request_id: Any, timeout: float = 5.0) -> bool:
        return wait_until(lambda: request_id in self.cancelled_ids(), timeout)


def make_definition(
    name: str,
    command: str,
    args: tuple[str, ...] | list[str] = (),
    *,
    protocol: str = "auto",
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
    **definition_kwargs: Any,
) -> mcpclient.Definition:
    """A ``Definition`` over ``StdioTransport(..., shutdown_grace=0.2)`` for any stdio peer."""
    transport = mcpclient.StdioTransport(
        command,
        list(args),
        env=dict(env) if env else None,
        cwd=str(cwd) if cwd is not None else None,
        shutdown_grace=SHUTDOWN_GRACE,
    )
    return mcpclient.Definition(name, transport, protocol=protocol, **definition_kwargs)
