"""Server-initiated requests and the small messages around calls.

Sampling and elicitation requests are structured by the converter into
records the client's gates then judge (a record never refuses: a wrong type
reads as absent, and the gate says what is missing); their answers, roots,
completion, progress and cancellation, the modern era's input rounds
(``inputRequests``/``requestState``), subscriptions, list TTL hints and read
cache hints (``ttlMs``/``cacheScope``, 2026-07-28 ``ReadResourceResult``) are
read or written here, so no other module spells a camelCase wire name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import attrs
import cattrs
from cattrs.gen import override

from mcpclient._core.limits import bound
from mcpclient._internal.wire.converter import Bounds, converter_for, hooks, record
from mcpclient._internal.wire.errors import translated
from mcpclient._internal.wire.state import flag, raw, text
from mcpclient.catalog import Completion
from mcpclient.definition import Limits

__all__ = [
    "INPUT_KEYS",
    "ElicitParams",
    "SamplingParams",
    "cancelled_params",
    "cancelled_request_id",
    "input_round",
    "list_ttl_ms",
    "listen_notifications",
    "progress_token",
    "read_completion",
    "read_elicit_params",
    "read_sampling_params",
    "result_type",
    "retry_params",
    "sampling_answer",
    "subscriptions_honoured",
    "task_support",
    "with_progress_token",
]

#: What a retried modern request carries from its input round (never resent stale).
INPUT_KEYS = frozenset({"inputResponses", "requestState"})
_LIMITS = Limits()


@attrs.define(slots=True)
class SamplingParams:
    """``sampling/createMessage`` params as read (raw where the gate judges the type)."""

    max_tokens: Any = None
    messages: Any = None
    system_prompt: str = ""
    offers_tools: bool = False
    tool_choice: bool = False


@attrs.define(slots=True)
class ElicitParams:
    """``elicitation/create`` params as read (raw: the gate judges and bounds them)."""

    mode: Any = "form"
    message: Any = None
    url: Any = None
    elicitation_id: Any = None
    requested_schema: Any = None

    def texts(self) -> tuple[tuple[str, Any], ...]:
        """The texts shown to a person, each with the wire name that labels it."""
        return (
            ("message", self.message),
            ("url", self.url),
            ("elicitationId", self.elicitation_id),
        )


@attrs.define(slots=True)
class _Completion:
    values: Any = None
    total: int | None = None
    has_more: bool = False


@hooks
def _register(conv: cattrs.Converter, limits: Bounds) -> None:
    present = override(struct_hook=lambda v, _: v is not None)
    record(
        conv,
        SamplingParams,
        max_tokens=override(rename="maxTokens", struct_hook=raw),
        messages=override(struct_hook=raw),
        system_prompt=override(rename="systemPrompt", struct_hook=text()),
        offers_tools=override(rename="tools", struct_hook=present.struct_hook),
        tool_choice=override(rename="toolChoice", struct_hook=present.struct_hook),
    )
    record(
        conv,
        ElicitParams,
        mode=override(struct_hook=raw),
        message=override(struct_hook=raw),
        url=override(struct_hook=raw),
        elicitation_id=override(rename="elicitationId", struct_hook=raw),
        requested_schema=override(rename="requestedSchema", struct_hook=raw),
    )
    record(
        conv,
        _Completion,
        values=override(struct_hook=lambda v, _: v if isinstance(v, list) else None),
        total=override(
            struct_hook=lambda v, _: v if isinstance(v, int) and not isinstance(v, bool) else None
        ),
        has_more=override(rename="hasMore", struct_hook=flag),
    )


def read_sampling_params(params: Mapping[str, Any]) -> SamplingParams:
    """A sampling request's params, read."""
    with translated("the sampling request"):
        parsed: SamplingParams = converter_for(_LIMITS).structure(params, SamplingParams)
    return parsed


def sampling_answer(text: str, model: str, stop_reason: str) -> dict[str, Any]:
    """The answer to a sampling request: one assistant text message."""
    return {
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": model,
        "stopReason": stop_reason,
    }


def read_elicit_params(params: Mapping[str, Any]) -> ElicitParams:
    """An elicitation request's params, read."""
    with translated("the elicitation request"):
        parsed: ElicitParams = converter_for(_LIMITS).structure(params, ElicitParams)
    return parsed


