"""The ``hostile`` tool: its actions, one function each, and their table.

Each action misbehaves on purpose (a broken frame, a flood, a hang, an exit)
so that a client's defenses can be tested; the names are listed in
:data:`mcpclient.testing.catalog.HOSTILE_ACTIONS` and documented in
``docs/testing-server.md``. Standard library only.

Threads:
    None of its own; actions run on the thread that handles the request.

Locks:
    ``_count_lock`` guards the process-wide counters of the ``count`` action
    (every core of an HTTP process shares them).

Shutdown:
    Nothing to stop.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, cast

from .catalog import HOSTILE_ACTIONS
from .tools_api import (
    BadArgumentError,
    Result,
    Tool,
    ToolCore,
    ToolRequest,
    float_arg,
    int_arg,
    text_result,
)

__all__ = ["DEFAULT_OVERSIZED_BYTES", "UNKNOWN_ID", "flood_stderr", "hostile"]

# An id no client is expected to have issued (the `unknown_id` action's default).
UNKNOWN_ID = 987654321
DEFAULT_OVERSIZED_BYTES = 17 * 1024 * 1024
_CHUNK = 64 * 1024

# The ``count`` action's counters: process-wide, so a test can tell how often
# a call actually ran whatever became of its sessions (re-sent after a 404...).
_count_lock = threading.Lock()
_counts: dict[str, int] = {}


def _done(action: str) -> Result:
    return text_result(f"hostile {action}: done")


def _response_prefix(request: ToolRequest) -> bytes:
    """The start of this call's JSON response, cut off inside the first text item."""
    return (
        '{"jsonrpc":"2.0","id":'
        + json.dumps(request.id)
        + ',"result":{"content":[{"type":"text","text":"'
    ).encode()


