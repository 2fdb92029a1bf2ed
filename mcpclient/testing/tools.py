"""The built-in tools of the test server, including the ``hostile`` actions.

Each tool runs on its own daemon thread and returns the ``CallToolResult`` to
send, or None when it answered (or decided not to answer) by itself. Standard
library only.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol, cast

from .catalog import FAMILIES, HOSTILE_ACTIONS, Catalog, builtin_tool, resolve_tool_entries

__all__ = ["ask_inputs", "flood_stderr", "run_tool", "text_result"]

Result = dict[str, Any]


# What a tool sees of the core and of its request: protocols, so that this
# module need not import core.py, which imports it (ServerCore and
# InboundRequest are checked against them where core.py calls a tool).


class ToolChannel(Protocol):
    """The request's channel (``core.Channel``), as the hostile tools use it."""

    def send(self, message: Any) -> None: ...
    def send_raw(self, chunks: Iterable[bytes]) -> None: ...
    def close_output(self) -> None: ...
    def write_stderr(self, data: bytes) -> None: ...
    def exit_process(self, code: int) -> None: ...


class ToolRequest(Protocol):
    """What a tool uses of its ``core.InboundRequest``."""

    @property
    def id(self) -> str | int: ...
    @property
    def params(self) -> dict[str, Any]: ...
    @property
    def era(self) -> str: ...
    @property
    def version(self) -> str | None: ...
    @property
    def channel(self) -> ToolChannel: ...
    @property
    def cancelled(self) -> threading.Event: ...
    @property
    def progress_token(self) -> str | int | None: ...
    def respond(
        self, result: dict[str, Any], *, force: bool = False, duplicates: int = 0
    ) -> None: ...
    def respond_raw(self, result: Any) -> None: ...
    def fail(self, code: int, message: str, data: Any = None) -> None: ...
    def drop(self) -> None: ...
    def sleep(self, seconds: float) -> bool: ...
    def notify(self, method: str, params: dict[str, Any] | None = None) -> None: ...
    def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool: ...
    def log(
        self, level: str, data: Any, logger: str | None = None, *, force: bool = False
    ) -> bool: ...


class _VersionRejects(Protocol):
    def set(
        self, count: int, supported: Iterable[str] | None = None, method: str | None = None
    ) -> None: ...


class _ToolConfig(Protocol):
    @property
    def version_rejects(self) -> _VersionRejects: ...


class ToolCore(Protocol):
    """What a tool uses of the ``core.ServerCore`` running it."""

    @property
    def catalog(self) -> Catalog: ...
    @property
    def config(self) -> _ToolConfig: ...
    @property
    def transport_actions(self) -> Mapping[str, Callable[..., Result | None]]: ...
    def notify_list_changed(self, family: str) -> None: ...
    def notify_resource_updated(self, uri: str) -> None: ...
    def request_client(
        self, request: Any, method: str, params: Any = None, timeout: float | None = None
    ) -> dict[str, Any] | None: ...
    def script_result(self, method: str, result: Any) -> None: ...
    def set_fail_lists(self, count: int) -> None: ...
    def set_list_delay(self, seconds: float) -> None: ...
    def set_missing_lists(self, families: Iterable[str]) -> None: ...


_Tool = Callable[[ToolCore, ToolRequest, dict[str, Any]], "Result | None"]

_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}

# An id no client is expected to have issued (the `unknown_id` action's default).
UNKNOWN_ID = 987654321
DEFAULT_OVERSIZED_BYTES = 17 * 1024 * 1024
_CHUNK = 64 * 1024


def text_result(text: str, *, is_error: bool = False, structured: Any = None) -> Result:
    """Build a ``CallToolResult`` with one text block."""
    result: Result = {"content": [{"type": "text", "text": text}]}
    if structured is not None:
        result["structuredContent"] = structured
    if is_error:
        result["isError"] = True
    return result


def _check_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """Shallow check of ``arguments`` against a built-in input schema; a message or None."""
    properties: dict[str, Any] = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name not in arguments:
            return f"missing required argument {name!r}"
    for name, value in arguments.items():
        prop = properties.get(name)
        if prop is None:
            if schema.get("additionalProperties") is False:
                return f"unexpected argument {name!r}"
            continue
        check = _JSON_TYPES.get(prop.get("type", ""))
        if check is not None and not check(value):
            return f"argument {name!r} must be of type {prop['type']}"
        if "enum" in prop and value not in prop["enum"]:
            return f"argument {name!r} must be one of {prop['enum']}"
        if "minimum" in prop and value < prop["minimum"]:
            return f"argument {name!r} must be >= {prop['minimum']}"
    return None


