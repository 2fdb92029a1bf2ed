"""The one in-process HTTP(S) server of the test suite: answers from a routes table, records all.

:class:`RouteServer` is a stdlib ``ThreadingHTTPServer`` on a loopback address
(127.0.0.1 unless told; any free port unless told), optionally behind TLS. Its
``routes`` map a request path to a route: first the path with its query
string, then the path without it, then ``default`` (a 404 unless given). A
route is a fixed :class:`Answer`, or a callable of the :class:`Recorded`
request that returns the :class:`Answer` to send or, having written its own
reply through ``request.handler`` (:class:`Handler`: plain, chunked or a
hang-up), anything else. :class:`Script` is a route that answers from a queue.

Threads: one serving thread (``serve_forever``) started by the constructor,
and one thread per connection (not daemon threads).
Locks: ``RouteServer`` guards its list of recorded requests with one lock;
every request is recorded before its route runs.
Shutdown: :meth:`RouteServer.close` (or leaving its ``with`` block) sets
``stop`` (routes that stall wait on it), stops serving, closes the listening
socket and joins every connection thread, so no socket or thread outlives it.
An idle keep-alive connection ends its thread after :attr:`Handler.timeout`.
"""

from __future__ import annotations

import dataclasses
import http.server
import json
import ssl
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from requests.structures import CaseInsensitiveDict


@dataclass
class Answer:
    """A fixed reply: status, body (bytes, text or a JSON value), extra headers.

    ``close`` (the default) ends the connection after the reply, so a client's
    pooled connection never keeps a connection thread alive until the server closes.
    """

    status: int = 200
    body: bytes | str | Any = b""
    headers: dict[str, str] = dataclasses.field(default_factory=dict)
    content_type: str | None = "application/json"
    close: bool = True

    def encoded(self) -> bytes:
        """The body as sent: bytes as given, text as UTF-8, anything else as JSON."""
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body).encode()


def json_answer(body: Any, status: int = 200, **headers: str) -> Answer:
    """An :class:`Answer` with a JSON body (``headers`` as keyword arguments)."""
    return Answer(status=status, body=body, headers=dict(headers))


@dataclass
class Recorded:
    """One request the server received, as it arrived.

    ``path`` keeps its query string; ``headers`` look up case-insensitively
    (a header sent twice keeps its last value). ``handler`` is the live
    request handler while the route runs (to write a reply by hand).
    """

    method: str
    path: str
    headers: CaseInsensitiveDict[str]
    body: bytes
    client_port: int
    handler: Handler = dataclasses.field(repr=False, compare=False)

    @property
    def bare_path(self) -> str:
        """The path without its query string."""
        return self.path.split("?", 1)[0]

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)

    @property
    def form(self) -> dict[str, list[str]]:
        """The body parsed as an ``application/x-www-form-urlencoded`` form."""
        return urllib.parse.parse_qs(self.body.decode("ascii"), keep_blank_values=True)

    def field(self, name: str) -> str | None:
        """The one value of form field ``name`` (``None``: not sent)."""
        values = self.form.get(name)
        if values is None:
            return None
        assert len(values) == 1, f"{name} sent {len(values)} times"
        return values[0]


Route = Answer | Callable[[Recorded], object]
NOT_FOUND = Answer(status=404, body=b"not here", content_type="text/plain")


class Script:
    """A route answering each request with the next of its queued answers.

    An entry is an :class:`Answer` or a callable of the request returning one;
    once the queue is empty every request gets ``exhausted`` (a 500).
    """

    def __init__(self, exhausted: Answer | None = None) -> None:
        self.exhausted = exhausted or Answer(status=500, body=b"", content_type=None)
        self._queue: list[Answer | Callable[[Recorded], Answer]] = []
        self._lock = threading.Lock()

    def append(self, answer: Answer | Callable[[Recorded], Answer]) -> None:
        """Queue ``answer`` for the next unanswered request."""
        with self._lock:
            self._queue.append(answer)

    def __len__(self) -> int:
        with self._lock:
            return len(self._queue)

    def __call__(self, request: Recorded) -> Answer:
        with self._lock:
            entry = self._queue.pop(0) if self._queue else self.exhausted
        return entry(request) if callable(entry) else entry


class Handler(http.server.BaseHTTPRequestHandler):
    """Records each request, runs its route; the reply helpers serve hand-written routes."""

    protocol_version = "HTTP/1.1"
    timeout = 5  # an idle keep-alive connection ends its thread
    server: _HTTPD

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        owner = self.server.owner
        request = Recorded(
            self.command,
            self.path,
            CaseInsensitiveDict(self.headers.items()),
            body,
            self.client_address[1],
            self,
        )
        owner.record(request)
        routes = owner.routes
        route = routes.get(self.path) or routes.get(request.bare_path) or owner.default
        result = route(request) if callable(route) else route
        if isinstance(result, Answer):
            self.send_answer(result)

    do_GET = do_POST = do_PUT = do_DELETE = _serve  # noqa: N815 - http.server's names

    # -- replies

    def send_answer(self, answer: Answer) -> None:
        """Write ``answer`` (and end the connection if it says so)."""
        data = answer.encoded()
        self.send_response(answer.status)
        if answer.content_type:
            self.send_header("Content-Type", answer.content_type)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        if answer.close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def reply(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        """A plain reply with exactly ``headers`` (plus its length); the connection stays open."""
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def start_chunked(self, content_type: str = "application/json") -> None:
        """Send a 200 head with a chunked body; follow with :meth:`chunk` and :meth:`end_chunks`."""
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def chunk(self, data: bytes) -> None:
        """Send one chunk of a chunked body."""
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_chunks(self) -> None:
        """End a chunked body."""
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class _HTTPD(http.server.ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True  # server_close() joins the connection threads
    owner: RouteServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that went away mid-reply is what many tests do on purpose


class RouteServer:
    """An in-process HTTP(S) server answering from ``routes`` and recording every request.

    ``url`` is ``scheme://host:port`` (no path); :meth:`url_for` adds one.
    Use it as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        routes: dict[str, Route] | None = None,
        *,
        default: Route = NOT_FOUND,
        host: str = "127.0.0.1",
        port: int = 0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.routes: dict[str, Route] = dict(routes or {})
        self.default = default
        #: Set by :meth:`close` first: a route that stalls waits on it.
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._requests: list[Recorded] = []
        self._closed = False
        self._httpd = _HTTPD((host, port), Handler)
        self._httpd.owner = self
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        self.host = host
        self.port: int = self._httpd.server_address[1]
        self.url = f"{'https' if tls is not None else 'http'}://{host}:{self.port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="test-http"
        )
        self._thread.start()

    def url_for(self, path: str) -> str:
        """The URL of ``path`` on this server."""
        return self.url + path

    def record(self, request: Recorded) -> None:
        """Add ``request`` to :attr:`requests` (the handler calls this before the route runs)."""
        with self._lock:
            self._requests.append(request)

    @property
    def requests(self) -> list[Recorded]:
        """Every request received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str) -> list[Recorded]:
        """The requests to ``path`` (compared without the query string)."""
        return [r for r in self.requests if r.bare_path == path]

    def paths(self) -> list[str]:
        """The path (with its query) of every request so far."""
        return [r.path for r in self.requests]

    def close(self) -> None:
        """Release stalled routes, stop serving and join every thread (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)

    def __enter__(self) -> RouteServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
