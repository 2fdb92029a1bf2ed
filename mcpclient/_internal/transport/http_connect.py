"""The connect hook: our connection classes, which report to the thread's exchange.

They tell the exchange (:mod:`http_exchange`) when they connect, write the
request and await headers, so a cut reaches the right socket and a failure
knows whether the request was written. Two more duties, only for an exchange
that asks for them:

* **Pinned addresses** (``Exchange.pin``, an :class:`AddressPolicy`): the
  host is resolved once, every address checked, and the socket connects to a
  checked address, never to the name (so the address checked is the address
  connected to). An :class:`AddressRefusedError` means nothing was contacted.
* **Deadline-bounded reads** (``Exchange.read_deadline``, for callers without
  a deadline watcher): every socket read of the response, headers and body,
  gets only the time left, so a server trickling its bytes cannot outlive the
  deadline.
"""

from __future__ import annotations

import io
import socket
from collections.abc import Callable
from typing import Any

from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError
from urllib3.util import connection as urllib3_connection

from mcpclient._core.deadline import now
from mcpclient._internal.transport.http_exchange import current_exchange

__all__ = ["POOL_CLASSES"]


class _HookedHTTPConnection(HTTPConnection):
    """Reports to the thread's exchange: connected, request written, awaiting headers.

    Its https twin inherits these hooks first: ``super()`` then reaches
    urllib3's ``HTTPSConnection`` (TLS) before its plain base.
    """

    def connect(self) -> None:
        _hook_connect(self, super().connect)

    def _new_conn(self) -> socket.socket:
        return _pinned_socket(self, super()._new_conn)

    def request(self, *args: Any, **kwargs: Any) -> None:
        _hook_request(self, super().request, args, kwargs)

    def getresponse(self) -> Any:
        return _hook_response(self, super().getresponse)


class _HookedHTTPSConnection(_HookedHTTPConnection, HTTPSConnection):
    """The https twin of :class:`_HookedHTTPConnection` (the same hooks, over TLS)."""


def _hook_connect(conn: HTTPConnection, connect: Callable[[], None]) -> None:
    exchange = current_exchange()
    if exchange is not None:
        exchange.connecting(conn)
    connect()
    if exchange is not None:
        exchange.connecting(conn)  # cut while connecting: nothing is sent


def _pinned_socket(conn: HTTPConnection, new_conn: Callable[[], socket.socket]) -> socket.socket:
    exchange = current_exchange()
    pin = exchange.pin if exchange is not None else None
    if pin is None:
        return new_conn()
    # Every answer is checked before any is used; the name is never resolved again.
    addresses = pin.addresses(conn.host.strip("[]").rstrip("."), conn.port or 0)
    failure: NewConnectionError | None = None
    for address in addresses:
        try:
            return urllib3_connection.create_connection(
                (address, conn.port or 0),
                conn.timeout,
                source_address=conn.source_address,
                socket_options=conn.socket_options,
            )
        except TimeoutError as exc:  # the deadline is spent: trying the next one cannot help
            raise ConnectTimeoutError(conn, "connect timed out") from exc
        except OSError as exc:
            failure = NewConnectionError(conn, f"Failed to establish a new connection: {exc}")
            failure.__cause__ = exc
    assert failure is not None
    raise failure


def _hook_request(
    conn: HTTPConnection,
    request: Callable[..., None],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    exchange = current_exchange()
    if exchange is not None:
        exchange.sending(conn)
    request(*args, **kwargs)
    if exchange is not None:
        exchange.written = True


def _hook_response(conn: HTTPConnection, getresponse: Callable[[], Any]) -> Any:
    exchange = current_exchange()
    if exchange is None:
        return getresponse()
    exchange.awaiting(conn)
    deadline = exchange.read_deadline
    real = conn.sock
    if deadline is None or real is None:
        return getresponse()
    # http.client builds its reader from the connection's socket: hand it one
    # whose reads each get only the time left (headers and body alike).
    conn.sock = _DeadlineSocket(real, deadline)
    try:
        return getresponse()
    finally:
        if conn.sock is not None:
            conn.sock = real


class _DeadlineSocket:
    """Stands in for the socket while http.client builds its response."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def makefile(self, mode: str) -> io.BufferedReader:
        # The real socket's own raw reader keeps its close accounting, so the
        # socket closes only once the response is done with it.
        raw = self._sock.makefile("rb", buffering=0)
        return io.BufferedReader(_DeadlineReader(raw, self._sock, self._deadline))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _DeadlineReader(io.RawIOBase):
    """Socket reads that each get only the time left before the deadline."""

    def __init__(self, raw: Any, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._raw = raw
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self._deadline - now()
        if left <= 0:
            raise TimeoutError("deadline")
        self._sock.settimeout(left)
        read: int = self._raw.readinto(buffer)
        return read

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


class _HookedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _HookedHTTPConnection


class _HookedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HookedHTTPSConnection


#: The pool class per scheme that every session's pool managers use.
POOL_CLASSES: dict[str, type[HTTPConnectionPool]] = {
    "http": _HookedHTTPPool,
    "https": _HookedHTTPSPool,
}
