"""docs/architecture.md is true: the idle threads it documents are the threads a binding keeps."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcpclient

from .conftest import SpawnHttp
from .engine_support import definition, wait_until

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
BINDING = "arch"
# The HTTP I/O workers leave after 5 idle seconds; the dispatcher and writer after 1.
IDLE_WAIT = 15.0


def documented_idle_threads() -> dict[str, set[str]]:
    """The rows of the idle-threads table: binding kind -> thread names for ``BINDING``."""
    text = DOC.read_text(encoding="utf-8")
    table = text.split("<!-- idle-threads", 1)[1].split("\n\n", 1)[0]
    rows: dict[str, set[str]] = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or cells[0] in ("binding", "") or set(cells[0]) <= {"-"}:
            continue
        names = re.findall(r"`(mcpclient-[a-z]+)-<binding>`", cells[1])
        rows[cells[0]] = {f"{name}-{BINDING}" for name in names}
    return rows


def binding_threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.endswith(f"-{BINDING}")}


def process_threads() -> set[str]:
    return {
        t.name
        for t in threading.enumerate()
        if t.name.startswith("mcpclient-") and not t.name.endswith(f"-{BINDING}")
    }


@pytest.fixture(params=["stdio", "modern", "legacy"])
def idle_binding(
    request: pytest.FixtureRequest, spawn_http: SpawnHttp
) -> Iterator[tuple[str, object]]:
    kind = request.param
    if kind == "stdio":
        defn = definition("--era", "dual", name=BINDING)
        with mcpclient.connect(defn) as client:
            yield "stdio", client
        return
    server = spawn_http("--era", kind)
    transport = mcpclient.StreamableHTTPTransport(server.url)
    protocol = "2026-07-28" if kind == "modern" else "2025-11-25"
    defn = mcpclient.Definition(BINDING, transport, protocol=protocol)
    with mcpclient.connect(defn, timeout=20) as client:
        yield f"Streamable HTTP, {protocol}", client


def test_the_documented_idle_threads_are_the_threads_of_an_idle_binding(
    idle_binding: tuple[str, object],
) -> None:
    row, client = idle_binding
    assert isinstance(client, mcpclient.Client)
    expected = documented_idle_threads()[row]
    assert client.call_tool("echo", {"message": "busy once"}).text
    # Busy threads leave on their own; what stays must be exactly what the document says.
    settled = wait_until(lambda: binding_threads() == expected, IDLE_WAIT, step=0.1)
    assert settled, f"{row}: idle {sorted(binding_threads())}, documented {sorted(expected)}"
    assert process_threads() <= {"mcpclient-deadline"}, process_threads()


def test_the_document_has_a_row_for_each_transport() -> None:
    assert set(documented_idle_threads()) == {
        "stdio",
        "Streamable HTTP, 2026-07-28",
        "Streamable HTTP, 2025-11-25",
    }
