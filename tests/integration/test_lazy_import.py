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


def test_every_public_submodule_is_an_attribute_after_import_mcpclient() -> None:
    # before names were resolved on first use, `import mcpclient` imported (among others)
    # export, host and errors, so `mcpclient.export.to_openai_chat` worked: it still does
    code = (
        "import mcpclient\n"
        "print(callable(mcpclient.export.to_openai_chat), callable(mcpclient.config.load),\n"
        "      callable(mcpclient.errors.error_for), mcpclient.telemetry.__name__,\n"
        "      mcpclient.host.Host is mcpclient.Host, hasattr(mcpclient, 'no_such_module'))\n"
    )
    assert _fresh(code) == ["True", "True", "True", "mcpclient.telemetry", "True", "False"]


def test_a_submodule_missing_a_dependency_raises_that_import_error() -> None:
    # not an AttributeError that would hide the cause: the missing module is named
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'tomllib':\n"
        "            raise ModuleNotFoundError('blocked', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import mcpclient\n"
        "try:\n"
        "    mcpclient.config\n"
        "except ModuleNotFoundError as exc:\n"
        "    print('missing', exc.name)\n"
    )
    assert _fresh(code) == ["missing", "tomllib"]
