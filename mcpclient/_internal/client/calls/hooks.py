"""The call hook chain: ``before`` / ``after`` / ``on_error`` around one tool call.

Threads:
    None of its own: every hook runs on the thread that makes the call
    (a blocking ``call_tool``'s caller).

Locks:
    None: the chain holds no state; a ``CallHooks`` value is frozen.

Shutdown:
    Nothing to shut down.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from mcpclient.catalog import ToolAnnotations
from mcpclient.content import ToolResult
from mcpclient.errors import CallDeniedError, Error, HookFailedError
from mcpclient.hooks import CallHooks, CallInfo, Decision


def _failed(stage: str, hook: Any, exc: BaseException | None, info: CallInfo) -> HookFailedError:
    name = getattr(hook, "__qualname__", type(hook).__name__)
    detail = f"{type(exc).__name__}: {exc}" if exc is not None else "a wrong return type"
    return HookFailedError(
        f"the {stage} hook {name} failed ({detail})"[:500], binding=info.binding, op="call_tool"
    )


def run_hooked(
    hooks: CallHooks,
    *,
    binding: str,
    tool: str,
    model_name: str | None,
    arguments: Mapping[str, Any] | None,
    annotations: ToolAnnotations | None,
    call: Callable[[Mapping[str, Any]], ToolResult],
) -> ToolResult:
    """Run ``call`` with the (possibly replaced) arguments inside ``hooks``.

    Raises:
        CallDeniedError: a ``before`` hook denied the call (nothing sent).
        HookFailedError: a hook raised or returned a wrong type.
        Error: the call's own error (after the ``on_error`` hooks saw it).
    """
    info = CallInfo(
        binding=binding,
        tool=tool,
        model_name=model_name,
        arguments=dict(arguments or {}),
        annotations=annotations,
    )
    for hook in hooks.before:
        try:
            decision: Any = hook(info)
        except Exception as exc:
            raise _failed("before", hook, exc, info) from exc
        if decision is None or (isinstance(decision, Decision) and decision.action == "allow"):
            continue
        if not isinstance(decision, Decision):
            raise _failed("before", hook, None, info)
        if decision.action == "deny":
            raise CallDeniedError(
                f"call to {tool!r} denied: {decision.reason}"[:1000],
                binding=binding,
                op="call_tool",
            )
        info = attrs.evolve(info, arguments=dict(decision.arguments or {}))
    try:
        result = call(info.arguments)
    except Error as exc:
        for error_hook in hooks.on_error:
            try:
                error_hook(info, exc)
            except Exception as hook_exc:
                # Never swallowed: the call's error is hook_exc's __context__.
                raise _failed("on_error", error_hook, hook_exc, info) from hook_exc
        raise
    for after_hook in hooks.after:
        try:
            replaced: Any = after_hook(info, result)
        except Exception as exc:
            raise _failed("after", after_hook, exc, info) from exc
        if replaced is None:
            continue
        if not isinstance(replaced, ToolResult):
            raise _failed("after", after_hook, None, info)
        result = replaced
    return result
