"""JSON-RPC 2.0 frames the session sends: requests, notifications, answers.

Pure functions, no state: each builds one frame (``bytes``, no newline).
A request's tool arguments that were encoded once, where they were checked
(:class:`JSONArguments`), are spliced into the frame instead of being
encoded a second time.
"""

from __future__ import annotations

from typing import Any

from mcpclient._core import jsonio

__all__ = ["JSONArguments", "encode_notification", "encode_request", "encode_response"]


class JSONArguments(dict[str, Any]):
    """Tool arguments already encoded as JSON text (``encoded``), checked once.

    The session splices ``encoded`` into the frame instead of encoding the
    arguments a second time. It is the caller's own copy, never mutated after
    it was encoded; it still reads as the plain dict (HTTP header hooks, MRTR
    retries that copy the params).
    """

    __slots__ = ("encoded",)
    encoded: bytes  # set once, right after the dict is filled (no __init__: a frame less)


def encode_request(request_id: int, method: str, params: dict[str, Any] | None) -> bytes:
    """One request frame; :class:`JSONArguments` are spliced in, not encoded again."""
    arguments = params.get("arguments") if params is not None else None
    if type(arguments) is not JSONArguments:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        return jsonio.encode(message)
    assert params is not None
    name = params.get("name")
    if len(params) == 2 and type(name) is str:  # a plain tools/call: no dict to encode
        return _TOOLS_CALL % (
            request_id,
            jsonio.encode(method),
            jsonio.encode(name),
            arguments.encoded,
        )
    rest = jsonio.encode({k: v for k, v in params.items() if k != "arguments"})
    return _SPLICED % (
        request_id,
        jsonio.encode(method),
        rest[:-1],  # the other params, their object left open
        b"," if len(rest) > 2 else b"",
        arguments.encoded,
    )


def encode_notification(method: str, params: dict[str, Any] | None) -> bytes:
    """One notification frame."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return jsonio.encode(message)


def encode_response(request_id: Any, result: Any, error: dict[str, Any] | None) -> bytes:
    """One answer to a server request: ``error`` if given, else ``result`` (``{}``: None)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
    if error is not None:
        message["error"] = error
    else:
        message["result"] = result if result is not None else {}
    return jsonio.encode(message)


# The frames encode_request fills in: ``arguments`` goes last, as checked.
_TOOLS_CALL = b'{"jsonrpc":"2.0","id":%d,"method":%b,"params":{"name":%b,"arguments":%b}}'
_SPLICED = b'{"jsonrpc":"2.0","id":%d,"method":%b,"params":%b%b"arguments":%b}}'
