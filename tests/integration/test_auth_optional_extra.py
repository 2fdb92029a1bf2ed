"""The package without the ``oauth`` extra, in a child interpreter that cannot import it.

It starts a process, so it lives with the integration tests (tests/unit/ starts none).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_without_the_oauth_extra_the_package_imports_and_oauth_explains() -> None:
    script = textwrap.dedent(
        """
        import sys

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("jwt", "cryptography"):
                    raise ImportError("blocked: " + name)
                return None

        sys.meta_path.insert(0, Block())
        import mcpclient
        import mcpclient.auth
        from mcpclient.auth import OAuth, MemoryTokenStore, TokenSet
        MemoryTokenStore()
        try:
            OAuth()
        except mcpclient.ConfigError as exc:
            print("CONFIG", exc)
        else:
            print("NO ERROR")
        extra = ("jwt", "cryptography")
        print("LOADED", sorted(m for m in sys.modules if m.split(".")[0] in extra))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "CONFIG" in done.stdout and "mcpclient[oauth]" in done.stdout
    assert "LOADED []" in done.stdout
