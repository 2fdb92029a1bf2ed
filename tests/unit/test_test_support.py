"""The test suite's own rules: shared helpers live once, in tests/support/; unit tests stay offline.

Reads the test sources (no import, no socket, no process): a module that grows its
own wait helper, event recorder or in-process HTTP server again fails here with
the helper to use instead.
"""

from __future__ import annotations

import ast
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ..support.sources import parsed_file

TESTS = Path(__file__).resolve().parents[1]
SUPPORT = TESTS / "support"
#: Names of helpers that tests/support provides once (``wait_until``, ``soon``, ``Events``).
WAIT_HELPERS = {"wait_until", "wait_for", "soon", "eventually"}
RECORDER_METHODS = {"on_event", "on_progress"}
#: The stdlib server machinery only tests/support/scripted_http.py may build on.
HTTP_SERVER_NAMES = {
    "HTTPServer",
    "ThreadingHTTPServer",
    "BaseHTTPRequestHandler",
    "SimpleHTTPRequestHandler",
    "TCPServer",
    "ThreadingTCPServer",
    "BaseRequestHandler",
    "StreamRequestHandler",
}


def _modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if SUPPORT not in p.parents)


def _name(node: ast.expr) -> str | None:
    """The last name of ``Name`` or ``a.b.Name`` (``None`` for anything else)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _http_servers(tree: ast.Module) -> list[str]:
    """In-process HTTP servers anywhere in a module: stdlib server or handler subclasses, uses."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = {_name(base) for base in node.bases} & HTTP_SERVER_NAMES
            if bases:
                found.append(
                    f"class {node.name}({', '.join(sorted(b for b in bases if b))})"
                    " (use tests.support.scripted_http.RouteServer)"
                )
        elif isinstance(node, ast.Call) and _name(node.func) in HTTP_SERVER_NAMES:
            found.append(f"{_name(node.func)}(...) (use tests.support.scripted_http.RouteServer)")
        elif isinstance(node, ast.ImportFrom) and node.module in ("http.server", "socketserver"):
            found.append(f"from {node.module} import ... (use tests.support.scripted_http)")
    return found


def _reinvented(path: Path) -> list[str]:
    tree = parsed_file(path)
    found = _http_servers(tree)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in WAIT_HELPERS:
            shared = node.name if node.name == "soon" else "wait_until"
            found.append(f"def {node.name} (use tests.support.{shared})")
        if isinstance(node, ast.ClassDef) and not node.bases:
            methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            if node.name in ("Events", "Recorder") or methods & RECORDER_METHODS:
                found.append(f"class {node.name} (use or subclass tests.support.Events)")
    return found


def test_no_module_reinvents_the_shared_helpers() -> None:
    offenders = {
        str(path.relative_to(TESTS)): found for path in _modules() if (found := _reinvented(path))
    }
    assert offenders == {}


def test_an_in_process_http_server_is_found_anywhere_in_a_module() -> None:
    source = """
import http.server

def fixture():
    class Handler(http.server.BaseHTTPRequestHandler):
        pass

    return http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)

class Quiet(ThreadingHTTPServer):
    pass
"""
    found = _http_servers(ast.parse(source))
    assert found == [
        "class Quiet(ThreadingHTTPServer) (use tests.support.scripted_http.RouteServer)",
        "class Handler(BaseHTTPRequestHandler) (use tests.support.scripted_http.RouteServer)",
        "ThreadingHTTPServer(...) (use tests.support.scripted_http.RouteServer)",
    ]
    assert _http_servers(ast.parse("from tests.support.scripted_http import RouteServer")) == []


def test_the_unit_guard_refuses_sockets_and_processes() -> None:
    with pytest.raises(AssertionError, match="tests/integration"):
        socket.getaddrinfo("localhost", 80)
    with pytest.raises(AssertionError, match="tests/integration"):
        subprocess.run([sys.executable, "-c", "pass"], check=False)


def test_unit_tests_skip_the_leak_guards_process_scan(leak_scan_processes: bool) -> None:
    # tests/unit/conftest.py refuses every way to start a process, so the two
    # /proc scans per test the suite-wide guard makes would find nothing here.
    assert leak_scan_processes is False


def test_one_proc_scanner_serves_the_suite() -> None:
    needle = "os.listdir(" + '"/proc")'  # split, so this file does not match itself
    sources = [p for p in TESTS.rglob("*.py") if p.name != "processes.py"]
    scanners = [p for p in sources if needle in p.read_text(encoding="utf-8")]
    assert scanners == [], f"scan /proc through tests.support.processes, not in {scanners}"
