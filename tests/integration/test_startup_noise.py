"""A stdio server that writes non-JSON to stdout: the startup error says so (issue 28)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import mcpclient
from tests.support.servers import REPO_ROOT

# A banner and a print() left in, then silence: what a misconfigured server does.
BANNER = """\
import sys, time
print("Starting server v1.2 on stdio...\\x1b[31m" + "x" * 200, flush=True)
print("debug: loaded 3 tools", flush=True)
sys.stdin.readline()
time.sleep(60)
"""


@pytest.fixture
def banner(tmp_path: Path) -> str:
    path = tmp_path / "banner_server.py"
    path.write_text(BANNER)
    return str(path)


def test_the_startup_error_quotes_the_first_bytes_and_counts_the_lines(banner: str) -> None:
    definition = mcpclient.Definition(
        "banner",
        mcpclient.StdioTransport(sys.executable, [banner]),
        timeouts=mcpclient.Timeouts(startup=1.5),
    )
    with pytest.raises(mcpclient.DeadlineExceededError) as info:
        mcpclient.connect(definition)
    message = info.value.message
    assert message.startswith("startup did not finish within 1.5 s: no answer to ")
    assert "the server wrote 2 lines that are not JSON-RPC (dropped)" in message
    # bounded and escaped: the escape sequence is shown, not sent to a terminal
    assert "the first began 'Starting server v1.2 on stdio...\\x1b[31mxxx" in message
    assert "\x1b" not in message
    assert "x" * 100 not in message


def test_the_cli_shows_the_librarys_warnings_and_the_cause(banner: str) -> None:
    words = ["--json", "--timeout", "2", "list", "--", sys.executable, banner]
    proc = subprocess.run(
        [sys.executable, "-m", "mcpclient", *words],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT)},
        timeout=60,
        check=False,
    )
    assert proc.returncode == 4, proc.stderr
    assert "warning: binding cli: dropped a malformed frame" in proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert "not JSON-RPC" in error["message"] and "Starting server" in error["message"]
