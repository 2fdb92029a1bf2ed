"""The testing proxy cuts idle connections silently (the load balancer a keepalive is for)."""

from __future__ import annotations

import socket
import threading

from mcpclient.testing.proxy import IdleDropProxy


def _echo_server() -> tuple[socket.socket, threading.Thread]:
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            while data := conn.recv(4096):
                conn.sendall(data)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return listener, thread


def test_busy_connection_forwards_and_idle_one_is_cut_silently() -> None:
    listener, thread = _echo_server()
    with IdleDropProxy(listener.getsockname()[:2], idle=0.4) as proxy:
        client = socket.create_connection(("127.0.0.1", proxy.port), timeout=5.0)
        with client:
            client.sendall(b"hello")
            assert client.recv(16) == b"hello"
            assert proxy.drops == 0
            assert proxy.wait_drops(1, 5.0)
            client.sendall(b"lost")
            client.settimeout(0.5)
            try:
                got = client.recv(16)
            except TimeoutError:
                got = None
            assert got is None  # nothing comes back, and nothing says so
    listener.close()
    thread.join(2.0)
