"""The call hook chain: ``before`` / ``after`` / ``on_error`` around one tool call.

Threads:
    None of its own: every hook of a blocking ``call_tool`` runs on its
    caller's thread; of a submitted call, ``before`` on the submitter's
    thread and ``after``/``on_error`` where its done-callbacks run (the
    binding's event lane).

Locks:
    None: the chain holds no state; a ``CallHooks`` value is frozen.

Shutdown:
    Nothing to shut down.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
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


def _info(
    binding: str,
    tool: str,
    model_name: str | None,
    arguments: Mapping[str, Any] | None,
    annotations: ToolAnnotations | None,
) -> CallInfo:
    return CallInfo(
        binding=binding,
        tool=tool,
        model_name=model_name,
        arguments=dict(arguments or {}),
        annotations=annotations,
    )


def run_before(hooks: CallHooks, info: CallInfo) -> CallInfo:
    """The ``before`` chain: the call's info with the arguments it is sent with.

    Raises:
        CallDeniedError: a hook denied the call (nothing sent).
        HookFailedError: a hook raised or returned a wrong type.
    """
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
                f"call to {info.tool!r} denied: {decision.reason}"[:1000],
                binding=info.binding,
                op="call_tool",
            )
        info = attrs.evolve(info, arguments=dict(decision.arguments or {}))
    return info


def run_on_error(hooks: CallHooks, info: CallInfo, exc: Error) -> None:
    """The ``on_error`` chain; the caller raises ``exc`` afterwards.

    Raises:
        HookFailedError: a hook raised (``exc`` is its exception's ``__context__``).
    """
    for error_hook in hooks.on_error:
        try:
            error_hook(info, exc)
        except Exception as hook_exc:
            # Never swallowed: the call's error is hook_exc's __context__.
            raise _failed("on_error", error_hook, hook_exc, info) from hook_exc


def run_after(hooks: CallHooks, info: CallInfo, result: ToolResult) -> ToolResult:
    """The ``after`` chain: the result, as the hooks left it.

    Raises:
        HookFailedError: a hook raised or returned a wrong type.
    """
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
    info = run_before(hooks, _info(binding, tool, model_name, arguments, annotations))
    try:
        result = call(info.arguments)
    except Error as exc:
        run_on_error(hooks, info, exc)
        raise
    return run_after(hooks, info, result)


def submit_hooked(
    hooks: CallHooks,
    *,
    binding: str,
    tool: str,
    model_name: str | None,
    arguments: Mapping[str, Any] | None,
    annotations: ToolAnnotations | None,
    submit: Callable[[Mapping[str, Any]], concurrent.futures.Future[ToolResult]],
) -> concurrent.futures.Future[ToolResult]:
    """``submit`` inside ``hooks``: ``before`` now, ``after``/``on_error`` as the call ends.

    The ``before`` chain runs on the caller's thread (a denial raises here,
    like any local refusal); the others run where the submitted call's
    done-callbacks do (the binding's event lane, never the reader), and the
    Future returned completes after them. Cancelling it cancels the call.

    Raises:
        CallDeniedError: a ``before`` hook denied the call (nothing queued).
        HookFailedError: a ``before`` hook raised or returned a wrong type.
    """
    info = run_before(hooks, _info(binding, tool, model_name, arguments, annotations))
    inner = submit(info.arguments)
    if not (hooks.after or hooks.on_error):
        return inner
    outer = _Hooked(inner)

    def ended(done: concurrent.futures.Future[ToolResult]) -> None:
        if done.cancelled():
            outer.cancel()
            return
        # The caller may have cancelled ``outer`` meanwhile: then nothing to settle.
        with contextlib.suppress(concurrent.futures.InvalidStateError):
            exc = done.exception()
            try:
                if exc is None:
                    result = run_after(hooks, info, done.result())
                elif isinstance(exc, Error):
                    run_on_error(hooks, info, exc)
            except HookFailedError as failed:
                outer.set_exception(failed)
                return
            if exc is None:
                outer.set_result(result)
            else:
                outer.set_exception(exc)

    inner.add_done_callback(ended)
    return outer


class _Hooked(concurrent.futures.Future[ToolResult]):
    """The Future of a hooked submission: settled after the hooks; its cancel reaches the call."""

    def __init__(self, inner: concurrent.futures.Future[ToolResult]) -> None:
        super().__init__()
        self._inner = inner

    def cancel(self) -> bool:
        """Cancel the call (unsent if still queued, else on the wire)."""
        if not super().cancel():
            return False
        self._inner.cancel()
        return True
