"""A loopback TCP proxy that silently drops idle connections, like a load balancer.

Many load balancers and proxies end a TCP connection that carried no bytes
for some seconds without telling either side (no FIN, no RST): later bytes
simply go nowhere. :class:`IdleDropProxy` does the same on 127.0.0.1, so
tests can show what a client sees after such a cut and what keeps a
connection alive.

Threads:
    ``mcpclient-testproxy-accept`` accepts; each connection gets two pumps,
    ``mcpclient-testproxy-pump``, one per direction. A pump forwards bytes
    until the connection has been idle (no byte either way) for ``idle``
    seconds; from then on it reads and discards (the silent cut) until a
    side closes.

Locks:
    ``_cond`` guards the connection list and the drop count.

Shutdown:
    :meth:`IdleDropProxy.close` closes the listener and every socket, which
    ends each pump, and joins them.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from time import monotonic as now

__all__ = ["IdleDropProxy"]


class _Pair:
    def __init__(self, client: socket.socket, upstream: socket.socket) -> None:
        self.client = client
        self.upstream = upstream
        self.last = now()
        self.dropped = False


class IdleDropProxy:
    """Forward 127.0.0.1:<port> to ``upstream``; cut connections idle for ``idle`` seconds.

    Example:
        >>> with IdleDropProxy(("127.0.0.1", 8000), idle=0.5) as proxy:  # doctest: +SKIP
        ...     url = f"http://127.0.0.1:{proxy.port}/mcp"

    Thread safety: any thread.
    """

    def __init__(self, upstream: tuple[str, int], *, idle: float) -> None:
        self._upstream = upstream
        self._idle = idle
        self._cond = threading.Condition()
        self._pairs: list[_Pair] = []
        self._threads: list[threading.Thread] = []
        self._drops = 0
        self._closed = False
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._spawn("accept", self._accept)

    def __enter__(self) -> IdleDropProxy:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def drops(self) -> int:
        """How many connections were cut for idleness so far."""
        with self._cond:
            return self._drops

    def wait_drops(self, count: int, timeout: float) -> bool:
        """Wait until at least ``count`` connections were cut; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._drops >= count, timeout)

    def close(self) -> None:
        """Stop accepting, close every connection, join the threads."""
        with self._cond:
            self._closed = True
            pairs, self._pairs = self._pairs, []
            threads = list(self._threads)
        _shut(self._listener)  # shutdown wakes the blocked accept (close alone does not)
        for pair in pairs:
            for sock in (pair.client, pair.upstream):
                _shut(sock)
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(2.0)

    def _spawn(self, role: str, target: Callable[..., None], *args: object) -> None:
        thread = threading.Thread(
            target=target,
            args=args,
            name=f"mcpclient-testproxy-{role}",
            daemon=True,
        )
        with self._cond:
            self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self._upstream, timeout=5.0)
            except OSError:
                client.close()
                continue
            pair = _Pair(client, upstream)
            with self._cond:
                if self._closed:
                    _shut(client)
                    _shut(upstream)
                    return
                self._pairs.append(pair)
            self._spawn("pump", self._pump, pair, client, upstream)
            self._spawn("pump", self._pump, pair, upstream, client)

    def _pump(self, pair: _Pair, src: socket.socket, dst: socket.socket) -> None:
        while True:
            with self._cond:
                dropped = pair.dropped
                wait = self._idle - (now() - pair.last)
                if not dropped and wait <= 0:
                    pair.dropped = dropped = True
                    self._drops += 1
                    self._cond.notify_all()
            try:
                src.settimeout(None if dropped else max(0.01, wait))
                data = src.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                data = b""
            if not data:
                _shut(dst)
                _shut(src)
                return
            with self._cond:
                if pair.dropped:
                    continue  # the silent cut: bytes go nowhere
                pair.last = now()
            try:
                dst.sendall(data)
            except OSError:
                _shut(src)
                return


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already shut by the other side
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
