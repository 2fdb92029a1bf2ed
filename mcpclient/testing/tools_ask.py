"""Asking the client for input: :func:`ask_inputs` and the ``ask`` tool.

Modern era: MRTR ``input_required`` results; legacy era: server-to-client
requests. Standard library only.
"""

from __future__ import annotations

import json
from typing import Any

from .tools_api import BadArgumentError, Result, ToolCore, ToolRequest, int_arg, text_result

__all__ = ["DEFAULT_ASK_STATE", "ask_inputs", "ask_tool"]

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
            raise BadArgumentError("each input must be an object")
        key, method = entry.get("key"), entry.get("method")
        if not isinstance(key, str) or not isinstance(method, str):
            raise BadArgumentError("each input needs a string `key` and `method`")
        inputs.append((key, method, entry.get("params")))
    state = args.get("state", DEFAULT_ASK_STATE)
    if state is not None and not isinstance(state, str):
        raise BadArgumentError("state must be a string or null")
    required, answers = ask_inputs(
        core,
        request,
        inputs,
        rounds=int_arg(args, "rounds", 1),
        state=state,
        forever=args.get("forever") is True,
    )
    if required is not None:
        return required
    return text_result(json.dumps(answers, sort_keys=True, ensure_ascii=False))


def ask_tool(core: ToolCore, request: ToolRequest, args: dict[str, Any]) -> Result | None:
    """The ``ask`` tool: :func:`ask_inputs` with the inputs its arguments name."""
    try:
        return _ask(core, request, args)
    except BadArgumentError as exc:
        return text_result(f"ask: {exc}", is_error=True)
