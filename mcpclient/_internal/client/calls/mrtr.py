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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpclient._internal.client.inbound.interactions import Interactions, RefusedError
from mcpclient._internal.client.lifecycle.connection import Connection, URLElicitationRequiredError
from mcpclient._internal.session.context import CallContext
from mcpclient._internal.wire.interactions import input_round, result_type, retry_params
from mcpclient.calls import CancelToken
from mcpclient.definition import Limits
from mcpclient.errors import FailureClass, LimitExceededError, ProtocolError, error_for

__all__ = ["answer_entry", "exchange"]

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
    ``first``: the first answer, already received (returns it or raises it);
    a submitted call that has to block after its first answer continues here.

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
    op = ctx.op
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
            _url_elicitations(exc, ctx, interactions=interactions, binding=binding)
            continue
        if not modern:
            return result
        kind = result_type(result)
        if kind == "complete" or (kind == "task" and accept_task):
            return result
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
        rounds += 1
        if rounds > limits.max_input_rounds:
            raise LimitExceededError(
                f"the server asked for input more than max_input_rounds"
                f" ({limits.max_input_rounds}) times",
                binding=binding,
                op=op,
            )
        assert isinstance(result, dict)
        params = _answer_round(
            result,
            params,
            ctx,
            interactions=interactions,
            limits=limits,
            binding=binding,
        )


def _url_elicitations(
    exc: URLElicitationRequiredError,
    ctx: CallContext,
    *,
    interactions: Interactions,
    binding: str,
) -> None:
    """Hand each URL elicitation to the handler; every one must be accepted."""
    op = ctx.op
    for item in exc.elicitations:
        params = dict(item) if isinstance(item, dict) else {}
        params["mode"] = "url"
        answer = answer_entry(
            "elicitation/create", params, ctx, interactions=interactions, binding=binding
        )
        action = answer.get("action") if isinstance(answer, dict) else None
        if action != "accept":
            failure = (
                FailureClass.ELICITATION_DECLINED
                if action == "decline"
                else FailureClass.ELICITATION_CANCELLED
            )
            raise error_for(
                failure,
                "a URL elicitation the request needs was not accepted",
                binding=binding,
                op=op,
            ) from exc


def _answer_round(
    result: dict[str, Any],
    params: dict[str, Any] | None,
    ctx: CallContext,
    *,
    interactions: Interactions,
    limits: Limits,
    binding: str,
) -> dict[str, Any]:
    """Fulfil one ``input_required`` round; return the retry's params."""
    op = ctx.op
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
    entries = requests or {}
    if len(entries) > limits.max_input_requests:
        raise LimitExceededError(
            f"the server asked for {len(entries)} inputs in one round, over"
            f" max_input_requests ({limits.max_input_requests})",
            binding=binding,
            op=op,
        )
    responses: dict[str, Any] = {}
    for key, entry in entries.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("method"), str):
            raise ProtocolError("an inputRequests entry has no method", binding=binding, op=op)
        raw_params = entry.get("params")
        inner_params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        responses[key] = answer_entry(
            entry["method"], inner_params, ctx, interactions=interactions, binding=binding
        )
    return retry_params(params, responses, state)


def answer_entry(
    method: str,
    params: dict[str, Any],
    ctx: CallContext,
    *,
    interactions: Interactions,
    binding: str,
) -> Any:
    # The handler gets a token of its own, cancelled with the call's; its
    # deadline is the interaction's, capped by the call's.
    cancel = ctx.cancel
    token = CancelToken()
    handle = cancel.add_callback(token.cancel) if cancel is not None else None
    try:
        answer, after = interactions.run(
            method, params, token, interactions.deadline_for(method, cap=ctx.deadline)
        )
    except RefusedError as refused:
        refused.after()
        if refused.answer is None:  # MRTR has no error reply: the call stops here
            raise error_for(
                refused.failure_class, refused.message, binding=binding, op=ctx.op
            ) from None
        return refused.answer
    finally:
        if handle is not None and cancel is not None:
            cancel.remove_callback(handle)
    after()
    return answer
