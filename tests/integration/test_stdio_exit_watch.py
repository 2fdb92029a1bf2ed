"""The exit watch forced to the probe (what a platform with neither pidfd nor kqueue gets).

Linux has a pidfd, so the fallback only runs when the seam
(``stdio_platform.exit_watch``) is forced: a real child's exit is still seen,
and a stdio binding still closes and reaps it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import mcpclient
from mcpclient._internal.transport import stdio_group
from mcpclient._internal.transport.stdio_group import ProcessGroup
from tests.support import definition


@pytest.fixture
def probe_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stdio_group, "exit_watch", lambda **_: "probe")


@pytest.mark.usefixtures("probe_only")
def test_without_an_exit_fd_a_childs_exit_is_seen_by_probing() -> None:
    group = ProcessGroup.spawn(
        [sys.executable, "-c", "import sys; sys.stdin.readline()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={},
        cwd=None,
        binding="probe",
    )
    assert group.exit_fd is None
    assert not group.wait_exit(0.1)  # still running: it waits on stdin
    assert group._proc.stdin is not None
    group._proc.stdin.close()  # the child reads EOF and exits
    assert group.wait_exit(10.0)
    assert group.exit_description() == "exit status 0"


@pytest.mark.usefixtures("probe_only")
def test_a_binding_works_and_closes_without_an_exit_fd() -> None:
    with mcpclient.connect(definition()) as client:
        assert client.call_tool("echo", {"message": "probe"}).text == "probe"
