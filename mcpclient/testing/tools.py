"""The built-in tools of the test server and their dispatch (:func:`run_tool`).

Each tool runs on its own daemon thread and returns the ``CallToolResult`` to
send, or None when it answered (or decided not to answer) by itself (see
:mod:`.tools_api`). The ``hostile`` actions live in :mod:`.tools_hostile`,
the ``ask`` tool in :mod:`.tools_ask`. Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .catalog import FAMILIES, builtin_tool, resolve_tool_entries
from .tools_api import Result, Tool, ToolCore, ToolRequest, text_result
from .tools_ask import ask_inputs, ask_tool
from .tools_hostile import flood_stderr, hostile

__all__ = ["ask_inputs", "flood_stderr", "run_tool", "text_result"]

_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


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


_TOOLS: dict[str, Tool] = {
    "echo": _echo,
    "add": _add,
    "slow": _slow,
    "progress": _progress,
    "fail": _fail,
    "log": _log,
    "hostile": hostile,
    "mutate_catalog": _mutate_catalog,
    "ask": ask_tool,
}
