"""The test server's tools, prompts and resources, and how they are paged.

The built-in definitions live here as plain JSON-shaped dictionaries; a catalog
file (``--catalog``) may replace any family's listing. Standard library only.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .apps import APP_RESOURCES, APP_TOOLS

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "FAMILIES",
    "HELLO_TEXT",
    "HOSTILE_ACTIONS",
    "HTTP_HOSTILE_ACTIONS",
    "HUGE_CURSOR_BYTES",
    "LOG_LEVELS",
    "MRTR_PROMPT",
    "MRTR_RESOURCE",
    "MRTR_TOOL_NAMES",
    "Catalog",
    "CatalogFileError",
    "CursorError",
    "builtin_tool",
    "load_catalog_file",
    "resolve_tool_entries",
    "synthetic_item",
]

#: List result key for each paginated family, keyed by family name.
FAMILIES: Mapping[str, str] = {
    "tools": "tools",
    "prompts": "prompts",
    "resources": "resources",
    "resourceTemplates": "resourceTemplates",
}

#: Length in bytes of the first page's ``nextCursor`` under ``--huge-cursor``.
HUGE_CURSOR_BYTES = 5000

#: The `hostile` tool's actions, in documentation order.
HOSTILE_ACTIONS: tuple[str, ...] = (
    "oversized_line",
    "garbage_line",
    "invalid_utf8",
    "deep_json",
    "exit",
    "never_answer",
    "ignore_cancel",
    "progress_forever",
    "duplicate_response",
    "unknown_id",
    "stderr_flood",
    "close_stdout",
    "notification_flood",
    "server_request",
    "server_request_flood",
    "result",
    "error",
    "script_result",
    "count",
)

#: Actions only the HTTP front end implements (``--transport http``), in documentation order.
HTTP_HOSTILE_ACTIONS: tuple[str, ...] = (
    "expire_session",
    "session_404_storm",
    "drop_stream",
    "oversized_body",
    "oversized_event",
    "bad_answer",
    "trickle",
    "status",
    "ping_flood",
    "hold_accepts",
    "echo_request",
)

#: RFC 5424 levels, least severe first.
LOG_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


def _obj(properties: dict[str, Any], required: Sequence[str] = (), **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    schema.update(extra)
    return schema


_BUILTIN_TOOLS: dict[str, dict[str, Any]] = {
    "echo": {
        "name": "echo",
        "description": "Echo the message back as text.",
        "inputSchema": _obj(
            {"message": {"type": "string", "description": "Text to echo."}},
            ["message"],
            additionalProperties=False,
        ),
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    "add": {
        "name": "add",
        "description": "Add two numbers; the sum also comes back as structured content.",
        "inputSchema": _obj(
            {"a": {"type": "number"}, "b": {"type": "number"}},
            ["a", "b"],
            additionalProperties=False,
        ),
        "outputSchema": _obj({"sum": {"type": "number"}}, ["sum"]),
    },
    "slow": {
        "name": "slow",
        "description": "Sleep for `seconds` (stops early when cancelled), then answer.",
        "inputSchema": _obj({"seconds": {"type": "number", "minimum": 0}}, ["seconds"]),
    },
    "progress": {
        "name": "progress",
        "description": "Send `steps` progress notifications `interval` seconds apart, then answer.",
        "inputSchema": _obj(
            {
                "steps": {"type": "integer", "minimum": 0},
                "interval": {"type": "number", "minimum": 0},
            }
        ),
    },
    "fail": {
        "name": "fail",
        "description": "Always answer with a tool error (isError: true).",
        "inputSchema": _obj({"message": {"type": "string"}}),
    },
    "log": {
        "name": "log",
        "description": "Emit one notifications/message at `level` (filtered by the log level).",
        "inputSchema": _obj(
            {
                "level": {"type": "string", "enum": list(LOG_LEVELS)},
                "message": {"type": "string"},
                "logger": {"type": "string"},
                "data": {},
            },
            ["message"],
        ),
    },
    "hostile": {
        "name": "hostile",
        "description": "Misbehave on purpose; `action` picks how (see mcpclient.testing.server).",
        "inputSchema": _obj(
            {"action": {"type": "string", "enum": [*HOSTILE_ACTIONS, *HTTP_HOSTILE_ACTIONS]}},
            ["action"],
            additionalProperties=True,
        ),
    },
    "mutate_catalog": {
        "name": "mutate_catalog",
        "description": (
            "Change the catalog and notify subscribers (list_changed / "
            "resources/updated), or script list failures, delays and notifications."
        ),
        "inputSchema": _obj(
            {
                "add": {"type": "string"},
                "remove": {"type": "string"},
                "touch": {"type": "string"},
                "set_tools": {"type": "array"},
                "notify": {"type": "string", "enum": ["tools", "prompts", "resources"]},
                "storm": {"type": "object"},
                "fail_lists": {"type": "integer", "minimum": -1},
                "list_delay": {"type": "number", "minimum": 0},
                "missing_lists": {"type": "array", "items": {"type": "string"}},
                "reject_versions": {"type": "object"},
            }
        ),
    },
    "ask": {
        "name": "ask",
        "description": (
            "Ask the client for inputs: modern era, input_required rounds (MRTR); "
            "legacy era, server-to-client requests. Listed only with --mrtr."
        ),
        "inputSchema": _obj(
            {
                "inputs": {"type": "array"},
                "rounds": {"type": "integer", "minimum": 1},
                "state": {"description": "The requestState (a string; null: none)."},
                "forever": {"type": "boolean"},
            },
            ["inputs"],
        ),
    },
}

#: Built-in tools listed only with ``--mrtr`` (after the default ones).
MRTR_TOOL_NAMES: tuple[str, ...] = ("ask",)

#: Names of the tools the server implements itself, in their default listing order.
BUILTIN_TOOL_NAMES: tuple[str, ...] = tuple(n for n in _BUILTIN_TOOLS if n not in MRTR_TOOL_NAMES)

#: The prompt and the resource that ask for a name first (listed only with ``--mrtr``).
MRTR_PROMPT = "ask_prompt"
MRTR_RESOURCE = "test://ask"

_MRTR_PROMPTS: list[dict[str, Any]] = [
    {
        "name": MRTR_PROMPT,
        "description": "Asks for a name by elicitation (MRTR in the modern era), then greets.",
        "arguments": [{"name": "state", "description": "The requestState to use."}],
    }
]

_MRTR_RESOURCES: list[dict[str, Any]] = [
    {
        "uri": MRTR_RESOURCE,
        "name": "ask",
        "description": "Asks for a name by elicitation (MRTR in the modern era), then greets.",
        "mimeType": "text/plain",
    }
]

_DEFAULT_PROMPTS: list[dict[str, Any]] = [
    {
        "name": "greet",
        "description": "A greeting for `name`.",
        "arguments": [{"name": "name", "description": "Who to greet.", "required": True}],
    }
]

_DEFAULT_RESOURCES: list[dict[str, Any]] = [
    {
        "uri": "test://static/hello",
        "name": "hello",
        "description": "A static text resource.",
        "mimeType": "text/plain",
    }
]

_DEFAULT_TEMPLATES: list[dict[str, Any]] = [
    {
        "uriTemplate": "test://items/{id}",
        "name": "item",
        "description": "One item by id.",
        "mimeType": "text/plain",
    }
]

#: The text of ``test://static/hello``.
HELLO_TEXT = "Hello from mcpclient-testing."


def builtin_tool(name: str) -> dict[str, Any] | None:
    """Return a fresh copy of the built-in tool definition ``name``, or None."""
    tool = _BUILTIN_TOOLS.get(name)
    return copy.deepcopy(tool) if tool is not None else None


class CatalogFileError(ValueError):
    """The ``--catalog`` file is unreadable or not shaped as documented."""


class CursorError(ValueError):
    """A pagination cursor this server did not issue (answered with -32602)."""


def load_catalog_file(path: str) -> dict[str, list[Any]]:
    """Read a catalog file and return the families it replaces.

    The file is a JSON object with any of the keys ``tools``, ``prompts``,
    ``resources`` and ``resourceTemplates``, each a list. A present key replaces
    that family's default listing; an absent key keeps the default. A ``tools``
    entry may be a bare string naming a built-in tool, which stands for that
    tool's built-in definition. Entries are otherwise passed through verbatim,
    so a catalog may hold deliberately malformed definitions.

    Raises:
        CatalogFileError: the file cannot be read or has the wrong shape.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise CatalogFileError(f"cannot read catalog {path!r}: {exc}") from exc
    if not isinstance(data, dict):
        raise CatalogFileError(f"catalog {path!r}: top level must be an object")
    out: dict[str, list[Any]] = {}
    for key, value in data.items():
        if key not in FAMILIES:
            raise CatalogFileError(f"catalog {path!r}: unknown key {key!r}")
        if not isinstance(value, list):
            raise CatalogFileError(f"catalog {path!r}: {key!r} must be a list")
        if key != "tools":
            out[key] = list(value)
            continue
        try:
            out[key] = resolve_tool_entries(value)
        except ValueError as exc:
            raise CatalogFileError(f"catalog {path!r}: {exc}") from exc
    return out


