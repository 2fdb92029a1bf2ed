"""What a host starts: one :class:`Start` per enabled server, and how one is started.

Planning (:func:`plan`) happens when the host is built: it checks the
caller's arguments (a mistake there raises at once) and turns each server
into a :class:`~mcpclient.Definition`; a server whose ``definition()`` fails
becomes a failure of that server alone, reported when the host connects.
Starting (:func:`start_one`) runs on a thread of the host's startup pool and
records the outcome on the :class:`Start`; it never raises.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from typing import Any

import attrs

from mcpclient._core.deadline import for_people, now
from mcpclient.calls import CancelToken
from mcpclient.client import Client, connect
from mcpclient.definition import Definition, name_problem
from mcpclient.errors import (
    ConfigError,
    DeadlineExceededError,
    Error,
    FailureClass,
    ProtocolError,
)
from mcpclient.handlers import Handlers

__all__ = ["Plan", "Start", "plan", "start_one"]

_log = logging.getLogger(__name__)


class Start:
    """One server the host starts, and how its start ended."""

    __slots__ = ("client", "definition", "error", "handlers", "name", "token")

    def __init__(self, name: str, definition: Definition, handlers: Handlers) -> None:
        self.name = name
        self.definition = definition
        self.handlers = handlers
        #: Cancels the start (the host closing, or a required server failing).
        self.token = CancelToken()
        self.client: Client | None = None
        self.error: Error | None = None


class Plan:
    """The outcome of :func:`plan`."""

    __slots__ = ("failed", "skipped", "starts")

    def __init__(self) -> None:
        self.starts: list[Start] = []
        self.failed: dict[str, Error] = {}
        self.skipped: list[str] = []


def _bad(message: str) -> ConfigError:
    return ConfigError(message, op="Host")


def plan(
    servers: Mapping[str, Any],
    handlers: Handlers | Mapping[str, Handlers] | None,
    required: Collection[str],
) -> Plan:
    """Check the host's arguments and build each server's definition.

    Raises:
        ConfigError: an argument is malformed (not a mapping, a name that is
            not a valid binding name, a value that is neither a ``Definition``
            nor has ``definition()``, handlers for an unknown server, a
            required server that is unknown or disabled).

    The key is the binding name: a definition named otherwise is renamed,
    so the caller's key is what the tools' model names say (``mcp__<key>__``).
    """
    if not isinstance(servers, Mapping):
        raise _bad("Host servers must be a mapping of name to Definition or ServerConfig")
    if isinstance(required, str) or not all(isinstance(r, str) for r in required):
        raise _bad("Host required must be a collection of server names")
    per_server = _handlers_by_name(servers, handlers)
    result = Plan()
    for name, server in servers.items():
        if not isinstance(name, str) or not name:
            raise _bad(f"Host server names must be non-empty str, got {name!r}")
        problem = name_problem(name)
        if problem:
            raise _bad(
                f"Host server name {name!r} is its binding name (mcp__<name>__<tool>) and {problem}"
            )
        if not isinstance(server, Definition) and not callable(getattr(server, "definition", None)):
            raise _bad(
                f"Host server {name!r} must be a Definition or have definition(),"
                f" got {type(server).__name__}"
            )
        if getattr(server, "disabled", False) is True:
            if name in required:
                raise _bad(f"Host server {name!r} is required but disabled")
            result.skipped.append(name)
            continue
        try:
            definition = server if isinstance(server, Definition) else _definition_of(name, server)
        except Error as exc:
            result.failed[name] = exc
            continue
        if definition.name != name:
            definition = attrs.evolve(definition, name=name)
        result.starts.append(Start(name, definition, per_server.get(name) or Handlers()))
    unknown = sorted(set(required) - set(servers))
    if unknown:
        raise _bad(f"Host required names unknown servers: {', '.join(map(repr, unknown))}")
    return result


def _handlers_by_name(
    servers: Mapping[Any, Any], handlers: Handlers | Mapping[str, Handlers] | None
) -> dict[str, Handlers]:
    if handlers is None:
        return {}
    if isinstance(handlers, Handlers):
        return dict.fromkeys(servers, handlers)
    if not isinstance(handlers, Mapping):
        raise _bad("Host handlers must be a Handlers value or a mapping of name to Handlers")
    for name, value in handlers.items():
        if name not in servers:
            raise _bad(f"Host handlers name an unknown server {name!r}")
        if not isinstance(value, Handlers):
            raise _bad(f"Host handlers for {name!r} must be a Handlers value")
    return dict(handlers)


def _definition_of(name: str, server: Any) -> Definition:
    try:
        definition = server.definition()
    except Error:
        raise
    except Exception as exc:
        raise ConfigError(
            f"server {name!r}: definition() failed: {exc!r}", binding=name, op="Host"
        ) from exc
    if not isinstance(definition, Definition):
        raise ConfigError(
            f"server {name!r}: definition() returned {type(definition).__name__}, not a Definition",
            binding=name,
            op="Host",
        )
    return definition


def start_one(start: Start, deadline: float | None, budget: float | None) -> None:
    """Connect ``start``'s binding within ``deadline``; record the client or the error."""
    binding = str(start.definition.name)
    try:
        timeout = None
        if deadline is not None:
            timeout = deadline - now()
            if timeout <= 0:
                raise DeadlineExceededError(
                    f"startup did not finish within the host's {for_people(budget or 0.0)}",
                    failure_class=FailureClass.STARTUP_TIMEOUT,
                    binding=binding,
                    op="connect",
                )
        start.client = connect(
            start.definition, start.handlers, timeout=timeout, cancel=start.token
        )
    except Error as exc:
        start.error = exc
    except Exception as exc:
        _log.exception("unexpected startup failure of server %s", start.name)
        error = ProtocolError(f"startup failed: {exc!r}", binding=binding, op="connect")
        error.__cause__ = exc
        start.error = error
