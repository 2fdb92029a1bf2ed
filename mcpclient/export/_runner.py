"""Running a model's tool calls: all at once, under one deadline, never raising for a tool.

Threads:
    None when the target has ``submit_tool_call`` (a ``Client``): each call is
    a future the binding resolves, and the caller's thread only waits. A
    target with ``call_tool`` alone gets a short-lived pool of at most 8
    ``mcpclient-toolcall`` threads, shut down before this returns.

Locks:
    None: the futures carry the results.

Shutdown:
    Calls still running when the deadline passes are cancelled (on the wire,
    for a ``Client``) and reported to the model as timed out.
"""

from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, Protocol

from mcpclient._core.deadline import now
from mcpclient.content import ToolResult
from mcpclient.errors import (
    ConfigError,
    DeadlineExceededError,
    Error,
    HookFailedError,
    InvalidArgumentsError,
    RequestCancelledError,
    ToolUnavailableError,
)
from mcpclient.export._budget import ResultBudget, apply_budget, check_budget
from mcpclient.export._calls import check_provider, find_tool_calls
from mcpclient.export._meta import LoadedTools, answer_meta_call, is_meta_call
from mcpclient.export._results import Outcome, shape_results
from mcpclient.export._sources import names_for, tool_specs
from mcpclient.export._values import OPENAI_CHAT, OPENAI_RESPONSES
from mcpclient.hooks import CallInfo, Decision

__all__ = ["ToolTarget", "run_tool_calls"]

_log = logging.getLogger(__name__)
_OP = "run_tool_calls"
#: How long past the deadline to wait for a call the target should have ended itself.
_GRACE = 0.25
_MAX_POOL = 8
_MAX_NULL_DEPTH = 32
#: Calls run from one response; any past it get an error result, unsent.
MAX_CALLS = 128


class ToolTarget(Protocol):
    """What :func:`run_tool_calls` needs: a catalog and a way to call a tool.

    A :class:`~mcpclient.Client` is one (it is called by each tool's raw
    name); so is a ``Host`` (called by model name; see ``call_by``).
    ``catalog()`` returns a ``Catalog`` or anything with a ``tools`` sequence
    of ``ToolSpec``. If the target also has ``submit_tool_call`` with the same
    arguments, returning a future, the calls run on it without extra threads.
    """

    def catalog(self) -> Any:
        """The tools the model was shown."""

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        /,
        *,
        timeout: float | None = None,
    ) -> ToolResult:
        """Call one tool; a tool error is a ``ToolResult(is_error=True)``."""


def _check_timeout(timeout: Any) -> float | None:
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise ConfigError("run_tool_calls() timeout must be a positive number of seconds", op=_OP)
    return float(timeout)


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, InvalidArgumentsError):
        return f"invalid arguments: {exc.message}"
    if isinstance(exc, ToolUnavailableError):
        return f"the tool is not available: {exc.message}"
    if isinstance(exc, DeadlineExceededError):
        return f"the tool call did not finish in time: {exc.message}"
    if isinstance(exc, RequestCancelledError):
        return "the tool call was cancelled"
    if isinstance(exc, Error):
        return f"the tool call failed ({exc.failure_class}): {exc.message}"
    return f"the tool call failed: {type(exc).__name__}"


def _allows_null(schema: Any) -> bool:
    if not isinstance(schema, Mapping) or not schema or "$ref" in schema:
        return True  # any value, or one we cannot see from here
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if schema.get("nullable") is True or ("const" in schema and schema["const"] is None):
        return True
    if isinstance(schema.get("enum"), list) and None in schema["enum"]:
        return True
    branches = [b for key in ("anyOf", "oneOf") for b in schema.get(key) or ()]
    if branches:
        return any(_allows_null(b) for b in branches)
    return kind is None and "enum" not in schema and "const" not in schema