def resolve_tool_entries(entries: Sequence[Any]) -> list[Any]:
    """Return a deep copy of ``entries`` with each bare string replaced by that built-in tool.

    Any other entry is kept verbatim, however malformed (used by ``--catalog`` and by
    ``mutate_catalog``'s ``set_tools``).

    Raises:
        ValueError: a string entry names no built-in tool.
    """
    out: list[Any] = []
    for entry in entries:
        if isinstance(entry, str):
            tool = builtin_tool(entry)
            if tool is None:
                raise ValueError(f"no built-in tool {entry!r}")
            out.append(tool)
        else:
            out.append(copy.deepcopy(entry))
    return out


def synthetic_item(family: str, index: int) -> dict[str, Any]:
    """Return generated item ``index`` of ``family`` (``--item-count``, ``--endless-pages``).

    Tools ``t0000`` (input schema ``{"type": "object"}``), prompts ``p0000`` (no
    arguments), resources ``test://gen/0000`` (named ``r0000``), templates
    ``test://gen/0000/{id}`` (named ``rt0000``); at least four digits.
    """
    tag = f"{index:04d}"
    if family == "tools":
        return {
            "name": f"t{tag}",
            "description": f"Generated tool {index}; echoes its arguments.",
            "inputSchema": {"type": "object"},
        }
    if family == "prompts":
        return {"name": f"p{tag}", "description": f"Generated prompt {index}."}
    if family == "resources":
        return {"uri": f"test://gen/{tag}", "name": f"r{tag}", "mimeType": "text/plain"}
    if family == "resourceTemplates":
        return {
            "uriTemplate": f"test://gen/{tag}/{{id}}",
            "name": f"rt{tag}",
            "mimeType": "text/plain",
        }
    raise ValueError(f"unknown family {family!r}")