def read_completion(result: Any) -> Completion | None:
    """A ``completion/complete`` result (at most 100 values, each bounded), or ``None``."""
    completion = result.get("completion") if isinstance(result, dict) else None
    if not isinstance(completion, dict):
        return None
    with translated("the completion result"):
        rec: _Completion = converter_for(_LIMITS).structure(completion, _Completion)
    if rec.values is None:
        return None
    return Completion(
        values=tuple(bound(v, 1024) for v in rec.values[:100] if isinstance(v, str)),
        total=rec.total,
        has_more=rec.has_more,
    )


# -- progress and cancellation --------------------------------------------------------


def with_progress_token(params: dict[str, Any] | None, token: str) -> dict[str, Any]:
    """``params`` (copied) asking for progress under ``token``."""
    out = dict(params or {})
    meta = dict(out.get("_meta") or {})
    meta["progressToken"] = token
    out["_meta"] = meta
    return out


def progress_token(params: Mapping[str, Any]) -> Any:
    """The token a ``notifications/progress`` names (raw)."""
    return params.get("progressToken")


def cancelled_params(request_id: Any, reason: str) -> dict[str, Any]:
    """The params of ``notifications/cancelled``."""
    return {"requestId": request_id, "reason": reason}


def cancelled_request_id(params: Mapping[str, Any]) -> Any:
    """The request a ``notifications/cancelled`` names (raw)."""
    return params.get("requestId")


# -- the modern era's results ------------------------------------------------------------


def result_type(result: Any) -> Any:
    """A modern result's ``resultType`` (``"complete"`` when absent or not an object)."""
    return result.get("resultType", "complete") if isinstance(result, dict) else "complete"


def input_round(result: Mapping[str, Any]) -> tuple[Any, Any]:
    """An ``input_required`` result's raw input requests and request state."""
    return result.get("inputRequests"), result.get("requestState")


def retry_params(
    params: Mapping[str, Any] | None, responses: dict[str, Any], state: str | None
) -> dict[str, Any]:
    """The params of the request retried after an input round."""
    retry = {k: v for k, v in (params or {}).items() if k not in INPUT_KEYS}
    if responses:
        retry["inputResponses"] = responses
    if state is not None:
        retry["requestState"] = state  # echoed byte for byte, never parsed
    return retry


def list_ttl_ms(result: Any) -> Any:
    """A list result's ``ttlMs`` hint (raw), or ``None``."""
    return result.get("ttlMs") if isinstance(result, dict) else None


#: The scopes the 2026-07-28 schema defines for ``cacheScope``.
SCOPES = ("public", "private")


class CacheHint(NamedTuple):
    """A read result's cache hint: seconds of freshness and its scope."""

    ttl: float
    scope: str


def read_cache_hint(result: Any) -> CacheHint | None:
    """The hint of a raw ``resources/read`` result, or None when it allows no caching.

    None for a legacy result (no hint), a malformed hint (never invented), or
    ``ttlMs`` 0 (immediately stale).
    """
    if not isinstance(result, dict):
        return None
    ttl_ms = result.get("ttlMs")
    scope = result.get("cacheScope")
    if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or ttl_ms <= 0:
        return None
    if scope not in SCOPES:
        return None
    return CacheHint(ttl_ms / 1000.0, scope)


def result_size(result: Any) -> int:
    """The bytes a raw read result's contents take (text and base64 blob lengths)."""
    size = 0
    contents = result.get("contents") if isinstance(result, dict) else None
    for item in contents if isinstance(contents, list) else ():
        if isinstance(item, dict):
            for key in ("text", "blob"):
                value = item.get(key)
                if isinstance(value, str):
                    size += len(value)
    return size


def task_support(execution: Any) -> Any:
    """A tool's declared ``execution.taskSupport`` (raw), or ``None``."""
    return execution.get("taskSupport") if isinstance(execution, dict) else None


# -- subscriptions ------------------------------------------------------------------------


def listen_notifications(
    *, tools: bool, prompts: bool, resources: bool, uris: Sequence[str]
) -> dict[str, Any]:
    """What a modern ``subscriptions/listen`` asks to be notified of."""
    wanted: dict[str, Any] = {
        key: True
        for key, advertised in (
            ("toolsListChanged", tools),
            ("promptsListChanged", prompts),
            ("resourcesListChanged", resources),
        )
        if advertised
    }
    if uris:
        wanted["resourceSubscriptions"] = list(uris)
    return wanted


def subscriptions_honoured(honoured: Mapping[str, Any]) -> Any:
    """The resource subscriptions an acknowledgement says it honours (raw)."""
    return honoured.get("resourceSubscriptions")