def drop_injected_nulls(schema: Any, arguments: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """``arguments`` without the nulls strict mode made the model send for optional keys.

    A null is dropped only where the original schema marks the key optional
    and does not accept null, so a null the tool accepts is kept.
    """
    if depth > _MAX_NULL_DEPTH or not isinstance(schema, Mapping):
        return arguments
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return arguments
    required = schema.get("required")
    required = required if isinstance(required, list) else []
    out: dict[str, Any] = {}
    for key, given in arguments.items():
        sub = props.get(key)
        if given is None and key not in required and sub is not None and not _allows_null(sub):
            continue
        value = given
        if isinstance(given, dict) and isinstance(sub, Mapping):
            value = drop_injected_nulls(sub, given, depth + 1)
        elif isinstance(given, list) and isinstance(sub, Mapping):
            items = sub.get("items")
            if isinstance(items, Mapping):
                value = [
                    drop_injected_nulls(items, v, depth + 1) if isinstance(v, dict) else v
                    for v in given
                ]
        out[key] = value
    return out


def run_tool_calls(
    target: ToolTarget,
    response: Any,
    *,
    provider: str,
    timeout: float | None = None,
    call_by: str | None = None,
    approve: Callable[[CallInfo], Decision | None] | None = None,
    budget: ResultBudget | None = None,
    full_results: MutableMapping[str, ToolResult] | None = None,
    loaded: LoadedTools | None = None,
) -> list[dict[str, Any]]:
    """Run the tool calls in a provider's ``response`` and return the result messages.

    The calls run concurrently, under ONE deadline (``timeout`` seconds from
    now; ``None``: each call's own default). Whatever goes wrong with a call
    (a tool error, arguments that fail the schema or are not JSON, a name the
    catalog lacks, the deadline) becomes an error result the model can read;
    no tool's failure raises. The names are those the exporters gave; the
    result messages are in the order of the calls (see ``_results`` for each
    provider's shape), ready to append to the conversation.

    Example:
        >>> tools = to_openai_chat(client).tools
        >>> reply = openai.chat.completions.create(..., tools=tools)   # doctest: +SKIP
        >>> messages += run_tool_calls(client, reply, provider="openai_chat")   # doctest: +SKIP

    Args:
        target: a ``Client`` or any :class:`ToolTarget`.
        response: the provider's response (a dict, or an SDK object with
            ``model_dump()``), or just its message / output list / content.
        provider: one of ``mcpclient.export.PROVIDERS``.
        timeout: seconds for all the calls together.
        call_by: the ``ToolSpec`` attribute whose value ``target.call_tool``
            takes: ``"raw_name"`` (a ``Client``) or ``"model_name"`` (a
            ``Host``). ``None``: ``"raw_name"`` when the target's catalog is one
            binding's (its ``binding`` is set, as a ``Client``'s is), else
            ``"model_name"`` (an aggregate, or a plain list of tools).
        approve: a ``before`` hook (:mod:`mcpclient.hooks`) asked for each
            call before it starts: ``None`` or ``Decision.allow()`` runs it,
            ``Decision.replace(args)`` runs it with those arguments,
            ``Decision.deny(reason)`` makes it an error result saying it was
            denied and why (the model can react; nothing raises). An
            ``approve`` that raises gives a ``hook_failed`` error result.
            ``mcpclient.config.approval_policy`` builds one from host configs.
        budget: a :class:`ResultBudget`: each result over it is cut to its
            head and tail (with a note saying what was cut and where the rest
            is) and its media passed, described or dropped by its policy.
            ``None``: results are sent whole.
        full_results: a mapping (e.g. a ``dict``) that gets, for each result
            the budget changed, the whole ``ToolResult`` under its call id
            (the tool's name for a Gemini call without an id).
        loaded: for a response to an export with ``mode="search"``, the
            :class:`LoadedTools` it was exported with: the meta-calls
            (``search_tools``, ``load_tools``) are answered here, without the
            target being called, and take precedence over a catalog tool of
            the same name. Without it they are answered only where the
            catalog has no tool of that name. The next turn's value is
            ``loaded.after(target, response, provider=...)``.

    Thread safety: safe from any thread; each call runs as the target allows.

    Raises:
        ConfigError: an unknown ``provider``, a bad ``timeout``, ``call_by``,
            ``budget`` or ``loaded``, or a ``response`` not shaped like that
            provider's.
    """
    provider = check_provider(provider)
    budget = check_budget(budget)
    seconds = _check_timeout(timeout)
    if call_by not in (None, "raw_name", "model_name"):
        raise ConfigError('call_by must be "raw_name", "model_name" or None', op=_OP)
    if loaded is not None and not isinstance(loaded, LoadedTools):
        raise ConfigError("run_tool_calls() loaded must be a LoadedTools or None", op=_OP)
    calls = find_tool_calls(response, provider)
    if not calls:
        return []
    deadline = None if seconds is None else now() + seconds
    catalog = target.catalog()
    names = names_for(provider, tool_specs(catalog, _OP))
    by_model = getattr(catalog, "tool_by_model_name", None)
    if call_by is None:
        call_by = "raw_name" if getattr(catalog, "binding", "") else "model_name"
    outcomes: list[Outcome | None] = [None] * len(calls)
    pending: dict[concurrent.futures.Future[ToolResult], int] = {}
    submit: Callable[..., concurrent.futures.Future[ToolResult]] | None = getattr(
        target, "submit_tool_call", None
    )
    pool: concurrent.futures.ThreadPoolExecutor | None = None
    finished = False
    try:
        for index, call in enumerate(calls):
            if index >= MAX_CALLS:
                outcomes[index] = f"not run: more than {MAX_CALLS} tool calls in one response"
                continue
            if call.problem or call.arguments is None:
                outcomes[index] = call.problem or "the arguments could not be read"
                continue
            if is_meta_call(call.name, names, loaded):  # search mode: answered here
                outcomes[index] = answer_meta_call(target, call, names)
                continue
            spec = names.get(call.name)
            if spec is None and callable(by_model):
                spec = by_model(call.name)
            if spec is not None and not spec.model_visible:
                spec = None  # an MCP Apps tool only a view may call
            if spec is None:
                outcomes[index] = f"unknown tool {call.name!r}"
                continue
            arguments: dict[str, Any] = call.arguments
            if provider in (OPENAI_CHAT, OPENAI_RESPONSES):
                arguments = drop_injected_nulls(spec.input_schema, arguments)
            remaining = None if deadline is None else deadline - now()
            if remaining is not None and remaining <= 0:
                outcomes[index] = "the tool call did not start: the deadline had passed"
                continue
            if approve is not None:
                verdict = _approved(approve, target, catalog, spec, arguments)
                if isinstance(verdict, str):
                    outcomes[index] = verdict
                    continue
                arguments = dict(verdict)
            name = getattr(spec, call_by)
            try:
                if callable(submit):
                    future = submit(name, arguments, timeout=remaining)
                else:
                    if pool is None:
                        pool = concurrent.futures.ThreadPoolExecutor(
                            min(_MAX_POOL, len(calls)), thread_name_prefix="mcpclient-toolcall"
                        )
                    future = pool.submit(target.call_tool, name, arguments, timeout=remaining)
            except Error as exc:
                outcomes[index] = _error_text(exc)
                continue
            pending[future] = index
        finished = _collect(pending, outcomes, deadline)
    finally:
        if pool is not None:
            # Join the workers when every call ended; one still running past
            # the deadline (the target ignores its timeout) is not waited for.
            pool.shutdown(wait=finished, cancel_futures=True)
    done = [(c, "no result" if o is None else o) for c, o in zip(calls, outcomes, strict=True)]
    return shape_results(provider, apply_budget(provider, done, budget, full_results))


def _approved(
    approve: Callable[[CallInfo], Decision | None],
    target: Any,
    catalog: Any,
    spec: Any,
    arguments: Mapping[str, Any],
) -> Mapping[str, Any] | str:
    """The arguments to run the call with, or the error text when it may not run."""
    binding = str(getattr(catalog, "binding", "") or "")
    route = getattr(target, "route", None)
    if not binding and callable(route):
        try:  # a Host: the server that has the tool
            binding = str(route(spec.model_name)[0])
        except Error:
            binding = ""
    info = CallInfo(
        binding=binding,
        tool=spec.raw_name,
        model_name=spec.model_name,
        arguments=dict(arguments),
        annotations=spec.annotations,
    )
    try:
        decision: Any = approve(info)
    except Exception as exc:
        _log.warning("the approve hook raised %s", type(exc).__name__, exc_info=True)
        failed = HookFailedError(
            f"the approval hook failed ({type(exc).__name__}); the call was not run", op=_OP
        )
        return _error_text(failed)
    if decision is None or (isinstance(decision, Decision) and decision.action == "allow"):
        return arguments
    if not isinstance(decision, Decision):
        return _error_text(
            HookFailedError("the approval hook returned a wrong type; the call was not run", op=_OP)
        )
    if decision.action == "deny":
        return f"the call was denied and not run: {decision.reason or 'no reason given'}"
    return dict(decision.arguments or {})


def _collect(
    pending: dict[concurrent.futures.Future[ToolResult], int],
    outcomes: list[Outcome | None],
    deadline: float | None,
) -> bool:
    """Wait for the futures until the deadline (and a little grace), then cancel the rest.

    Returns whether every call ended.
    """
    if not pending:
        return True
    wait = None if deadline is None else max(0.0, deadline - now()) + _GRACE
    done, late = concurrent.futures.wait(list(pending), timeout=wait)
    for future in late:
        future.cancel()
        outcomes[pending[future]] = "the tool call did not finish in time and was cancelled"
    for future in done:
        index = pending[future]
        try:
            outcomes[index] = future.result(timeout=0)
        except concurrent.futures.CancelledError:
            outcomes[index] = "the tool call was cancelled"
        except Error as exc:
            outcomes[index] = _error_text(exc)
        except Exception as exc:  # a target's own bug must not lose the other results
            _log.warning("a tool call raised %s", type(exc).__name__, exc_info=True)
            outcomes[index] = _error_text(exc)
    return not late
