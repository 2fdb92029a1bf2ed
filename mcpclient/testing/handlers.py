"""The test server's protocol handlers: handshake, discovery, lists, tools, prompts, resources.

:class:`CatalogHandlers` answers each method from the catalog, the runtime
knobs and the handshake state; the core dispatches to it. Tools run through
:func:`mcpclient.testing.tools.run_tool`, on their own threads.
"""

from __future__ import annotations

import json
import threading
import traceback
from collections.abc import Callable
from typing import Any

from . import tools, tools_api, tools_ask
from .catalog import (
    BUILTIN_TOOL_NAMES,
    HELLO_TEXT,
    LOG_LEVELS,
    MRTR_PROMPT,
    MRTR_RESOURCE,
    CursorError,
)
from .config import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LEGACY_RESOURCE_NOT_FOUND,
    METHOD_NOT_FOUND,
    ServerConfig,
    advertised_capabilities,
    server_info,
)
from .inbound import Channel, Handler, InboundRequest, RequestId, Sink, jsonrpc_error, response
from .state import LegacyHandshake, RuntimeKnobs
from .tasks import TASK_TOOL, TaskStore

__all__ = ["CatalogHandlers"]


class CatalogHandlers:
    """The method handlers of one core (subscriptions aside: see :mod:`.subscriptions`).

    Thread safety: handlers run on the core's reader thread; slow work goes to
    daemon threads of its own.
    """

    def __init__(
        self,
        core: tools_api.ToolCore,
        config: ServerConfig,
        knobs: RuntimeKnobs,
        handshake: LegacyHandshake,
        tasks: TaskStore | None = None,
    ) -> None:
        """Serve ``core``'s catalog under ``config``, its knobs and its handshake.

        ``tasks``: the store of the tasks extension (its ``task`` tool), when declared.
        """
        self._core = core
        self._tasks = tasks
        self.config = config
        self.catalog = core.catalog
        self._knobs = knobs
        self._handshake = handshake

    def initialize(self, rid: RequestId, params: dict[str, Any], ch: Channel, sink: Sink) -> None:
        """``initialize`` (legacy): negotiate the version, once; answered through ``sink``."""
        if self.config.no_initialize_answer:
            return
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            sink.open().fill(jsonrpc_error(rid, INVALID_PARAMS, "protocolVersion is required"))
            return
        supported = self.config.legacy_versions
        refused = self.config.version_rejects.take("initialize", supported)
        if refused is not None:
            # The 2025-11-25 spec's example of a version error (-32602 with data).
            data = {"supported": list(refused), "requested": requested}
            sink.open().fill(
                jsonrpc_error(rid, INVALID_PARAMS, "Unsupported protocol version", data)
            )
            return
        version = requested if requested in supported else max(supported)
        if not self._handshake.establish(version):
            sink.open().fill(jsonrpc_error(rid, INVALID_REQUEST, "Already initialized"))
            return
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": advertised_capabilities(self.config, version),
            "serverInfo": server_info(self.config),
        }
        if self.config.instructions is not None:
            result["instructions"] = self.config.instructions
        sink.open().fill(response(rid, result))
        if self.config.exit_after_initialize:
            ch.exit_process(0)

    def discover(self, request: InboundRequest) -> None:
        """``server/discover`` (modern)."""
        result: dict[str, Any] = {
            "supportedVersions": list(self.config.discover_versions or self.config.modern_versions),
            "capabilities": advertised_capabilities(self.config, None),
            "ttlMs": self.config.ttl_ms,
            "cacheScope": "public",
        }
        if self.config.instructions is not None:
            result["instructions"] = self.config.instructions
        request.respond(result)

    def cache_hints(self, request: InboundRequest, result: dict[str, Any]) -> dict[str, Any]:
        """Add ``ttlMs``/``cacheScope`` to a modern ``result`` (in place; returned)."""
        if request.era == "modern":
            result["ttlMs"] = self.config.ttl_ms
            result["cacheScope"] = "public"
        return result

    def list_handler(self, family: str) -> Handler:
        """The handler of ``family``'s list method (knobs: missing, failing, delayed)."""

        def handler(request: InboundRequest) -> None:
            missing = self._knobs.is_missing(family)
            if missing:
                # As the SDK's low-level server answers a method it has no handler for.
                request.fail(METHOD_NOT_FOUND, "Method not found", request.method)
                return
            # Decided on arrival, so a failure scripted before a list_changed
            # notification hits the refresh that notification triggers.
            fail, delay = self._knobs.take_list_plan()
            if delay <= 0:
                self._answer_list(request, family, fail)
                return
            # Off the reader thread: other requests (and cancellation) go on meanwhile.
            threading.Thread(
                target=self._answer_list,
                args=(request, family, fail, delay),
                name=f"testing-server-list-{request.id}",
                daemon=True,
            ).start()

        return handler

    def _answer_list(
        self, request: InboundRequest, family: str, fail: bool, delay: float = 0.0
    ) -> None:
        if delay > 0 and not request.sleep(delay):
            request.drop()  # cancelled while waiting
            return
        if fail:
            request.fail(INTERNAL_ERROR, "induced failure")
            return
        try:
            items, next_cursor = self.catalog.page(family, request.params.get("cursor"))
        except CursorError as exc:
            request.fail(INVALID_PARAMS, f"Invalid cursor: {exc}")
            return
        if family == "tools" and request.version in ("2024-11-05", "2025-03-26"):
            # Structured output arrived in 2025-06-18; strip it from the built-ins.
            for tool in items:
                if isinstance(tool, dict) and tool.get("name") in BUILTIN_TOOL_NAMES:
                    tool.pop("outputSchema", None)
        result: dict[str, Any] = {family: items}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        request.respond(self.cache_hints(request, result))

    def call_tool(self, request: InboundRequest) -> None:
        """``tools/call``: check the call, then run the tool on its own thread."""
        name = request.params.get("name")
        arguments = request.params.get("arguments")
        if not isinstance(name, str):
            request.fail(INVALID_PARAMS, "name is required")
            return
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            request.fail(INVALID_PARAMS, "arguments must be an object")
            return
        if self.catalog.tool(name) is None:
            request.fail(INVALID_PARAMS, f"Unknown tool: {name}")
            return
        if name == TASK_TOOL["name"] and self._tasks is not None:
            self._tasks.call(request, arguments)  # answers at once, runs on the clock
            return
        thread = threading.Thread(
            target=self._run_tool,
            args=(request, name, arguments),
            name=f"testing-server-call-{request.id}",
            daemon=True,
        )
        thread.start()

    def _run_tool(self, request: InboundRequest, name: str, arguments: dict[str, Any]) -> None:
        try:
            result = tools.run_tool(self._core, request, name, arguments)
        except Exception as exc:
            request.channel.write_stderr(traceback.format_exc().encode("utf-8", "replace"))
            request.fail(INTERNAL_ERROR, f"Internal error: {exc}")
            return
        if result is not None:
            request.respond(result)
        elif request.cancelled.is_set():
            request.drop()

    def get_prompt(self, request: InboundRequest) -> None:
        """``prompts/get``."""
        name = request.params.get("name")
        arguments = request.params.get("arguments") or {}
        prompt = self.catalog.prompt(name) if isinstance(name, str) else None
        if prompt is None:
            request.fail(INVALID_PARAMS, f"Unknown prompt: {name}")
            return
        if not isinstance(arguments, dict) or not all(
            isinstance(v, str) for v in arguments.values()
        ):
            request.fail(INVALID_PARAMS, "arguments must map names to strings")
            return
        for arg in prompt.get("arguments") or ():
            if isinstance(arg, dict) and arg.get("required") and arg.get("name") not in arguments:
                request.fail(INVALID_PARAMS, f"Missing required argument: {arg.get('name')}")
                return
        if name == MRTR_PROMPT:
            self._off_reader(request, self._ask_prompt, arguments.get("state"))
            return
        if name == "greet":
            text = f"Hello, {arguments['name']}!"
        else:
            text = f"Prompt {name} with arguments {json.dumps(arguments, sort_keys=True)}"
        message = {"role": "user", "content": {"type": "text", "text": text}}
        result: dict[str, Any] = {"messages": [message]}
        if isinstance(prompt.get("description"), str):
            result["description"] = prompt["description"]
        request.respond(result)

    def read_resource(self, request: InboundRequest) -> None:
        """``resources/read``."""
        uri = request.params.get("uri")
        if not isinstance(uri, str):
            request.fail(INVALID_PARAMS, "uri is required")
            return
        found = self.catalog.find_resource(uri)
        if found is None:
            code = INVALID_PARAMS if request.era == "modern" else LEGACY_RESOURCE_NOT_FOUND
            request.fail(code, f"Resource not found: {uri}", {"uri": uri})
            return
        _kind, entry = found
        if uri == MRTR_RESOURCE:
            self._off_reader(request, self._ask_resource, None)
            return
        if uri == "test://static/hello":
            text = HELLO_TEXT
        elif uri.startswith("test://items/"):
            text = f"Item {uri.rsplit('/', 1)[1]}"
        else:
            text = f"Contents of {uri}"
        contents: dict[str, Any] = {"uri": uri, "text": text}
        if isinstance(entry.get("mimeType"), str):
            contents["mimeType"] = entry["mimeType"]
        result = self.cache_hints(request, {"contents": [contents]})
        hint = (self.config.read_hints or {}).get(uri)
        if hint is not None and request.era == "modern":  # --read-hint
            result["ttlMs"], result["cacheScope"] = hint
        request.respond(result)

    # The elicitation ``ask_prompt`` and ``test://ask`` make (``--mrtr``).
    _NAME_INPUT = (
        "name",
        "elicitation/create",
        {
            "message": "What is your name?",
            "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
        },
    )

    def _off_reader(
        self,
        request: InboundRequest,
        target: Callable[[InboundRequest, Any], None],
        arg: Any,
    ) -> None:
        """Run ``target`` on its own thread (a legacy one waits for the client's answers)."""
        threading.Thread(
            target=target, args=(request, arg), name=f"testing-server-ask-{request.id}", daemon=True
        ).start()

    def _asked_name(self, request: InboundRequest, state: Any) -> str | None:
        """The name the client gave, ``stranger`` if it gave none; None if answered already."""
        required, answers = tools_ask.ask_inputs(
            self._core,
            request,
            [self._NAME_INPUT],
            state=state if isinstance(state, str) else tools_ask.DEFAULT_ASK_STATE,
        )
        if required is not None:
            request.respond(required)
            return None
        answer = (answers.get("inputResponses") or {}).get("name")
        if isinstance(answer, dict) and isinstance(answer.get("result"), dict):
            answer = answer["result"]  # legacy: the client's response message
        content = answer.get("content") if isinstance(answer, dict) else None
        if (
            isinstance(answer, dict)
            and answer.get("action") == "accept"
            and isinstance(content, dict)
            and isinstance(content.get("name"), str)
        ):
            return str(content["name"])
        return "stranger"

    def _ask_prompt(self, request: InboundRequest, state: Any) -> None:
        name = self._asked_name(request, state)
        if name is None:
            return
        message = {"role": "user", "content": {"type": "text", "text": f"Hello, {name}!"}}
        request.respond({"messages": [message]})

    def _ask_resource(self, request: InboundRequest, _unused: Any) -> None:
        name = self._asked_name(request, None)
        if name is None:
            return
        contents = {"uri": MRTR_RESOURCE, "mimeType": "text/plain", "text": f"Hello, {name}!"}
        request.respond(self.cache_hints(request, {"contents": [contents]}))

    def set_level(self, request: InboundRequest) -> None:
        """``logging/setLevel`` (legacy)."""
        level = request.params.get("level")
        if level not in LOG_LEVELS:
            request.fail(INVALID_PARAMS, f"invalid log level {level!r}")
            return
        self._handshake.set_log_level(str(level))
        request.respond({})

    def complete(self, request: InboundRequest) -> None:
        """``completion/complete``: ``greet``'s ``name`` and the template's ``id``."""
        ref = request.params.get("ref")
        argument = request.params.get("argument")
        if (
            not isinstance(ref, dict)
            or ref.get("type") not in ("ref/prompt", "ref/resource")
            or not isinstance(argument, dict)
            or not isinstance(argument.get("name"), str)
            or not isinstance(argument.get("value"), str)
        ):
            request.fail(INVALID_PARAMS, "ref and argument {name, value} are required")
            return
        candidates: list[str] = []
        if ref.get("type") == "ref/prompt" and ref.get("name") == "greet":
            if argument["name"] == "name":
                candidates = ["alice", "bob", "carol"]
        elif ref.get("uri") == "test://items/{id}" and argument["name"] == "id":
            candidates = ["1", "2", "3"]
        values = [c for c in candidates if c.startswith(argument["value"])]
        request.respond({"completion": {"values": values, "total": len(values), "hasMore": False}})