def run_tool(
    core: ToolCore, request: ToolRequest, name: str, arguments: dict[str, Any]
) -> Result | None:
    """Run the listed tool ``name``: a built-in, or an echo of the arguments."""
    implementation = _TOOLS.get(name)
    definition = builtin_tool(name)
    if implementation is None or definition is None:
        return text_result(json.dumps(arguments, sort_keys=True))
    problem = _check_arguments(definition["inputSchema"], arguments)
    if problem is not None:
        return text_result(f"{name}: {problem}", is_error=True)
    return implementation(core, request, arguments)


# --------------------------------------------------------------------- plain tools


def _echo(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    return text_result(args["message"])


def _add(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    total = args["a"] + args["b"]
    structured_ok = request.version not in ("2024-11-05", "2025-03-26")
    return text_result(
        json.dumps({"sum": total}), structured={"sum": total} if structured_ok else None
    )


def _slow(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    seconds = float(args["seconds"])
    if not request.sleep(seconds):
        return None
    return text_result(f"slept {seconds:g} s")


def _progress(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    steps = int(args.get("steps", 3))
    interval = float(args.get("interval", 0.05))
    for step in range(1, steps + 1):
        request.progress(step, steps, f"step {step} of {steps}")
        if not request.sleep(interval):
            return None
    return text_result(f"completed {steps} steps")


def _fail(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    return text_result(args.get("message", "this tool always fails"), is_error=True)


def _log(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    level = args.get("level", "info")
    # ``data`` (any JSON value) is sent as the log's data instead of the message.
    data = args["data"] if "data" in args else args["message"]
    sent = request.log(level, data, args.get("logger"))
    return text_result("logged" if sent else "filtered")


#: Families whose ``list_changed`` notification ``notify`` and ``storm`` may send.
NOTIFY_FAMILIES: tuple[str, ...] = ("tools", "prompts", "resources")
#: Extra spellings ``missing_lists`` accepts for ``resourceTemplates`` (as the CLI does).
_FAMILY_ALIASES = {"templates": "resourceTemplates", "resources/templates": "resourceTemplates"}
DEFAULT_STORM_COUNT = 100


def _mutate_catalog(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    # Validate everything first, so a bad argument changes nothing.
    new_tools = None
    if "set_tools" in args:
        try:
            new_tools = resolve_tool_entries(args["set_tools"])
        except ValueError as exc:
            return text_result(f"mutate_catalog: set_tools: {exc}", is_error=True)
    storm: tuple[str, int] | None = None
    if "storm" in args:
        family = args["storm"].get("family")
        count = args["storm"].get("count", DEFAULT_STORM_COUNT)
        if family not in NOTIFY_FAMILIES:
            return text_result(
                f"mutate_catalog: storm.family must be one of {list(NOTIFY_FAMILIES)}",
                is_error=True,
            )
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            return text_result("mutate_catalog: storm.count must be an integer >= 0", is_error=True)
        storm = (family, count)
    missing: list[str] | None = None
    if "missing_lists" in args:
        names = args["missing_lists"]
        missing = [_FAMILY_ALIASES.get(f, f) if isinstance(f, str) else "" for f in names]
        if not all(f in FAMILIES for f in missing):
            return text_result(
                f"mutate_catalog: missing_lists entries must be among {list(FAMILIES)}",
                is_error=True,
            )
    rejects: tuple[int, list[str] | None, str | None] | None = None
    if "reject_versions" in args:
        spec = args["reject_versions"]
        count, supported = spec.get("count", 1), spec.get("supported")
        method = spec.get("method")
        if method is not None and not isinstance(method, str):
            return text_result(
                "mutate_catalog: reject_versions.method must be a string", is_error=True
            )
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            return text_result(
                "mutate_catalog: reject_versions.count must be an integer >= 0", is_error=True
            )
        if supported is not None and (
            not isinstance(supported, list) or not all(isinstance(v, str) for v in supported)
        ):
            return text_result(
                "mutate_catalog: reject_versions.supported must be a list of strings",
                is_error=True,
            )
        rejects = (count, supported, method)

    report: dict[str, Any] = {}
    # List behavior first: a refresh triggered by the notifications below must see it.
    if "fail_lists" in args:
        core.set_fail_lists(args["fail_lists"])
        report["fail_lists"] = args["fail_lists"]
    if "list_delay" in args:
        core.set_list_delay(float(args["list_delay"]))
        report["list_delay"] = args["list_delay"]
    if missing is not None:
        core.set_missing_lists(missing)
        report["missing_lists"] = sorted(set(missing))
    if rejects is not None:
        core.config.version_rejects.set(*rejects)
        report["reject_versions"] = rejects[0]
    changed = False
    if new_tools is not None:
        core.catalog.set_tools(new_tools)
        report["set_tools"] = len(new_tools)
        changed = True
    if "add" in args:
        report["added"] = core.catalog.add_tool(args["add"])
        changed = changed or report["added"]
    if "remove" in args:
        report["removed"] = core.catalog.remove_tool(args["remove"])
        changed = changed or report["removed"]
    if changed:
        core.notify_list_changed("tools")
    if "touch" in args:
        core.notify_resource_updated(args["touch"])
        report["touched"] = args["touch"]
    if "notify" in args:
        core.notify_list_changed(args["notify"])
        report["notified"] = args["notify"]
    if storm is not None:
        family, count = storm
        for _ in range(count):
            core.notify_list_changed(family)
        report["storm"] = {"count": count, "family": family}
    return text_result(json.dumps(report, sort_keys=True))


# --------------------------------------------------------------------- asking the client

#: The ``requestState`` the ``ask`` tool uses when given none.
DEFAULT_ASK_STATE = "ask-state"


def _state_round(state: Any) -> int:
    """The round a ``requestState`` issued by :func:`ask_inputs` names (0: none/foreign)."""
    if not isinstance(state, str) or not state.startswith("r"):
        return 0
    head, sep, _rest = state.partition(":")
    return int(head[1:]) if sep and head[1:].isdigit() else 0


def ask_inputs(
    core: ToolCore,
    request: ToolRequest,
    inputs: list[tuple[str, str, Any]],
    *,
    rounds: int = 1,
    state: str | None = DEFAULT_ASK_STATE,
    forever: bool = False,
) -> tuple[Result | None, Result]:
    """Ask the client for ``inputs`` (``(key, method, params)``), era-appropriately.

    Modern era (MRTR): returns ``(input_required_result, {})`` until the retry
    carries ``inputResponses`` for every key, for ``rounds`` rounds (a round
    whose answers are missing is asked again), then ``(None, answers)``. The
    ``requestState`` issued is ``"r<round>:<state>"`` (omitted when ``state``
    is None; then one round only). ``forever`` never completes.
    Legacy era: sends each input as a server-to-client request, ``rounds``
    times, and returns ``(None, answers)`` at once.

    ``answers`` is ``{"inputResponses": {key: ...}, "requestState": <as
    received, modern>, "rounds": n}``; a legacy answer is the client's
    ``{"result": ...}`` or ``{"error": ...}``.
    """
    keys = [key for key, _m, _p in inputs]
    if request.era != "modern":
        responses: dict[str, Any] = {}
        for _ in range(rounds):
            for key, method, params in inputs:
                response = core.request_client(request, method, params)
                if response is None:
                    responses[key] = None
                else:
                    responses[key] = {k: response[k] for k in ("result", "error") if k in response}
        return None, {"inputResponses": responses, "rounds": rounds}
    received_state = request.params.get("requestState")
    received = request.params.get("inputResponses")
    covered = not keys or (isinstance(received, dict) and all(k in received for k in keys))
    if state is None:
        done = bool(keys) and covered
        n = 1 if done else 0
    else:
        n = _state_round(received_state)
        done = n >= 1 and covered and n >= rounds
    if done and not forever:
        return None, {"inputResponses": received, "requestState": received_state, "rounds": n}
    next_round = n + 1 if (n == 0 or covered) else n
    result: Result = {"resultType": "input_required"}
    if inputs:
        result["inputRequests"] = {
            key: {"method": method, **({"params": params} if params is not None else {})}
            for key, method, params in inputs
        }
    if state is not None:
        result["requestState"] = f"r{next_round}:{state}"
    return result, {}


def _ask(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    inputs: list[tuple[str, str, Any]] = []
    for entry in args["inputs"]:
        if not isinstance(entry, dict):
            raise _BadArgumentError("each input must be an object")
        key, method = entry.get("key"), entry.get("method")
        if not isinstance(key, str) or not isinstance(method, str):
            raise _BadArgumentError("each input needs a string `key` and `method`")
        inputs.append((key, method, entry.get("params")))
    state = args.get("state", DEFAULT_ASK_STATE)
    if state is not None and not isinstance(state, str):
        raise _BadArgumentError("state must be a string or null")
    required, answers = ask_inputs(
        core,
        request,
        inputs,
        rounds=_int_arg(args, "rounds", 1),
        state=state,
        forever=args.get("forever") is True,
    )
    if required is not None:
        return required
    return text_result(json.dumps(answers, sort_keys=True, ensure_ascii=False))


def _ask_tool(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    try:
        return _ask(core, request, args)
    except _BadArgumentError as exc:
        return text_result(f"ask: {exc}", is_error=True)


# --------------------------------------------------------------------- hostile actions


def _int_arg(args: dict[str, Any], name: str, default: int) -> int:
    value = args.get(name, default)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _BadArgumentError(f"{name} must be a number")
    return int(value)


def _float_arg(args: dict[str, Any], name: str, default: float) -> float:
    value = args.get(name, default)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _BadArgumentError(f"{name} must be a number")
    return float(value)


class _BadArgumentError(ValueError):
    pass


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
    size = _int_arg(args, "bytes", DEFAULT_OVERSIZED_BYTES)
    id_at = args.get("id_at", "head")
    if id_at not in ("head", "tail", "none"):
        raise _BadArgumentError("id_at must be head, tail or none")
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
    depth = _int_arg(args, "depth", 100_000)
    request.channel.send_raw([b"[" * depth, b"]" * depth, b"\n"])
    return _done("deep_json")


def _exit(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    code = _int_arg(args, "code", 1)
    if args.get("partial") is True:  # half a frame (no newline), then EOF
        request.channel.send_raw([_response_prefix(request)])
    request.channel.exit_process(code)
    return None


def _never_answer(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    return None


def _ignore_cancel(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    seconds = _float_arg(args, "seconds", 1.0)
    time.sleep(max(0.0, seconds))
    request.respond(text_result(f"slept {seconds:g} s, ignoring cancellation"), force=True)
    return None


def _progress_forever(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    interval = _float_arg(args, "interval", 0.1)
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
    flood_stderr(request.channel.write_stderr, _int_arg(args, "bytes", 1024 * 1024))
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
    count = _int_arg(args, "count", 1000)
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
        timeout = _float_arg(args, "timeout", 0.0)
    response = core.request_client(request, method, args.get("params"), timeout)
    if response is None:
        if request.cancelled.is_set():
            return None
        return text_result(f"no answer to {method} within {timeout} s", is_error=True)
    body = {k: response[k] for k in ("result", "error") if k in response}
    return text_result(json.dumps(body, sort_keys=True), is_error="error" in response)


def _result(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    if "result" not in args:
        raise _BadArgumentError("result is required")
    request.respond_raw(args["result"])
    return None


def _error(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    # Sent as given: a hostile code may be a string, a float or missing (None).
    code = args.get("code", -32000)
    message = args.get("message", "induced error")
    request.fail(cast(int, code), cast(str, message), args.get("data"))
    return None


def _script_result(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    method = args.get("method")
    if not isinstance(method, str) or "result" not in args:
        raise _BadArgumentError("a string `method` and a `result` are required")
    core.script_result(method, args["result"])
    return _done("script_result")


_HOSTILE: dict[str, _Tool] = {
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
    "result": _result,
    "error": _error,
    "script_result": _script_result,
}
assert tuple(_HOSTILE) == HOSTILE_ACTIONS


def _hostile(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    # The enum check already ran; transport actions come from the front end (HTTP).
    action = _HOSTILE.get(args["action"]) or core.transport_actions.get(args["action"])
    if action is None:
        return text_result(f"hostile {args['action']}: only over HTTP", is_error=True)
    try:
        return action(core, request, args)
    except _BadArgumentError as exc:
        return text_result(f"hostile {args['action']}: {exc}", is_error=True)


_TOOLS: dict[str, _Tool] = {
    "echo": _echo,
    "add": _add,
    "slow": _slow,
    "progress": _progress,
    "fail": _fail,
    "log": _log,
    "hostile": _hostile,
    "mutate_catalog": _mutate_catalog,
    "ask": _ask_tool,
}
