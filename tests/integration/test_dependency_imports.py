"""mcpclient imports no dependency it does not declare (README "Dependencies").

sseclient-py was replaced by our own bounded SSE parser
(``mcpclient._internal.transport.sse``); importing every mcpclient module, the
HTTP transports and the SSE reader included, must not load it, even when it is
installed in the same environment. A fresh interpreter is used so that nothing
the test session imported earlier can hide or fake the answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from .engine_support import REPO_ROOT

# Every module of the package except ``__main__`` (importing it runs the CLI),
# then the names of the modules loaded and of those that failed to import.
_PROBE = textwrap.dedent(
    """
    import importlib, json, pkgutil, sys
    import mcpclient
    names, failed = [], []
    for info in pkgutil.walk_packages(mcpclient.__path__, "mcpclient."):
        if info.name.split(".")[-1] == "__main__":
            continue
        try:
            importlib.import_module(info.name)
        except ImportError as exc:
            failed.append(f"{info.name}: {exc}")
        names.append(info.name)
    print(json.dumps({"imported": names, "failed": failed, "modules": sorted(sys.modules)}))
    """
)


def _probe() -> dict[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=str(REPO_ROOT),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_sseclient_is_never_imported() -> None:
    found = _probe()
    # The probe reached the HTTP stack: the SSE reader and both HTTP transports.
    for module in (
        "mcpclient._internal.transport.sse",
        "mcpclient._internal.transport.http",
        "mcpclient._internal.transport.streamable_http",
    ):
        assert module in found["modules"], module
    assert found["failed"] == []
    loaded = [m for m in found["modules"] if m == "sseclient" or m.startswith("sseclient.")]
    assert loaded == [], f"mcpclient imported sseclient-py: {loaded}"
