"""``python -m mcpclient``: the ``mcpclient`` command (see docs/cli.md).

``python -m mcpclient demo`` starts the bundled scriptable server as a child
process, connects to it over stdio, prints the catalog, and calls a tool that
reports progress. It needs nothing but this package.
"""

from __future__ import annotations

import sys

from mcpclient.cli import main

if __name__ == "__main__":
    sys.exit(main())
