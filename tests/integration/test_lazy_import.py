"""The package imports its public names on first use: measured from fresh interpreters.

``mcpclient/__init__.py`` resolves each name lazily (PEP 562). These tests start a new
interpreter each, so what an import loads is seen from nothing loaded.
"""

from __future__ import annotations

import subprocess
import sys


def _fresh(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return out.stdout.split()


def test_importing_the_package_or_the_testing_server_loads_no_client() -> None:
    # the testing server is started thousands of times by this suite (and by hosts'
    # own tests): it must not pay for importing the client it is a peer of
    probe = "import sys, {0}; print(*(m for m in sys.modules if m.startswith('mcpclient')))"
    for target in ("mcpclient", "mcpclient.testing.server"):
        loaded = _fresh(probe.format(target))
        assert target in loaded  # the probe sees what it imported
        assert not any("mcpclient.client" in name for name in loaded), (target, loaded)
        assert not any("_internal.client" in name for name in loaded), (target, loaded)
    # and a stdio testing server does not load its HTTP front either
    assert "mcpclient.testing.http_server" not in loaded
    assert "mcpclient.testing.oauth_guard" not in loaded


def test_first_use_from_many_threads_at_once_gets_one_object() -> None:
    code = (
        "import threading, mcpclient\n"
        "seen = []\n"
        "gate = threading.Barrier(8)\n"
        "def use():\n"
        "    gate.wait()\n"
        "    seen.append((mcpclient.Client, mcpclient.connect, mcpclient.Host))\n"
        "threads = [threading.Thread(target=use) for _ in range(8)]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "print(len(seen), len(set(seen)))\n"
    )
    assert _fresh(code) == ["8", "1"]
