"""tests/unit/ opens no socket and starts no process: each test runs with both refused.

A test that needs a real peer, a loopback server or a child process belongs in
tests/integration/. The guard refuses connecting, binding and listening on a
socket, name resolution, and starting a process (``subprocess`` or a fork), so a
unit test that strays fails with a message naming the rule. Since no unit
test can start a process, the suite's leak guard skips its child-process scan
here (it still checks threads).
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from typing import Any, NoReturn

import pytest

RULE = "tests/unit/ opens no socket and starts no process; move this test to tests/integration/"


def _refuse(what: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> NoReturn:
        raise AssertionError(f"{what}: {RULE}")

    return refuse


@pytest.fixture
def leak_scan_processes() -> bool:
    """No child-process scan in tests/unit/: the guard below refuses every way to start one."""
    return False


@pytest.fixture(autouse=True)
def _no_sockets_no_processes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("connect", "connect_ex", "bind", "listen"):
        monkeypatch.setattr(socket.socket, name, _refuse(f"socket.{name}"))
    monkeypatch.setattr(socket, "getaddrinfo", _refuse("socket.getaddrinfo"))
    monkeypatch.setattr(subprocess.Popen, "__init__", _refuse("subprocess.Popen"))
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, _refuse(f"os.{name}"))
    yield
