"""The params of ``prompts/get`` and ``completion/complete``, and a completion's result.

Checked on the caller's thread before anything is sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpclient._internal.client.calls.prompts import check_prompt_arguments
from mcpclient._internal.wire.interactions import read_completion
from mcpclient.catalog import Catalog, Completion, PromptRef, ResourceTemplateRef
from mcpclient.errors import ConfigError, InvalidArgumentsError, ProtocolError

__all__ = ["completion_params", "prompt_params", "to_completion"]


def prompt_params(
    name: str, arguments: Mapping[str, str] | None, *, adopted: Catalog, binding: str
) -> dict[str, Any]:
    """The ``prompts/get`` params.

    Raises:
        InvalidArgumentsError: ``arguments`` are not str to str, or lack an
            argument the catalog marks required.
    """
    if arguments is not None and (
        not isinstance(arguments, Mapping)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in arguments.items())
    ):
        raise InvalidArgumentsError(
            "prompt arguments must map str to str", binding=binding, op="get_prompt"
        )
    check_prompt_arguments(name, arguments, adopted=adopted, binding=binding)
    params: dict[str, Any] = {"name": name}
    if arguments:
        params["arguments"] = dict(arguments)
    return params


def completion_params(
    ref: PromptRef | ResourceTemplateRef,
    argument: str,
    value: str,
    context: Mapping[str, str] | None,
) -> dict[str, Any]:
    """The request's params.

    Raises:
        ConfigError: ``ref`` is neither a ``PromptRef`` nor a ``ResourceTemplateRef``.
    """
    if isinstance(ref, PromptRef):
        wire_ref = {"type": "ref/prompt", "name": ref.name}
    elif isinstance(ref, ResourceTemplateRef):
        wire_ref = {"type": "ref/resource", "uri": ref.uri_template}
    else:
        raise ConfigError(
            "complete() ref must be a PromptRef or ResourceTemplateRef", op="complete"
        )
    params: dict[str, Any] = {"ref": wire_ref, "argument": {"name": argument, "value": value}}
    if context:
        params["context"] = {"arguments": dict(context)}
    return params


def to_completion(result: Any, *, binding: str) -> Completion:
    """The server's answer as a :class:`Completion` (at most 100 values, each bounded).

    Raises:
        ProtocolError: the result holds no list of values.
    """
    completion = read_completion(result)
    if completion is None:
        raise ProtocolError(
            "completion/complete returned no values", binding=binding, op="complete"
        )
    return completion
