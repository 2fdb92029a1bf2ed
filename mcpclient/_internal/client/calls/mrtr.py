"""One request and, on a modern server, its multi round-trip rounds (MRTR).

A 2026-07-28 server may answer ``tools/call``, ``prompts/get`` or
``resources/read`` with ``resultType: "input_required"``: a set of
``inputRequests`` (elicitation, sampling, roots) and/or an opaque
``requestState``. Each entry is served by the host's handlers exactly as a
legacy server-to-client request would be; then the original request is
re-sent with a new id, ``inputResponses`` keyed like the requests, and the
``requestState`` echoed byte for byte. Rounds are bounded by
``Limits.max_input_rounds``, entries by ``max_input_requests``, and all of it
happens inside the call's one deadline. Nothing carries over to another call.

The steps (:func:`result_kind`, :func:`next_round`, :func:`round_entries`,
:func:`url_entries`, :func:`start_entry`, :func:`entry_answer`,
:func:`check_url_answer`) are shared by the blocking :func:`exchange` and a
submitted call (``submission.py``), which takes them one callback at a time.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any

from mcpclient._internal.client.inbound.interactions import Interactions, RefusedError, Serving
from mcpclient._internal.client.inbound.refusals import Served
from mcpclient._internal.client.lifecycle.connection import Connection, URLElicitationRequiredError
from mcpclient._internal.session.context import CallContext
from mcpclient._internal.wire.interactions import input_round, result_type, retry_params
from mcpclient.calls import CancelToken
from mcpclient.definition import Limits
from mcpclient.errors import FailureClass, LimitExceededError, ProtocolError, error_for

__all__ = [
    "answer_entry",
    "check_url_answer",
    "entry_answer",
    "exchange",
    "next_round",
    "result_kind",
    "round_entries",
    "start_entry",
    "url_entries",
]

MRTR_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})


def exchange(
    conn: Connection,
    method: str,
    params: dict[str, Any] | None,
    ctx: CallContext,
    *,
    interactions: Interactions,
    limits: Limits,
    first: Callable[[], Any] | None = None,
    accept_task: bool = False,
) -> Any:
    """Send ``method`` and follow its MRTR rounds; return the complete result.

    ``accept_task``: a ``tools/call`` that declared the tasks extension may
    be answered ``resultType: "task"`` (returned as is, for the caller to drive).

    ``ctx``: the call's one context; every round is sent with it (the same
    deadline, cancel token and headers), only its params change.
    ``first``: the first answer, already received (returns it or raises it).

    Raises:
        ProtocolError: an unknown ``resultType``, or ``input_required`` where
            it is not allowed, or a malformed round.
        LimitExceededError: too many rounds or inputs.
        Error: whatever the request itself raises, or an interaction's class
            (e.g. ``sampling_denied``) when a round cannot be answered.
    """
    protocol = conn.protocol
    modern = protocol is not None and protocol.modern
    binding = conn.binding
    rounds = 0
    url_retried = False
    while True:
        replay, first = first, None
        try:
            result = replay() if replay is not None else conn.request(method, params, ctx)
        except URLElicitationRequiredError as exc:
            # 2025-11-25: do the URL elicitations, then send the call once more.
            if url_retried or not exc.elicitations:
                raise
            url_retried = True
            for entry in url_entries(exc):
                answer = answer_entry(
                    "elicitation/create", entry, ctx, interactions=interactions, binding=binding
                )
                check_url_answer(answer, exc, binding=binding, op=ctx.op)
            continue
        if not modern:
            return result
        kind = result_kind(result, method, accept_task=accept_task, binding=binding, op=ctx.op)
        if kind != "input_required":
            return result
        rounds = next_round(rounds, limits, binding=binding, op=ctx.op)
        entries, state = round_entries(result, limits, binding=binding, op=ctx.op)
        responses = {
            key: answer_entry(
                entry_method, entry_params, ctx, interactions=interactions, binding=binding
            )
            for key, entry_method, entry_params in entries
        }
        params = retry_params(params, responses, state)


def result_kind(result: Any, method: str, *, accept_task: bool, binding: str, op: str) -> str:
    """What a modern answer is: ``complete``, ``task`` (when accepted) or ``input_required``.

    Raises:
        ProtocolError: an unknown ``resultType``, or input asked where it cannot be.
    """
    kind = result_type(result)
    if kind == "complete" or (kind == "task" and accept_task):
        return str(kind)
    if kind != "input_required":
        raise ProtocolError(
            f"the server answered an unknown resultType {str(kind)[:40]!r}",
            binding=binding,
            op=op,
        )
    if method not in MRTR_METHODS:
        raise ProtocolError(
            f"the server asked for input on {method}, which cannot take it",
            binding=binding,
            op=op,
        )
    return "input_required"


def next_round(rounds: int, limits: Limits, *, binding: str, op: str) -> int:
    """The number of the round the server just asked for.

    Raises:
        LimitExceededError: more than ``Limits.max_input_rounds``.
    """
    rounds += 1
    if rounds > limits.max_input_rounds:
        raise LimitExceededError(
            f"the server asked for input more than max_input_rounds"
            f" ({limits.max_input_rounds}) times",
            binding=binding,
            op=op,
        )
    return rounds


def url_entries(exc: URLElicitationRequiredError) -> list[dict[str, Any]]:
    """The ``elicitation/create`` params of each URL elicitation a -32042 asks for."""
    out = []
    for item in exc.elicitations:
        params = dict(item) if isinstance(item, dict) else {}
        params["mode"] = "url"
        out.append(params)
    return out


def check_url_answer(
    answer: Any, exc: URLElicitationRequiredError, *, binding: str, op: str
) -> None:
    """Every URL elicitation the request needs must be accepted.

    Raises:
        Error: ``elicitation_declined`` or ``elicitation_cancelled``.
    """
    action = answer.get("action") if isinstance(answer, dict) else None
    if action == "accept":
        return
    failure = (
        FailureClass.ELICITATION_DECLINED
        if action == "decline"
        else FailureClass.ELICITATION_CANCELLED
    )
    raise error_for(
        failure, "a URL elicitation the request needs was not accepted", binding=binding, op=op
    ) from exc


def round_entries(
    result: dict[str, Any], limits: Limits, *, binding: str, op: str
) -> tuple[list[tuple[str, str, dict[str, Any]]], str | None]:
    """One ``input_required`` round: its entries (key, method, params) and ``requestState``.

    Raises:
        ProtocolError: a malformed round.
        LimitExceededError: more than ``Limits.max_input_requests`` entries.
    """
    requests, state = input_round(result)
    if requests is None and state is None:
        raise ProtocolError(
            "input_required carries neither inputRequests nor requestState",
            binding=binding,
            op=op,
        )
    if requests is not None and not isinstance(requests, dict):
        raise ProtocolError("inputRequests is not an object", binding=binding, op=op)
    if state is not None and not isinstance(state, str):
        raise ProtocolError("requestState is not a string", binding=binding, op=op)
    found = requests or {}
    if len(found) > limits.max_input_requests:
        raise LimitExceededError(
            f"the server asked for {len(found)} inputs in one round, over"
            f" max_input_requests ({limits.max_input_requests})",
            binding=binding,
            op=op,
        )
    entries = []
    for key, entry in found.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("method"), str):
            raise ProtocolError("an inputRequests entry has no method", binding=binding, op=op)
        raw_params = entry.get("params")
        entries.append((key, entry["method"], raw_params if isinstance(raw_params, dict) else {}))
    return entries, state


def start_entry(
    method: str, params: dict[str, Any], ctx: CallContext, *, interactions: Interactions
) -> Serving:
    """Start one entry's handler; never blocks. Read its answer with :func:`entry_answer`.

    The handler gets a token of its own, cancelled with the call's; its
    deadline is the interaction's, capped by the call's.
    """
    cancel = ctx.cancel
    token = CancelToken()
    handle = cancel.add_callback(token.cancel) if cancel is not None else None
    future = interactions.start(
        method, params, token, interactions.deadline_for(method, cap=ctx.deadline)
    )
    if handle is not None and cancel is not None:
        future.add_done_callback(lambda _: cancel.remove_callback(handle))
    return future


def entry_answer(future: concurrent.futures.Future[Served], *, binding: str, op: str) -> Any:
    """The answer of a finished entry (its events emitted), or its refusal as the call's error.

    Raises:
        Error: the refusal's class; MRTR has no error reply, so the call stops.
    """
    try:
        answer, after = future.result()  # settled (or settling this instant)
    except RefusedError as refused:
        refused.after()
        if refused.answer is None:
            raise error_for(
                refused.failure_class, refused.message, binding=binding, op=op
            ) from None
        return refused.answer
    after()
    return answer


def answer_entry(
    method: str,
    params: dict[str, Any],
    ctx: CallContext,
    *,
    interactions: Interactions,
    binding: str,
) -> Any:
    """Serve one entry and wait for its answer (a blocking call's round)."""
    future = start_entry(method, params, ctx, interactions=interactions)
    interactions.settle(future)
    return entry_answer(future, binding=binding, op=ctx.op)
