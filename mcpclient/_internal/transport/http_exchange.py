"""An exchange any thread can cut: one request from its first byte to the end of its body.

The requesting thread reports progress through the connection hooks
(connecting, request written, awaiting headers) and then follows the
response; the deadline watcher or an aborting thread calls
:meth:`Exchange.cut`, which shuts the socket down before headers and the
response after them. :class:`AbortHandle` and :func:`abort` are the public
ways in.

Locks:
    * ``Exchange._lock`` guards the exchange's cut reason, current connection,
      response, reader count and finished flag. Sockets are shut down and
      responses closed after it is released. The watcher and aborting threads
      only close a response no thread is reading (else the reader closes it on
      its way out), so they never wait for a reader's buffer lock.
    * ``AbortHandle._lock`` guards the handle's flag and exchange.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import weakref
from collections.abc import Callable
from typing import Protocol

import requests
from urllib3.connection import HTTPConnection

from mcpclient._internal.transport.http_origins import AddressPolicy, origin_of

__all__ = [
    "AbortHandle",
    "Exchange",
    "ExchangeCutError",
    "Schedule",
    "TimerLike",
    "abort",
    "close_quietly",
    "current_exchange",
    "exchange_of",
    "shutdown_response",
    "thread_state",
]

_log = logging.getLogger(__name__)

# Where a response keeps its exchange (in its __dict__, so it dies with it).
_EXCHANGE_ATTR = "_mcpclient_exchange"


class TimerLike(Protocol):
    """What ``schedule`` returns (``watcher.Timer``)."""

    def cancel(self) -> None: ...


#: ``schedule(deadline, callback) -> timer``: run ``callback`` at the monotonic
#: ``deadline`` on the deadline watcher thread (``watcher.schedule``).
Schedule = Callable[[float, Callable[[], None]], TimerLike]


# The exchange whose request runs on this thread (set by http._send_once only).
thread_state = threading.local()


def current_exchange() -> Exchange | None:
    """The exchange whose request runs on this thread, if any (for the connection hooks)."""
    exchange: Exchange | None = getattr(thread_state, "exchange", None)
    return exchange


class ExchangeCutError(Exception):
    """Raised inside urllib3 by our hooks once the exchange was cut."""


class _QuietUrllib3(logging.Filter):
    """Drop urllib3's records (they quote paths and queries) during our requests."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(thread_state, "quiet", False)


_QUIET = _QuietUrllib3()
for _name in (
    "urllib3.connectionpool",
    "urllib3.connection",
    "urllib3.response",
    "urllib3.poolmanager",
    "urllib3.util.retry",
):
    logging.getLogger(_name).addFilter(_QUIET)


class Exchange:
    """One request from its first byte to the end of its response body.

    The requesting thread reports progress (via the connection hooks and
    :func:`_send_once`); the watcher or an aborting thread calls :meth:`cut`.
    """

    __slots__ = (
        "_lock",
        "binding",
        "conn",
        "cut_reason",
        "finished",
        "idle_timeout",
        "pin",
        "read_deadline",
        "readers",
        "request_started",
        "response",
        "schedule",
        "shown",
        "written",
    )

    def __init__(self, *, schedule: Schedule | None, shown: str, binding: str) -> None:
        self._lock = threading.Lock()  # guards cut_reason, conn, response, readers, finished
        self.schedule = schedule
        self.shown = shown
        self.binding = binding
        self.cut_reason: str | None = None  # "deadline" or "abort", once cut
        self.conn: HTTPConnection | None = None  # before headers
        # After headers; weak, so that the response (which points at its exchange)
        # is freed by reference counting and its connection closed at once.
        self.response: weakref.ref[requests.Response] | None = None
        self.readers = 0
        self.finished = False  # the body ended cleanly; the connection went back to the pool
        self.idle_timeout: float | None = None
        # Set by the request layer from the session config (see http_connect).
        self.pin: AddressPolicy | None = None
        self.read_deadline: float | None = None
        # Per attempt, written by the requesting thread only.
        self.request_started = False
        self.written = False

    # -- the requesting thread

    def new_attempt(self) -> None:
        with self._lock:
            self.conn = None
        self.request_started = False
        self.written = False

    def connecting(self, conn: HTTPConnection) -> None:
        with self._lock:
            if self.cut_reason is not None:
                raise ExchangeCutError
            self.conn = conn

    def sending(self, conn: HTTPConnection) -> None:
        self.connecting(conn)
        self.request_started = True

    def awaiting(self, conn: HTTPConnection) -> None:
        self.connecting(conn)

    def detach(self) -> None:
        """The request is over: forget its connection, which the pool may reuse."""
        with self._lock:
            self.conn = None

    def adopt(self, response: requests.Response) -> bool:
        """Headers arrived: the exchange now follows ``response``. False if cut."""
        response.__dict__[_EXCHANGE_ATTR] = self
        with self._lock:
            self.conn = None
            self.response = weakref.ref(response)
            return self.cut_reason is None

    def start_read(self) -> bool:
        with self._lock:
            if self.cut_reason is not None:
                return False
            self.readers += 1
            return True

    def end_read(self) -> bool:
        """Leave a read; True when the exchange was cut (the reader closes)."""
        with self._lock:
            self.readers -= 1
            return self.cut_reason is not None

    def finish(self) -> bool:
        """The body ended cleanly; False if it was cut first."""
        with self._lock:
            if self.cut_reason is not None:
                return False
            self.finished = True
            return True

    # -- any thread

    def cut(self, reason: str) -> None:
        """Stop the exchange: shut its socket down; close an unread response."""
        with self._lock:
            if self.cut_reason is not None or self.finished:
                return
            self.cut_reason = reason
            conn = self.conn
            response = self.response() if self.response is not None else None
            reading = self.readers > 0
        if response is not None:
            shutdown_response(response)
            if not reading:
                close_quietly(response)
        elif conn is not None:
            sock = conn.sock
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


