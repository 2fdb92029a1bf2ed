"""Prompt requests: the local checks before ``prompts/get`` is sent.

Like a tool call's arguments, a prompt's are checked on the caller's thread
against what the adopted catalog says, so a request the server is bound to
refuse never leaves the client.
"""

from __future__ import annotations

from collections.abc import Mapping

from mcpclient._core.limits import bound
from mcpclient.catalog import Catalog
from mcpclient.errors import InvalidArgumentsError

__all__ = ["check_prompt_arguments"]

#: How many missing argument names one error lists before it summarizes.
_MAX_NAMED = 8


def check_prompt_arguments(
    name: str, arguments: Mapping[str, str] | None, *, adopted: Catalog, binding: str
) -> None:
    """Refuse a prompt request that lacks an argument the catalog marks required.

    A prompt the adopted catalog does not list is left to the server (the
    catalog may be a generation behind it).

    Raises:
        InvalidArgumentsError: naming every missing required argument.
    """
    spec = next((p for p in adopted.prompts if p.name == name), None)
    if spec is None:
        return
    given = arguments or {}
    missing = [arg.name for arg in spec.arguments if arg.required and arg.name not in given]
    if not missing:
        return
    named = ", ".join(repr(bound(arg, 64)) for arg in missing[:_MAX_NAMED])
    if len(missing) > _MAX_NAMED:
        named += f" and {len(missing) - _MAX_NAMED} more"
    raise InvalidArgumentsError(
        f"arguments for prompt {bound(name, 64)!r} lack required argument(s) {named}",
        binding=binding,
        op="get_prompt",
    )
