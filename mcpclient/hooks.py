"""Call hooks: approve, change, observe or replace every tool call.

One :class:`CallHooks` value holds three chains of plain synchronous
callables, run in order around each ``call_tool`` and ``submit_tool_call`` of a
:class:`~mcpclient.Client` (``connect(..., hooks=...)``) or a
:class:`~mcpclient.Host` (``Host(..., hooks=...)``):

- ``before(info) -> Decision | None``: ``None`` or :meth:`Decision.allow`
  lets the call go on; :meth:`Decision.deny` stops it (the call raises
  :class:`~mcpclient.errors.CallDeniedError`; ``run_tool_calls`` turns it into
  an error result for the model); :meth:`Decision.replace` changes the
  arguments the next hook and the server see (checked against the schema again).
- ``after(info, result) -> ToolResult | None``: ``None`` keeps the result,
  a :class:`~mcpclient.ToolResult` replaces it.
- ``on_error(info, error) -> None``: sees a call's classified error; the
  error is raised after the chain.

A hook that raises (or returns a wrong type) fails the call with
:class:`~mcpclient.errors.HookFailedError` (its exception as ``__cause__``);
nothing is swallowed. When an ``on_error`` hook raises, the call's own
error is the ``__context__`` of that hook's exception (the ``__cause__``).

Tool annotations reach hooks in :attr:`CallInfo.annotations`. The
specification warns that clients must treat them as untrusted unless they
come from a trusted server: :attr:`CallInfo.hints_trusted` is always False
here; a policy that relies on ``read_only_hint`` trusts the server.

Example:
    >>> from mcpclient.hooks import CallHooks, Decision
    >>> hooks = CallHooks(before=(lambda info: Decision.deny("no writes")
    ...                           if info.tool == "write" else None,))
    >>> len(hooks.before)
    1
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs

from mcpclient.catalog import ToolAnnotations
from mcpclient.content import ToolResult

__all__ = ["AfterHook", "BeforeHook", "CallHooks", "CallInfo", "Decision", "ErrorHook"]


@attrs.frozen(kw_only=True)
class CallInfo:
    """What a hook sees of one tool call.

    ``binding``: the binding's name; ``tool``: the server's raw tool name;
    ``model_name``: the host-level name when the call came through a
    :class:`~mcpclient.Host` (else None); ``arguments``: the arguments as they
    stand at this hook (after earlier replacements); ``annotations``: the
    server's hints (None when it sent none); ``hints_trusted``: always False
    (annotations are untrusted hints, per the specification).
    """

    binding: str
    tool: str
    model_name: str | None
    arguments: Mapping[str, Any]
    annotations: ToolAnnotations | None
    hints_trusted: bool = False


@attrs.frozen
class Decision:
    """A ``before`` hook's answer: allow, deny with a reason, or replace the arguments."""

    action: Literal["allow", "deny", "replace"]
    reason: str = ""
    arguments: Mapping[str, Any] | None = None

    @classmethod
    def allow(cls) -> Decision:
        """Let the call go on unchanged."""
        return cls("allow")

    @classmethod
    def deny(cls, reason: str) -> Decision:
        """Stop the call; ``reason`` goes into the error (and to the model)."""
        return cls("deny", reason=str(reason))

    @classmethod
    def replace(cls, arguments: Mapping[str, Any]) -> Decision:
        """Go on with these arguments instead."""
        return cls("replace", arguments=dict(arguments))


BeforeHook = Callable[[CallInfo], "Decision | None"]
AfterHook = Callable[[CallInfo, ToolResult], "ToolResult | None"]
ErrorHook = Callable[[CallInfo, BaseException], None]


def _callables(value: Any) -> tuple[Any, ...]:
    items = tuple(value)
    for item in items:
        if not callable(item):
            raise TypeError(f"a call hook must be callable, not {type(item).__name__}")
    return items


@attrs.frozen
class CallHooks:
    """The hook chains run around every tool call, each in order (see the module doc)."""

    before: tuple[BeforeHook, ...] = attrs.field(default=(), converter=_callables)
    after: tuple[AfterHook, ...] = attrs.field(default=(), converter=_callables)
    on_error: tuple[ErrorHook, ...] = attrs.field(default=(), converter=_callables)
