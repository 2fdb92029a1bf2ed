"""A bare MCP server over stdio: the least work that still lets a real client talk.

It answers ``initialize`` (legacy era only), ``ping``, ``tools/list`` and
``tools/call`` for ``echo(text)``, ``blob(n)`` and ``slow(ms)``; every other
request gets -32601 (so a client probing ``server/discover`` falls back to the
handshake), and notifications are ignored. It validates nothing and uses only
the standard library, so what a client measures against it is the client's
own cost.

Run: ``python benchmarks/bare_server.py``.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time

PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST = PROTOCOL_VERSIONS[-1]


def _tool(name: str, description: str, prop: str, kind: str) -> dict[str, object]:
    return {
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {prop: {"type": kind}},
            "required": [prop],
        },
    }


TOOLS = [
    _tool("echo", "Echo the text back.", "text", "string"),
    _tool("blob", "Return n bytes of text.", "n", "integer"),
    _tool("slow", "Sleep ms milliseconds.", "ms", "integer"),
]


def _text_result(text: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def _call(params: dict[str, object]) -> dict[str, object]:
    name = params.get("name")
    args = params.get("arguments") or {}
    assert isinstance(args, dict)
    if name == "echo":
        return _text_result(str(args.get("text", "")))
    if name == "blob":
        return _text_result("x" * int(args.get("n", 0)))
    if name == "slow":
        time.sleep(int(args.get("ms", 0)) / 1000)
        return _text_result("ok")
    return {"content": [{"type": "text", "text": f"unknown tool {name}"}], "isError": True}


def _answer(method: str, params: dict[str, object]) -> dict[str, object] | None:
    if method == "tools/call":
        return _call(params)
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "ping":
        return {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        return {
            "protocolVersion": asked if asked in PROTOCOL_VERSIONS else LATEST,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench-bare", "version": "1.0"},
        }
    return None


def main() -> None:
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    loads = json.loads
    for line in stdin:
        if not line.strip():
            continue
        message = loads(line)
        if "id" not in message or "method" not in message:
            continue  # a notification (or a response): nothing to answer
        result = _answer(message["method"], message.get("params") or {})
        if result is None:
            reply = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": -32601, "message": f"method not found: {message['method']}"},
            }
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        stdout.write(dumps(reply).encode())
        stdout.write(b"\n")
        stdout.flush()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        main()
