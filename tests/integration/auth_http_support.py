"""Loopback peers for the mcpclient.auth network tests: a scripted HTTP(S) server and raw sockets.

Every server binds 127.0.0.1 (or another 127/8 address) on a free port, runs in
a daemon thread and is shut down by its context manager; the tests never sleep
to wait for them (they block on events with timeouts).
"""

from __future__ import annotations

import contextlib
import datetime
import http.server
import ipaddress
import json
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class Recorded:
    """One request a :class:`ScriptedServer` received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Answer:
    """What the server sends back for one path."""

    status: int = 200
    body: bytes | str | Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = "application/json"

    def encoded(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body).encode()


def json_answer(body: Any, status: int = 200, **headers: str) -> Answer:
    return Answer(status=status, body=body, headers=dict(headers))


Route = Answer | Callable[[Recorded], Answer]


class ScriptedServer:
    """An HTTP(S) server answering from a ``{path: Answer | callable}`` table (404 otherwise).

    Paths include the query string. ``requests`` records everything received.
    """

    def __init__(
        self,
        routes: dict[str, Route] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.routes: dict[str, Route] = dict(routes or {})
        self.requests: list[Recorded] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                record = Recorded(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                owner.requests.append(record)
                route = owner.routes.get(self.path)
                if route is None:
                    answer = Answer(status=404, body=b"not here", content_type="text/plain")
                elif callable(route):
                    answer = route(record)
                else:
                    answer = route
                data = answer.encoded()
                self.send_response(answer.status)
                if answer.content_type:
                    self.send_header("Content-Type", answer.content_type)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True

            do_GET = _serve  # noqa: N815 - http.server's dispatch names
            do_POST = _serve  # noqa: N815 - http.server's dispatch names

        self._server = http.server.ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self.port: int = self._server.server_address[1]
        self.host = host
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://{host}:{self.port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]


class RawServer:
    """A TCP server whose every connection is handed to ``behave(conn, stop)`` in a thread."""

    def __init__(self, behave: Callable[[socket.socket, threading.Event], None]) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.stop = threading.Event()
        self.accepted = threading.Event()
        self._behave = behave
        self._threads: list[threading.Thread] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted.set()
            worker = threading.Thread(target=self._run, args=(conn,), daemon=True)
            self._threads.append(worker)
            worker.start()

    def _run(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            self._behave(conn, self.stop)

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self._thread.join(5)
        self._listener.close()
        for worker in self._threads:
            worker.join(5)


def read_request_head(conn: socket.socket, limit: float = 5.0) -> bytes:
    """Read up to the blank line ending a request head (bounded by ``limit`` seconds)."""
    conn.settimeout(limit)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


@dataclass
class LoopbackPKI:
    """A throwaway CA and a server certificate for some names and 127.0.0.1."""

    ca_file: Path
    server_context: ssl.SSLContext


def make_pki(directory: Path, names: tuple[str, ...]) -> LoopbackPKI:
    """Build a CA and a leaf certificate for ``names`` (+127.0.0.1) under ``directory``."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mcpclient test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    alt_names: list[x509.GeneralName] = [x509.DNSName(n) for n in names]
    alt_names.append(x509.IPAddress(ipaddress.IPv4Address("127.0.0.1")))
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca_name)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_file = directory / "ca.pem"
    ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    cert_file = directory / "server.pem"
    cert_file.write_bytes(
        leaf.public_bytes(serialization.Encoding.PEM)
        + leaf_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file)
    return LoopbackPKI(ca_file=ca_file, server_context=context)


def static_resolver(table: dict[str, list[str]]) -> Callable[[str, int], list[str]]:
    """A resolver answering from ``table`` (an unknown name fails like DNS would)."""

    def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "unknown")
        return list(table[host])

    return resolve


def counting(answers: Iterator[list[str]]) -> tuple[Callable[[str, int], list[str]], list[str]]:
    """A resolver giving the next of ``answers`` on each call, and the list of hosts asked."""
    asked: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return next(answers)

    return resolve, asked