def exchange_of(response: requests.Response) -> Exchange:
    """The exchange ``response`` belongs to (a fresh one for a response from elsewhere)."""
    exchange = response.__dict__.get(_EXCHANGE_ATTR)
    if isinstance(exchange, Exchange):
        return exchange
    fresh = Exchange(schedule=None, shown=origin_of(response.url or ""), binding="")
    fresh.response = weakref.ref(response)
    found = response.__dict__.setdefault(_EXCHANGE_ATTR, fresh)
    assert isinstance(found, Exchange)
    return found


def shutdown_response(response: requests.Response) -> None:
    """Wake a thread blocked reading ``response`` (never blocks itself)."""
    raw = response.raw
    if hasattr(raw, "shutdown"):  # urllib3 >= 2.3
        # Released, closed, or not a urllib3 response: then there is nothing to wake.
        with contextlib.suppress(Exception):
            raw.shutdown()
        return
    conn = getattr(raw, "_connection", None)  # pragma: no cover - older urllib3
    sock = getattr(conn, "sock", None)  # pragma: no cover
    if sock is not None:  # pragma: no cover
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RD)


def close_quietly(response: requests.Response) -> None:
    """Close ``response``; a failure to close is logged, never raised."""
    try:
        response.close()
    except Exception:
        _log.debug("closing a response failed", exc_info=False)


class AbortHandle:
    """Abort one request from another thread, before or after its headers.

    Pass it to ``http.request`` as ``abort_handle``.
    :meth:`abort` before the request starts makes it fail at once without I/O;
    while it waits for headers it shuts the connection's socket down; after
    headers it is :func:`abort` on the response. Use one handle per request.

    Thread safety: :meth:`abort` from any thread, any number of times.
    """

    __slots__ = ("_aborted", "_exchange", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards _aborted, _exchange
        self._aborted = False
        self._exchange: Exchange | None = None

    @property
    def aborted(self) -> bool:
        """Whether :meth:`abort` was called."""
        return self._aborted

    def abort(self) -> None:
        """Abort the request (idempotent)."""
        with self._lock:
            self._aborted = True
            exchange = self._exchange
        if exchange is not None:
            exchange.cut("abort")

    def _bind(self, exchange: Exchange) -> None:
        with self._lock:
            self._exchange = exchange
            aborted = self._aborted
        if aborted:
            exchange.cut("abort")

    def __repr__(self) -> str:
        return f"<AbortHandle aborted={self._aborted}>"


def abort(response: requests.Response) -> None:
    """Close ``response``'s stream from any thread; a reader blocked on it returns.

    The reader then raises :class:`HTTPSendError` with ``aborted=True``. Safe to
    call twice, and after the body ended (then it does nothing).
    """
    exchange_of(response).cut("abort")
