"""Which stdio backend a binding gets: the one place that builds a stdio transport.

:func:`stdio_process` builds :class:`~.stdio.StdioProcess` (the POSIX backend)
or :class:`~.stdio_portable.PortableStdioProcess` (Windows, or
``MCPCLIENT_STDIO_BACKEND=portable``), as :func:`.stdio_platform.backend`
decides; both are a ``StdioProcess``. Pure: no thread, no lock, nothing to
shut down.
"""

from __future__ import annotations

from typing import Any

from mcpclient._internal.transport.stdio import StdioProcess
from mcpclient._internal.transport.stdio_platform import backend
from mcpclient._internal.transport.stdio_portable import PortableStdioProcess

__all__ = ["stdio_process"]


def stdio_process(**kwargs: Any) -> StdioProcess:
    """A stdio transport (not started) of this platform's backend; ``StdioProcess``'s keywords.

    Raises:
        ConfigError: ``MCPCLIENT_STDIO_BACKEND`` names no backend, or an argument
            is invalid (as :class:`~.stdio.StdioProcess` says).
    """
    kind = PortableStdioProcess if backend() == "portable" else StdioProcess
    return kind(**kwargs)
