"""The call methods' option keywords: sugar over :class:`~mcpclient.CallOpts`.

Every call method takes ``opts=CallOpts(...)`` or, for the common cases, the
keywords ``timeout=``, ``progress=`` and ``cancel=``. Both at once is refused:
which one would win is not obvious, so neither does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mcpclient.calls import CallOpts, CancelToken
from mcpclient.errors import ConfigError

if TYPE_CHECKING:
    from mcpclient.handlers import Progress

__all__ = ["options_of"]

_NO_OPTS = CallOpts()  # the defaults, built once (values are immutable)


def options_of(
    opts: CallOpts | None,
    timeout: float | None,
    progress: Callable[[Progress], None] | None,
    cancel: CancelToken | None,
    *,
    binding: str,
    op: str,
) -> CallOpts:
    """The call's options: ``opts``, or a ``CallOpts`` of the keywords.

    Raises:
        ConfigError: ``opts`` and a keyword were both given, or a keyword's
            value is invalid (as ``CallOpts`` refuses it).
    """
    if timeout is None and progress is None and cancel is None:
        return _NO_OPTS if opts is None else opts
    if opts is not None:
        given = ", ".join(
            name
            for name, value in (("timeout", timeout), ("progress", progress), ("cancel", cancel))
            if value is not None
        )
        raise ConfigError(
            f"{op}() takes opts= or the keywords timeout=/progress=/cancel=, not both"
            f" (got opts and {given})",
            binding=binding,
            op=op,
        )
    return CallOpts(timeout=timeout, progress=progress, cancel=cancel)
