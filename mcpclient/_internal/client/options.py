"""The public methods' argument checks: ``connect()``'s, and the call options.

Every call method takes ``opts=CallOpts(...)`` or, for the common cases, the
keywords ``timeout=``, ``progress=`` and ``cancel=``. Both at once is refused:
which one would win is not obvious, so neither does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcpclient.calls import CallOpts, CancelToken
from mcpclient.definition import Definition
from mcpclient.errors import ConfigError
from mcpclient.handlers import Handlers

if TYPE_CHECKING:
    from mcpclient.handlers import Progress

__all__ = ["connect_arguments", "options_of"]

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


def connect_arguments(definition: Any, handlers: Any, timeout: Any) -> tuple[Handlers, float]:
    """``connect()``'s arguments checked: its handlers and its startup budget in seconds.

    Raises:
        ConfigError: not a ``Definition`` (or an invalid one), not a
            ``Handlers``, a bad ``timeout``, or a capability requested whose
            handler is not installed.
    """
    if not isinstance(definition, Definition):
        raise ConfigError("connect() needs a Definition", op="connect")
    handlers = Handlers() if handlers is None else handlers
    if not isinstance(handlers, Handlers):
        raise ConfigError("connect() handlers must be a Handlers value", op="connect")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
    ):
        raise ConfigError("connect() timeout must be a positive number of seconds", op="connect")
    definition.validate()
    caps = definition.capabilities
    for capability, handler in (
        ("elicitation", handlers.elicitation),
        ("sampling", handlers.sampling),
        ("roots", handlers.roots),
    ):
        if getattr(caps, capability) and handler is None:
            raise ConfigError(
                f"Definition.capabilities.{capability} is requested but Handlers.{capability}"
                " is not installed",
                binding=definition.name,
                op="connect",
            )
    startup = definition.timeouts.startup
    return handlers, startup if timeout is None else min(timeout, startup)
