"""The HTTP listener both of the package's HTTP servers build on (the MCP front, the AS).

Threads:
    One daemon thread per accepted connection (``ThreadingHTTPServer``), started by
    ``serve_forever`` on the caller's thread.

Locks:
    None of its own.

Shutdown:
    ``shutdown()`` stops ``serve_forever``; daemon handler threads never hold up the
    interpreter's exit.
"""

from __future__ import annotations

import socketserver
from http.server import ThreadingHTTPServer

__all__ = ["Listener"]


class Listener(ThreadingHTTPServer):
    """A threading HTTP server: daemon handler threads, a deep accept queue, a fast bind."""

    daemon_threads = True
    request_queue_size = 64

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name (getfqdn): slow, and not needed.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)