# What a generated item's key looks like, per family (group 1: the index digits).
_SYNTHETIC_KEYS: Mapping[str, re.Pattern[str]] = {
    "tools": re.compile(r"t(\d{4,})\Z"),
    "prompts": re.compile(r"p(\d{4,})\Z"),
    "resources": re.compile(r"test://gen/(\d{4,})\Z"),
    "resourceTemplates": re.compile(r"test://gen/(\d{4,})/[^/]+\Z"),
}


def _synthetic_index(family: str, key: str) -> int | None:
    match = _SYNTHETIC_KEYS[family].match(key)
    if match is None:
        return None
    index = int(match.group(1))
    # Only the canonical spelling (t0007, not t00007) names a generated item.
    return index if f"{index:04d}" == match.group(1) else None


def _template_regex(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{[^{}]*\}", template)
    return re.compile("[^/]+".join(re.escape(p) for p in parts) + r"\Z")


class Catalog:
    """The live listing of the four paginated families, and how each is paged.

    Pagination quirks (per family): ``cursor_loop`` families hand out a cursor
    whose page answers with that same cursor again; ``endless_pages`` families
    page one item at a time forever (the listing, then generated items);
    ``huge_cursor`` families pad the first page's cursor to
    :data:`HUGE_CURSOR_BYTES`. Both ``cursor_loop`` and ``huge_cursor`` give the
    first page a cursor even when the listing fits on it.

    Thread safety: every method may be called from any thread; the tool list is
    mutated at runtime by ``mutate_catalog``.
    """

    def __init__(
        self,
        overrides: Mapping[str, list[Any]] | None = None,
        *,
        page_size: int = 0,
        item_counts: Mapping[str, int] | None = None,
        cursor_loop: Iterable[str] = (),
        endless_pages: Iterable[str] = (),
        huge_cursor: Iterable[str] = (),
        mrtr: bool = False,
        apps: bool = False,
        extra_tools: Iterable[dict[str, Any]] = (),
    ) -> None:
        """Start from the defaults, replacing the families named in ``overrides``.

        ``apps`` appends the MCP Apps tools and view of :mod:`.apps`.
        ``extra_tools`` are appended to the default tools (the tasks
        extension's ``task`` tool).

        ``item_counts`` appends that many generated items (:func:`synthetic_item`)
        to each named family's listing. ``mrtr`` appends the ``ask`` tool, the
        ``ask_prompt`` prompt and the ``test://ask`` resource to the defaults.
        """
        self._lock = threading.Lock()
        self.page_size = page_size
        self._families: dict[str, list[Any]] = {
            "tools": [builtin_tool(n) for n in BUILTIN_TOOL_NAMES],
            "prompts": copy.deepcopy(_DEFAULT_PROMPTS),
            "resources": copy.deepcopy(_DEFAULT_RESOURCES),
            "resourceTemplates": copy.deepcopy(_DEFAULT_TEMPLATES),
        }
        if mrtr:
            self._families["tools"].extend(builtin_tool(n) for n in MRTR_TOOL_NAMES)
            self._families["prompts"].extend(copy.deepcopy(_MRTR_PROMPTS))
            self._families["resources"].extend(copy.deepcopy(_MRTR_RESOURCES))
        if apps:
            self._families["tools"].extend(copy.deepcopy(APP_TOOLS))
            self._families["resources"].extend(copy.deepcopy(APP_RESOURCES))
        self._families["tools"].extend(copy.deepcopy(list(extra_tools)))
        for key, items in (overrides or {}).items():
            self._families[key] = copy.deepcopy(list(items))
        for key, count in (item_counts or {}).items():
            self._families[key].extend(synthetic_item(key, i) for i in range(count))
        self.cursor_loop = frozenset(cursor_loop)
        self.endless_pages = frozenset(endless_pages)
        self.huge_cursor = frozenset(huge_cursor)
        unknown = (self.cursor_loop | self.endless_pages | self.huge_cursor) - set(FAMILIES)
        if unknown:
            raise ValueError(f"unknown families {sorted(unknown)}")

    def items(self, family: str) -> list[Any]:
        """Return a snapshot of ``family``'s listing."""
        with self._lock:
            return copy.deepcopy(self._families[family])

    def set_tools(self, tools: Sequence[Any]) -> None:
        """Replace the whole tool listing with ``tools`` (kept verbatim)."""
        with self._lock:
            self._families["tools"] = copy.deepcopy(list(tools))

    def page(self, family: str, cursor: object) -> tuple[list[Any], str | None]:
        """Return one page of ``family`` and the cursor of the next page (None at the end).

        Raises:
            CursorError: ``cursor`` was not issued by this server for ``family``.
        """
        first = cursor is None
        offset, loop = (0, False) if first else self._decode_cursor(family, cursor)
        pad = first and family in self.huge_cursor
        with self._lock:
            listing = self._families[family]
            size = len(listing)
            if family in self.endless_pages:
                if offset < size:
                    item = copy.deepcopy(listing[offset])
                else:
                    item = synthetic_item(family, offset)
                return [item], self._encode_cursor(family, offset + 1, pad=pad)
            if offset > size and not loop:
                raise CursorError("cursor is past the end of the list")
            end = min(offset + self.page_size, size) if self.page_size > 0 else size
            items = copy.deepcopy(listing[offset:end])
        if loop:
            return items, str(cursor)  # the very cursor asked with: the loop
        if first and family in self.cursor_loop:
            return items, self._encode_cursor(family, end, loop=True, pad=pad)
        if end < size or pad:
            return items, self._encode_cursor(family, end, pad=pad)
        return items, None

    @staticmethod
    def _encode_cursor(family: str, offset: int, *, loop: bool = False, pad: bool = False) -> str:
        data: dict[str, Any] = {"f": family, "o": offset}
        if loop:
            data["l"] = 1
        if pad:
            # Base64 turns 3 bytes into 4 characters: pad the JSON to the exact length.
            data["p"] = ""
            bare = len(json.dumps(data, separators=(",", ":")))
            data["p"] = "x" * (HUGE_CURSOR_BYTES // 4 * 3 - bare)
        raw = json.dumps(data, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode("ascii")

    @staticmethod
    def _decode_cursor(family: str, cursor: object) -> tuple[int, bool]:
        """Return the cursor's offset and whether it is a loop cursor."""
        if not isinstance(cursor, str):
            raise CursorError("cursor must be a string")
        try:
            data = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
        except (ValueError, UnicodeError) as exc:
            raise CursorError("unknown cursor") from exc
        if not isinstance(data, dict) or data.get("f") != family:
            raise CursorError("unknown cursor")
        offset = data.get("o")
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise CursorError("unknown cursor")
        if data.get("l", 1) != 1 or not isinstance(data.get("p", ""), str):
            raise CursorError("unknown cursor")
        return offset, "l" in data

    def _endless_item(self, family: str, key: str) -> dict[str, Any] | None:
        if family not in self.endless_pages:
            return None
        index = _synthetic_index(family, key)
        return None if index is None else synthetic_item(family, index)

    def tool(self, name: str) -> dict[str, Any] | None:
        """Return the listed tool called ``name``, or None when it is not listed."""
        with self._lock:
            for tool in self._families["tools"]:
                if isinstance(tool, dict) and tool.get("name") == name:
                    return copy.deepcopy(tool)
        return self._endless_item("tools", name)

    def prompt(self, name: str) -> dict[str, Any] | None:
        """Return the listed prompt called ``name``, or None."""
        with self._lock:
            for prompt in self._families["prompts"]:
                if isinstance(prompt, dict) and prompt.get("name") == name:
                    return copy.deepcopy(prompt)
        return self._endless_item("prompts", name)

    def add_tool(self, name: str) -> bool:
        """List a tool called ``name`` (built-in definition if there is one); False if listed."""
        definition = builtin_tool(name) or {
            "name": name,
            "description": "Added at runtime; echoes its arguments.",
            "inputSchema": {"type": "object"},
        }
        with self._lock:
            tools = self._families["tools"]
            if any(isinstance(t, dict) and t.get("name") == name for t in tools):
                return False
            tools.append(definition)
            return True

    def remove_tool(self, name: str) -> bool:
        """Unlist the tool called ``name``; False if it was not listed."""
        with self._lock:
            tools = self._families["tools"]
            kept = [t for t in tools if not (isinstance(t, dict) and t.get("name") == name)]
            self._families["tools"] = kept
            return len(kept) != len(tools)

    def find_resource(self, uri: str) -> tuple[str, dict[str, Any]] | None:
        """Match ``uri`` against listed resources, then templates.

        Returns ``("resource", entry)`` or ``("template", entry)``, or None.
        """
        with self._lock:
            for res in self._families["resources"]:
                if isinstance(res, dict) and res.get("uri") == uri:
                    return "resource", copy.deepcopy(res)
            for tpl in self._families["resourceTemplates"]:
                if not isinstance(tpl, dict) or not isinstance(tpl.get("uriTemplate"), str):
                    continue
                if _template_regex(tpl["uriTemplate"]).match(uri):
                    return "template", copy.deepcopy(tpl)
        resource = self._endless_item("resources", uri)
        if resource is not None:
            return "resource", resource
        template = self._endless_item("resourceTemplates", uri)
        return None if template is None else ("template", template)
