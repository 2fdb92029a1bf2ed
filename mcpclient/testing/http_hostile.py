"""The ``hostile`` tool actions only the HTTP front end can perform.

Their names are listed in :data:`mcpclient.testing.catalog.HTTP_HOSTILE_ACTIONS`;
each core the front end makes gets them as ``transport_actions``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .core import InboundRequest, ServerCore, TransportAction
from .http_channels import HttpChannel
from .http_common import DEFAULT_RETRY_MS, TRICKLE_INTERVAL, StatusOverride, json_bytes
from .tools_api import text_result
from .tools_hostile import DEFAULT_OVERSIZED_BYTES

__all__ = ["TRANSPORT_ACTIONS"]

Result = dict[str, Any]


def _channel_of(request: InboundRequest) -> HttpChannel | None:
    channel = request.channel
    return channel if isinstance(channel, HttpChannel) else None


def _number(args: dict[str, Any], name: str, default: float) -> float | None:
    value = args.get(name, default)
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        return None
    return float(value)


def _bad(action: str, text: str) -> Result:
    return text_result(f"hostile {action}: {text}", is_error=True)


def _done(action: str) -> Result:
    return text_result(f"hostile {action}: done")


def _expire_session(
    core: ServerCore, request: InboundRequest, args: dict[str, Any]
) -> Result | None:
    channel = _channel_of(request)
    if channel is None or channel.session is None:
        return _bad("expire_session", "this request belongs to no session")
    channel.front.expire(channel.session)
    return _done("expire_session")


def _session_404_storm(
    core: ServerCore, request: InboundRequest, args: dict[str, Any]
) -> Result | None:
    channel = _channel_of(request)
    count = _number(args, "count", 1)
    method = args.get("method")
    if channel is None or count is None:
        return _bad("session_404_storm", "count must be a number >= 0")
    if method is not None and not isinstance(method, str):
        return _bad("session_404_storm", "method must be a string")
    channel.front.set_storm(int(count), method)
    return _done("session_404_storm")


def _drop_stream(core: ServerCore, request: InboundRequest, args: dict[str, Any]) -> Result | None:
    channel = _channel_of(request)
    retry = _number(args, "retry", DEFAULT_RETRY_MS)
    if channel is None or retry is None:
        return _bad("drop_stream", "retry must be a number >= 0")
    if channel.drop_stream(int(retry)):
        return _done("drop_stream")  # logged on the stream, for the resuming GET
    request.drop()  # not resumable: the request is lost
    return None


def _padded_response(channel: HttpChannel, request: InboundRequest, size: int) -> bytes:
    """This call's response, serialized to exactly ``size`` bytes (cut short if too small)."""
    message = channel.translate(request.build_response(text_result("")))
    base = json_bytes(message)
    if size < len(base):
        return base[:size]
    message["result"]["content"][0]["text"] = "x" * (size - len(base))
    return json_bytes(message)


def _oversized(action: str, *, json_body: bool) -> Callable[..., Result | None]:
    def run(core: ServerCore, request: InboundRequest, args: dict[str, Any]) -> Result | None:
        channel = _channel_of(request)
        size = _number(args, "bytes", DEFAULT_OVERSIZED_BYTES)
        if channel is None or size is None:
            return _bad(action, "bytes must be a number >= 0")
        channel.send_final_bytes(_padded_response(channel, request, int(size)), json_body=json_body)
        request.drop()
        return None

    return run


#: The ``bad_answer`` kinds: an answer to this call that no client can use.
BAD_ANSWER_KINDS = ("not_json", "truncated", "nan", "wrong_id", "deep")
_BAD_DEPTH = 20000


