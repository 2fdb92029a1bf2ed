"""Serve an ASGI app of a peer on 127.0.0.1 and announce its URL on stdout.

The peers run as scripts, so their own folder is on ``sys.path`` and they
import this module by name. The first stdout line is
``listening on http://127.0.0.1:<port><path>``; nothing else reaches stdout
(a caller may read only that line).
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

import anyio
import uvicorn


def serve(app: Any, port: int, path: str) -> None:
    """Bind ``port`` (0: any), print the URL of ``path``, and serve ``app`` until killed."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    bound = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    sys.stdout.write(f"listening on http://127.0.0.1:{bound}{path}\n")
    sys.stdout.flush()
    os.dup2(2, 1)
    anyio.run(lambda: server.serve(sockets=[sock]))
