"""The HTTP front end of the scriptable test server (``--transport http``).

Maps HTTP requests, responses and SSE streams onto :class:`ServerCore`:
Streamable HTTP at ``/mcp`` (2026-07-28 and 2025-03-26 … 2025-11-25) and the
deprecated HTTP+SSE transport (2024-11-05) at ``/sse`` + ``/messages``. The
behavior, knobs and record format are documented in
``docs/testing-server.md``. Standard library only.

Modules: :mod:`.http_stream` (SSE streams), :mod:`.http_channels` (where a
core's output goes, and the sessions), :mod:`.http_front` (the process-wide
front end), :mod:`.http_handler` (the request handler), :mod:`.http_hostile`
(the HTTP ``hostile`` actions), :mod:`.http_common` (options, codes, helpers).

Structure: every POSTed request gets an :class:`~.http_channels.Exchange`, the
:class:`~mcpclient.testing.core.Channel` its answer and request-scoped messages
go to; the exchange decides between a JSON body and an SSE stream and feeds a
:class:`~.http_stream.Stream` that the HTTP handler thread drains onto the socket. Each
legacy session (and each HTTP+SSE connection) runs its own ``ServerCore``, as if
it were a separate stdio process; all modern requests share one.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from typing import Any, NoReturn

from .config import ServerConfig
from .http_common import MCP_PATH, POLL_SECONDS, HttpOptions
from .http_front import HttpFrontEnd
from .http_handler import Server

__all__ = ["HttpOptions", "serve_http"]


def serve_http(
    config: ServerConfig, options: HttpOptions, *, handle_sigterm: bool = True
) -> NoReturn:
    """Listen, print ``listening on http://HOST:PORT/mcp`` on stdout, serve until signalled.

    SIGTERM (unless ``handle_sigterm`` is False) and SIGINT end the open streams
    and exit with status 0.
    """
    front = HttpFrontEnd(config, options)
    family = socket.AF_INET6 if ":" in options.host else socket.AF_INET
    try:
        httpd = Server((options.host, options.port), front, family)
    except OSError as exc:
        sys.stderr.write(f"cannot listen on {options.host} port {options.port}: {exc}\n")
        sys.stderr.flush()
        os._exit(2)
    port = httpd.server_address[1]
    host = f"[{options.host}]" if family == socket.AF_INET6 else options.host
    if front.guard is not None:
        front.guard.bind(f"http://{host}:{port}")
    sys.stdout.write(f"listening on http://{host}:{port}{MCP_PATH}\n")
    sys.stdout.flush()
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    if handle_sigterm:
        signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    thread = threading.Thread(
        target=httpd.serve_forever,
        kwargs={"poll_interval": 0.1},
        name="testing-http-server",
        daemon=True,
    )
    thread.start()
    while not stop.wait(0.5):
        pass
    front.stopping.set()
    httpd.shutdown()
    time.sleep(2 * POLL_SECONDS)  # let stream writers end their responses
    httpd.server_close()
    front.close()
    os._exit(0)