def _bad_answer_bytes(channel: HttpChannel, request: InboundRequest, kind: str) -> bytes:
    message = channel.translate(request.build_response(text_result("bad answer")))
    if kind == "not_json":
        return b"this is not json"
    if kind == "truncated":
        whole = json_bytes(message)
        return whole[: len(whole) // 2]
    if kind == "nan":
        return json_bytes(message)[:-1] + b',"_nan":NaN}'
    if kind == "wrong_id":
        own = message["id"]
        message["id"] = own + 1000 if isinstance(own, int) else f"not-{own}"
        return json_bytes(message)
    head = json_bytes({"jsonrpc": "2.0", "id": message["id"]})[:-1]
    return head + b',"result":' + b"[" * _BAD_DEPTH + b"]" * _BAD_DEPTH + b"}"


def _bad_answer(core: ServerCore, request: InboundRequest, args: dict[str, Any]) -> Result | None:
    channel = _channel_of(request)
    kind = args.get("kind")
    form = args.get("form", "json")
    if channel is None or kind not in BAD_ANSWER_KINDS or form not in ("json", "sse"):
        return _bad("bad_answer", f"kind must be one of {list(BAD_ANSWER_KINDS)}, form json|sse")
    data = _bad_answer_bytes(channel, request, kind)
    if form == "json":
        channel.send_final_bytes(data, json_body=True)
        request.drop()
    else:
        # One event, and the request stays unfinished, so its stream stays
        # open (until the client cancels it): the real answer never comes.
        channel.write_raw(b"data: " + data + b"\n\n")
    return None


def _trickle(core: ServerCore, request: InboundRequest, args: dict[str, Any]) -> Result | None:
    channel = _channel_of(request)
    seconds = _number(args, "seconds", 2.0)
    if channel is None or seconds is None:
        return _bad("trickle", "seconds must be a number >= 0")
    count = max(1, round(seconds / TRICKLE_INTERVAL))
    # One SSE comment line, a byte at a time: ":....\n".
    payload = b":" + b"." * (count - 2) + b"\n" if count >= 2 else b"\n"
    if not channel.start_sse():
        return _done("trickle")
    for index in range(count):
        channel.write_raw(payload[index : index + 1])
        if not request.sleep(TRICKLE_INTERVAL):
            return None
    return _done("trickle")


def _status(core: ServerCore, request: InboundRequest, args: dict[str, Any]) -> Result | None:
    channel = _channel_of(request)
    code = args.get("code")
    if channel is None or not isinstance(code, int) or isinstance(code, bool):
        return _bad("status", "code must be an integer")
    if not 200 <= code <= 599:
        return _bad("status", "code must be within 200..599")
    body = args.get("body")
    content_type: str | None
    if body is None:
        data, content_type = b"", None
    elif isinstance(body, str):
        data, content_type = body.encode("utf-8"), "text/plain; charset=utf-8"
    else:
        data, content_type = json_bytes(body), "application/json"
    if isinstance(args.get("content_type"), str):
        content_type = args["content_type"]
    headers = args.get("headers", {})
    if not isinstance(headers, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        return _bad("status", "headers must map names to strings")
    channel.front.set_override(
        StatusOverride(code, data, content_type, tuple((k, v) for k, v in headers.items()))
    )
    return _done("status")


def _ping_flood(core: ServerCore, request: InboundRequest, args: dict[str, Any]) -> Result | None:
    count = _number(args, "count", 20)
    if count is None:
        return _bad("ping_flood", "count must be a number >= 0")
    for index in range(1, int(count) + 1):
        # Fire and forget: the answers arrive as POSTs, in the record file.
        request.channel.send({"jsonrpc": "2.0", "id": f"ping-{index}", "method": "ping"})
    return _done("ping_flood")


def _hold_accepts(core: ServerCore, request: InboundRequest, args: dict[str, Any]) -> Result | None:
    channel = _channel_of(request)
    seconds = _number(args, "seconds", 0)
    if channel is None or seconds is None:
        return _bad("hold_accepts", "seconds must be a number >= 0")
    channel.front.set_hold_accepts(seconds)
    return _done("hold_accepts")


#: The ``hostile`` actions the HTTP front end adds (names in catalog.HTTP_HOSTILE_ACTIONS).
def _echo_request(core: ServerCore, request: InboundRequest, args: dict[str, Any]) -> Result | None:
    # A debug-happy server: its error quotes the request it got, credentials
    # and all (the path and query, every header), in the message and data.
    channel = _channel_of(request)
    seen = None if channel is None else channel.front.last_request()
    if seen is None:
        return _bad("echo_request", "no HTTP request to echo")
    method, path, headers = seen
    quoted = "; ".join(f"{name}: {value}" for name, value in headers)
    code = args.get("code", -32000)
    request.fail(
        code if isinstance(code, int) and not isinstance(code, bool) else -32000,
        f"cannot serve {method} {path} (headers: {quoted})",
        {"path": path, "headers": dict(headers)},
    )
    return None


TRANSPORT_ACTIONS: dict[str, TransportAction] = {
    "expire_session": _expire_session,
    "session_404_storm": _session_404_storm,
    "drop_stream": _drop_stream,
    "oversized_body": _oversized("oversized_body", json_body=True),
    "oversized_event": _oversized("oversized_event", json_body=False),
    "bad_answer": _bad_answer,
    "trickle": _trickle,
    "status": _status,
    "ping_flood": _ping_flood,
    "hold_accepts": _hold_accepts,
    "echo_request": _echo_request,
}
