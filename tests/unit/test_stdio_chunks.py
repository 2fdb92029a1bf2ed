"""The portable stdio backend's stdout queue: bounded, ordered, and woken by close."""

from __future__ import annotations

import threading

from mcpclient._internal.transport.stdio_portable import ChunkQueue


def test_chunks_come_out_in_order_then_eof() -> None:
    chunks = ChunkQueue(4)
    assert chunks.put(b"a") and chunks.put(b"b")
    chunks.end()
    assert [chunks.get(), chunks.get(), chunks.get()] == [b"a", b"b", b""]


def test_a_full_queue_holds_the_pump_until_the_reader_takes_one() -> None:
    chunks = ChunkQueue(1)
    assert chunks.put(b"first")
    put_done = threading.Event()
    pump = threading.Thread(target=lambda: (chunks.put(b"second"), put_done.set()))
    pump.start()
    assert not put_done.wait(0.05)  # no room: the pump waits (and so does the child's pipe)
    assert chunks.get() == b"first"
    assert put_done.wait(5)
    pump.join(5)
    assert chunks.get() == b"second"


def test_close_wakes_a_waiting_reader_and_a_waiting_pump() -> None:
    chunks = ChunkQueue(1)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(chunks.get()))
    reader.start()
    chunks.close()
    reader.join(5)
    assert got == [b""]
    assert chunks.put(b"late") is False  # the pump stops
    assert chunks.get() == b""
