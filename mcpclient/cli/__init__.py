"""The ``mcpclient`` command line (console script ``mcpclient``, and ``python -m mcpclient``).

It uses the standard library only (argparse), so ``pip install mcpclient``
alone runs every command. The reference is docs/cli.md.
"""

from __future__ import annotations

from mcpclient.cli.main import main

__all__ = ["main"]
