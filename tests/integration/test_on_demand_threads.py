"""A binding's on-demand threads come with work and go when idle, end to end.

The writer (a frame too big for the pipe at once), the dispatcher (an
event handler) and, over HTTP, the I/O pool and the send lane are each an
on-demand thread (``_core/threads.py``): each appears when work arrives,
does it, and leaves after its idle period, so an idle stdio binding is back
to its one thread, the reader.
"""

from __future__ import annotations

import threading

import mcpclient
from mcpclient import connect

from .engine_support import definition, text_of, wait_until

IDLE_EXIT = 5.0  # the writer and dispatcher idle for ~1 s; generous under load


def _threads_of(name: str) -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name.endswith(f"-{name}"))


def test_the_writer_and_dispatcher_come_with_work_and_leave_when_idle() -> None:
    name = "on-demand"
    seen: list[str] = []
    events: list[object] = []

    def on_event(event: object) -> None:
        events.append(event)
        seen.extend(_threads_of(name))

    handlers = mcpclient.Handlers(event=on_event)
    with connect(definition("--era", "legacy", name=name), handlers) as client:
        assert wait_until(lambda: _threads_of(name) == [f"mcpclient-reader-{name}"], IDLE_EXIT)
        # A frame far larger than a pipe holds cannot be written whole at
        # once: it goes through the writer thread, which starts for it.
        big = "x" * (256 * 1024)  # far more than a pipe holds (64 KiB)
        assert text_of(client.call_tool("echo", {"message": big})) == big
        assert f"mcpclient-writer-{name}" in _threads_of(name)  # idle now, for a while
        assert events  # the connect events ran on the dispatcher
        assert f"mcpclient-dispatch-{name}" in seen
        # Both leave after their idle period; the reader stays.
        assert wait_until(lambda: _threads_of(name) == [f"mcpclient-reader-{name}"], IDLE_EXIT)
        # And come back for the next work, in order.
        assert text_of(client.call_tool("echo", {"message": big + "y"})) == big + "y"
        assert text_of(client.call_tool("echo", {"message": "small"})) == "small"
        assert wait_until(lambda: _threads_of(name) == [f"mcpclient-reader-{name}"], IDLE_EXIT)
    assert _threads_of(name) == []
