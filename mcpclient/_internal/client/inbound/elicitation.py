"""Elicitation: a server asks the person, through the host, in either era.

The prompt, URL and id are bounded (refused, never trimmed: a cut prompt
could change what a person agrees to), the form's schema is bounded, and an
accepted form answer is completed from the form's defaults and validated
against it before it is sent; an answer that fails is replaced by
``cancel``. :class:`~mcpclient._internal.client.inbound.interactions.Interactions`
runs it on a handler thread and owns the deadline (``timeouts.elicitation``).

Threads: none of its own (runs on the handler thread serving the request).
Locks: none (the schema cache locks itself).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from mcpclient._core.canonical import compact
from mcpclient._core.limits import clean_text, utf8_len
from mcpclient._internal.client.inbound.refusals import INVALID_PARAMS as _INVALID_PARAMS
from mcpclient._internal.client.inbound.refusals import RefusedError, Served, call_handler
from mcpclient._internal.schema import SchemaCache
from mcpclient._internal.wire import json_depth
from mcpclient._internal.wire.interactions import read_elicit_params
from mcpclient.definition import Limits
from mcpclient.errors import FailureClass
from mcpclient.events import ElicitationRequested, ElicitationResolved, Event
from mcpclient.handlers import (
    ElicitAction,
    ElicitMode,
    ElicitRequest,
    ElicitResult,
    HandlerContext,
    Handlers,
)

__all__ = ["MAX_PROBLEM_BYTES", "Elicitation", "refuse_unsupported", "with_form_defaults"]

#: The package logger: where a host looks for what the library did on its behalf.
_public_log = logging.getLogger("mcpclient")
#: Bound on ``ElicitationResolved.problem``, in UTF-8 bytes.
MAX_PROBLEM_BYTES = 512

_ELICITATION_SINCE = "2025-06-18"  # versions compare as dates
_URL_ELICITATION_SINCE = "2025-11-25"


def with_form_defaults(schema: Any, content: Any) -> Any:
    """``content`` with each field the answer left out filled from the form's ``default``.

    SEP-1034: a form field's default is what the person is shown pre-filled,
    so an accepted answer that omits the field means the default. Only the
    form's own top-level fields with a primitive default (string, number,
    boolean) are filled; the answer itself is never changed in place.
    """
    if not isinstance(content, dict) or not isinstance(schema, dict):
        return content
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return content
    filled = dict(content)
    for name, field in properties.items():
        if name in filled or not isinstance(field, dict) or "default" not in field:
            continue
        default = field["default"]
        if isinstance(default, str | bool | int | float):
            filled[name] = default
    return filled


def refuse_unsupported(version: str | None, params: dict[str, Any]) -> None:
    """Refuse an elicitation the negotiated ``version`` does not have (None: not known yet).

    Raises:
        RefusedError: elicitation, or its url mode, is newer than ``version``.
    """
    if version is not None and version < _ELICITATION_SINCE:
        raise RefusedError(
            -32601,
            "elicitation does not exist in this protocol version",
            FailureClass.UNSUPPORTED_PROTOCOL,
        )
    if version is not None and version < _URL_ELICITATION_SINCE and params.get("mode") == "url":
        raise RefusedError(
            _INVALID_PARAMS,
            "url mode elicitation was not declared",
            FailureClass.ELICITATION_INVALID,
        )


class Elicitation:
    """Serves a binding's elicitation requests. Thread safety: any thread."""

    def __init__(
        self, binding: str, handlers: Handlers, limits: Limits, emit: Callable[[Event], int]
    ) -> None:
        self._binding = binding
        self._handlers = handlers
        self._limits = limits
        self._emit = emit
        self._schemas = SchemaCache(64)

    def serve(self, params: dict[str, Any], ctx: HandlerContext) -> Served:
        """Ask the host's elicitation handler; check its answer against the form.

        Raises:
            RefusedError: unsupported, a malformed or oversized request, the
                handler failed, or its answer does not satisfy the form.
        """
        handler = self._handlers.elicitation
        if handler is None:
            raise RefusedError(
                -32601, "elicitation is not supported", FailureClass.UNSUPPORTED_PROTOCOL
            )
        request = self._request(params)
        self._emit(ElicitationRequested(binding=self._binding, mode=request.mode, at=time.time()))
        started = time.monotonic()
        action: ElicitAction | None = None
        problem = ""  # why the server is told "cancel" instead of the handler's answer

        def resolved() -> None:
            self._emit(
                ElicitationResolved(
                    binding=self._binding,
                    mode=request.mode,
                    action=action,
                    duration=time.monotonic() - started,
                    problem=problem,
                    at=time.time(),
                )
            )

        try:
            result = call_handler(
                handler, "elicit", (request, ctx), FailureClass.ELICITATION_CANCELLED
            )
            if not isinstance(result, ElicitResult):
                raise RefusedError(
                    0,
                    "the elicitation handler did not return an ElicitResult",
                    FailureClass.ELICITATION_INVALID,
                    answer={"action": "cancel"},
                )
            answer: dict[str, Any] = {"action": str(result.action)}
            if result.action is ElicitAction.ACCEPT and request.mode is ElicitMode.FORM:
                content = result.content if result.content is not None else {}
                content = with_form_defaults(request.schema, content)
                failed = self._check_answer(request, content)
                if failed is not None:
                    # Names the field and the rule only: the answer may hold secrets.
                    _public_log.warning(
                        "binding %s: the elicitation answer %s; the server is told cancel",
                        self._binding,
                        failed,
                    )
                    raise RefusedError(
                        0,
                        f"the answer {failed}",
                        FailureClass.ELICITATION_INVALID,
                        answer={"action": "cancel"},
                    )
                answer["content"] = content
        except RefusedError as refused:
            problem = clean_text(refused.message, MAX_PROBLEM_BYTES)
            if refused.answer == {"action": "cancel"}:
                action = ElicitAction.CANCEL  # what the server is told instead
            refused.after = resolved
            raise
        action = result.action
        return answer, resolved

    def _request(self, params: dict[str, Any]) -> ElicitRequest:
        limits = self._limits
        wire = read_elicit_params(params)
        mode_text = wire.mode
        if mode_text not in ("form", "url"):
            raise RefusedError(
                _INVALID_PARAMS, "unknown elicitation mode", FailureClass.ELICITATION_INVALID
            )
        mode = ElicitMode.FORM if mode_text == "form" else ElicitMode.URL
        message = wire.message
        if not isinstance(message, str):
            raise RefusedError(
                _INVALID_PARAMS, "message is required", FailureClass.ELICITATION_INVALID
            )
        for label, value in wire.texts():
            if isinstance(value, str) and utf8_len(value) > limits.max_elicit_message_bytes:
                # A prompt is the one server text we never trim: a cut prompt
                # could change what a person agrees to.
                raise RefusedError(
                    _INVALID_PARAMS,
                    f"the elicitation {label} is longer than this host shows",
                    FailureClass.ELICITATION_INVALID,
                )
        if mode is ElicitMode.URL:
            url = wire.url
            if not isinstance(url, str) or not url:
                raise RefusedError(
                    _INVALID_PARAMS, "url mode needs a url", FailureClass.ELICITATION_INVALID
                )
            elicitation_id = wire.elicitation_id
            return ElicitRequest(
                binding=self._binding,
                mode=mode,
                message=message,
                url=url,
                elicitation_id=elicitation_id if isinstance(elicitation_id, str) else "",
            )
        schema = wire.requested_schema
        if not isinstance(schema, dict):
            raise RefusedError(
                _INVALID_PARAMS,
                "form mode needs a requestedSchema",
                FailureClass.ELICITATION_INVALID,
            )
        try:
            size = utf8_len(compact(schema))
        except (TypeError, ValueError):
            size = limits.max_elicit_schema_bytes + 1
        if (
            size > limits.max_elicit_schema_bytes
            or json_depth(schema, limits.max_schema_depth) > limits.max_schema_depth
        ):
            raise RefusedError(
                _INVALID_PARAMS,
                "the elicitation form is larger or deeper than this host accepts",
                FailureClass.ELICITATION_INVALID,
            )
        return ElicitRequest(binding=self._binding, mode=mode, message=message, schema=schema)

    def _check_answer(self, request: ElicitRequest, content: Any) -> str | None:
        """Why ``content`` does not satisfy the form (field and rule, no values), or None."""
        if not isinstance(content, dict):
            return "is not an object"
        schema = request.schema
        validator = self._schemas.get(compact(schema), lambda: schema)
        if isinstance(validator, str):
            return None  # a form we cannot check is not grounds to refuse a person's answer
        failed = validator.violation(content)
        if failed is None:
            return None
        path, rule = failed
        # A path may hold a key the answer chose: made safe for a log line.
        return clean_text(f"fails the form's {rule!r} rule at {path}", MAX_PROBLEM_BYTES - 32)
