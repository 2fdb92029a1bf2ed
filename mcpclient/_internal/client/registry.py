"""Process-wide bookkeeping of open clients: interpreter exit and fork.

A forgotten client must not hang interpreter shutdown or leave a server
running: at exit every open binding's server is stopped, all of them at
once, from the exit hook's own thread (Python 3.12+ refuses new threads
there). A client or host inherited through ``os.fork()`` is marked forked in
the child (every use raises ``ForkedError``) without touching the parent's
pipes, sockets or threads.

Threads:
    None of its own: the exit hook runs on the interpreter's exit thread, the
    fork hook on the child's only thread.

Locks:
    ``_lock`` guards the open sets; it is replaced (never taken) in a forked
    child, where a parent thread may have held it at fork time.

Shutdown:
    Nothing to stop.
"""

from __future__ import annotations

import atexit
import os
import signal
import threading
import time
import weakref
from typing import Protocol

__all__ = ["register", "register_host", "unregister", "unregister_host"]


class _Closable(Protocol):
    def _forget_after_fork(self) -> None: ...

    def _exit_signal(self, sig: int) -> None: ...

    def _exit_wait(self, timeout: float) -> bool: ...

    def _exit_kill(self) -> None: ...


class _Forkable(Protocol):
    def _forget_after_fork(self) -> None: ...


_lock = threading.Lock()  # guards _open and _hosts
_open: weakref.WeakSet[_Closable] = weakref.WeakSet()
_hosts: weakref.WeakSet[_Forkable] = weakref.WeakSet()  # forgotten after a fork, not at exit
_EXIT_GRACE = 1.0


def register(client: _Closable) -> None:
    """Track an open client."""
    with _lock:
        _open.add(client)


def unregister(client: _Closable) -> None:
    """Stop tracking a closed client."""
    with _lock:
        _open.discard(client)


def register_host(host: _Forkable) -> None:
    """Track a connected host (its clients are tracked on their own)."""
    with _lock:
        _hosts.add(host)


def unregister_host(host: _Forkable) -> None:
    """Stop tracking a closed host."""
    with _lock:
        _hosts.discard(host)


def _at_exit() -> None:
    with _lock:
        clients = list(_open)
        _open.clear()
    if not clients:
        return
    for client in clients:
        client._exit_signal(signal.SIGTERM)
    deadline = time.monotonic() + _EXIT_GRACE
    for client in clients:
        client._exit_wait(max(0.0, deadline - time.monotonic()))
    for client in clients:
        client._exit_kill()


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()  # the parent's lock may have been held at fork
    forgotten: list[_Forkable] = [*_open, *_hosts]
    _open.clear()
    _hosts.clear()
    for each in forgotten:
        each._forget_after_fork()


atexit.register(_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