def _oversized_line(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    size = int_arg(args, "bytes", DEFAULT_OVERSIZED_BYTES)
    id_at = args.get("id_at", "head")
    if id_at not in ("head", "tail", "none"):
        raise BadArgumentError("id_at must be head, tail or none")
    if id_at == "head":
        prefix, suffix = _response_prefix(request), b""
    else:
        # The id after the result: last (the tail), or followed by one more member.
        prefix = b'{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"'
        suffix = b'"}]},"id":' + json.dumps(request.id).encode()
        suffix += b"}" if id_at == "tail" else b',"_meta":{}}'

    def chunks() -> Iterator[bytes]:
        head = prefix[:size]
        yield head
        left = size - len(head) - len(suffix)
        while left > 0:
            n = min(left, _CHUNK)
            yield b"a" * n
            left -= n
        yield suffix + b"\n"

    request.channel.send_raw(chunks())
    request.drop()
    return None


def _garbage_line(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    request.channel.send_raw([b"this is not json\n"])
    return _done("garbage_line")


def _invalid_utf8(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    line = (
        b'{"jsonrpc":"2.0","method":"notifications/message",'
        b'"params":{"level":"info","data":"bad \xff\xfe\xc3( bytes"}}\n'
    )
    request.channel.send_raw([line])
    return _done("invalid_utf8")


def _deep_json(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    depth = int_arg(args, "depth", 100_000)
    request.channel.send_raw([b"[" * depth, b"]" * depth, b"\n"])
    return _done("deep_json")


def _exit(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    code = int_arg(args, "code", 1)
    if args.get("partial") is True:  # half a frame (no newline), then EOF
        request.channel.send_raw([_response_prefix(request)])
    request.channel.exit_process(code)
    return None


def _never_answer(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    return None


def _ignore_cancel(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    seconds = float_arg(args, "seconds", 1.0)
    time.sleep(max(0.0, seconds))
    request.respond(text_result(f"slept {seconds:g} s, ignoring cancellation"), force=True)
    return None


def _progress_forever(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    interval = float_arg(args, "interval", 0.1)
    tick = 0
    while True:
        tick += 1
        if request.progress_token is not None:
            request.progress(tick, None, f"tick {tick}")
        else:
            request.log("info", f"tick {tick}", "hostile", force=True)
        if not request.sleep(interval):
            return None


def _duplicate_response(
    core: ToolCore, request: ToolRequest, args: dict[str, Any]
) -> Result | None:
    request.respond(_done("duplicate_response"), duplicates=1)
    return None


def _unknown_id(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    bogus = args.get("id", UNKNOWN_ID)
    request.channel.send(
        {"jsonrpc": "2.0", "id": bogus, "result": text_result("an answer nobody asked for")}
    )
    return _done("unknown_id")


def _stderr_flood(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    flood_stderr(request.channel.write_stderr, int_arg(args, "bytes", 1024 * 1024))
    return _done("stderr_flood")


def flood_stderr(write: Callable[[bytes], None], size: int) -> None:
    """Write ``size`` bytes of 80-column text lines through ``write``."""
    line = b"x" * 79 + b"\n"
    block = line * (_CHUNK // len(line))
    left = size
    while left > 0:
        piece = block[: min(left, len(block))]
        write(piece)
        left -= len(piece)


def _close_stdout(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    request.channel.close_output()
    request.drop()
    return None


def _notification_flood(
    core: ToolCore, request: ToolRequest, args: dict[str, Any]
) -> Result | None:
    count = int_arg(args, "count", 1000)
    kind = args.get("kind", "log")
    token = request.progress_token if request.progress_token is not None else "flood"
    if kind not in ("progress", "log", "list_changed"):
        return text_result("kind must be progress, log or list_changed", is_error=True)
    for i in range(1, count + 1):
        if kind == "progress":
            request.notify("notifications/progress", {"progressToken": token, "progress": i})
        elif kind == "log":
            request.notify(
                "notifications/message", {"level": "info", "logger": "flood", "data": f"log {i}"}
            )
        else:
            request.notify("notifications/tools/list_changed")
    return _done("notification_flood")


def _server_request(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    method = args.get("method")
    if not isinstance(method, str):
        return text_result("server_request needs a string `method`", is_error=True)
    timeout = args.get("timeout")
    if timeout is not None:
        timeout = float_arg(args, "timeout", 0.0)
    response = core.request_client(request, method, args.get("params"), timeout)
    if response is None:
        if request.cancelled.is_set():
            return None
        return text_result(f"no answer to {method} within {timeout} s", is_error=True)
    body = {k: response[k] for k in ("result", "error") if k in response}
    return text_result(json.dumps(body, sort_keys=True), is_error="error" in response)


def _server_request_flood(
    core: ToolCore, request: ToolRequest, args: dict[str, Any]
) -> Result | None:
    method = args.get("method")
    if not isinstance(method, str):
        return text_result("server_request_flood needs a string `method`", is_error=True)
    count = int_arg(args, "count", 100)
    if not 1 <= count <= 100_000:
        raise BadArgumentError("count must be between 1 and 100000")
    timeout = float_arg(args, "timeout", 60.0)
    responses = core.request_client_many(request, method, args.get("params"), count, timeout)
    if request.cancelled.is_set():
        return None
    errors: dict[str, int] = {}
    results = unanswered = 0
    for response in responses:
        if response is None:
            unanswered += 1
        elif "error" in response:
            error = response["error"]
            code = error.get("code") if isinstance(error, dict) else None
            errors[str(code)] = errors.get(str(code), 0) + 1
        else:
            results += 1
    report = {"results": results, "errors": errors, "unanswered": unanswered}
    return text_result(json.dumps(report, sort_keys=True), is_error=unanswered > 0)


def _result(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    if "result" not in args:
        raise BadArgumentError("result is required")
    request.respond_raw(args["result"])
    return None


def _error(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    # ``times`` (with a ``key``): fail only the first ``times`` calls of that
    # key, then answer (a -32042 the client's URL elicitations resolve).
    times = args.get("times")
    if times is not None:
        key = args.get("key", "")
        if not isinstance(times, int) or not isinstance(key, str):
            raise BadArgumentError("times must be an integer and key a string")
        with _count_lock:
            _counts[key] = runs = _counts.get(key, 0) + 1
        if runs > times:
            return text_result(f"answered after {times} errors")
    # Sent as given: a hostile code may be a string, a float or missing (None).
    code = args.get("code", -32000)
    message = args.get("message", "induced error")
    request.fail(cast(int, code), cast(str, message), args.get("data"))
    return None


def _script_result(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    method = args.get("method")
    if not isinstance(method, str) or "result" not in args:
        raise BadArgumentError("a string `method` and a `result` are required")
    core.script_result(method, args["result"])
    return _done("script_result")


def _count(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    key = args.get("key", "")
    if not isinstance(key, str):
        raise BadArgumentError("key must be a string")
    with _count_lock:
        _counts[key] = runs = _counts.get(key, 0) + 1
    return text_result(f"count {key}: {runs}")


_HOSTILE: dict[str, Tool] = {
    "oversized_line": _oversized_line,
    "garbage_line": _garbage_line,
    "invalid_utf8": _invalid_utf8,
    "deep_json": _deep_json,
    "exit": _exit,
    "never_answer": _never_answer,
    "ignore_cancel": _ignore_cancel,
    "progress_forever": _progress_forever,
    "duplicate_response": _duplicate_response,
    "unknown_id": _unknown_id,
    "stderr_flood": _stderr_flood,
    "close_stdout": _close_stdout,
    "notification_flood": _notification_flood,
    "server_request": _server_request,
    "server_request_flood": _server_request_flood,
    "result": _result,
    "error": _error,
    "script_result": _script_result,
    "count": _count,
}
assert tuple(_HOSTILE) == HOSTILE_ACTIONS


def hostile(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    """The ``hostile`` tool: run the action ``args["action"]`` names."""
    # The enum check already ran; transport actions come from the front end (HTTP).
    action = _HOSTILE.get(args["action"]) or core.transport_actions.get(args["action"])
    if action is None:
        return text_result(f"hostile {args['action']}: only over HTTP", is_error=True)
    try:
        return action(core, request, args)
    except BadArgumentError as exc:
        return text_result(f"hostile {args['action']}: {exc}", is_error=True)
