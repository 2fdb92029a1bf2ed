"""Values a configured server needs before anything is sent: inputs and unset variables.

A VS Code ``${input:id}`` is answered by ``--input id=value``, else (on a
terminal) by a prompt on stderr that does not echo what is typed, as VS Code
asks for a ``password`` input. A variable still without a value (an unset
``${env:VAR}``, an unanswered input) makes the server an error that names
the variable and where the file uses it: the command never sends an empty
credential.
"""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mcpclient.cli.envelope import usage_error
from mcpclient.errors import ConfigError

__all__ = ["Asker", "answers_of", "check_resolved", "prompting", "terminal_asker"]

#: Asks a person for one input: (id, the file's ``inputs`` entry) → the answer or None.
Asker = Callable[[str, Mapping[str, Any]], str | None]


def answers_of(words: Sequence[str]) -> dict[str, str]:
    """The ``--input id=value`` answers.

    Raises:
        CliError: a word is not ``id=value``.
    """
    out: dict[str, str] = {}
    for word in words:
        ident, sep, value = word.partition("=")
        if not sep or not ident.strip():
            raise usage_error(f"--input expects ID=VALUE, got {ident.strip()!r}=...")
        out[ident.strip()] = value
    return out


def terminal_asker() -> Asker | None:
    """A prompt on the terminal, or None when stdin is not one (nobody to ask)."""
    if not sys.stdin.isatty():
        return None

    def ask(ident: str, spec: Mapping[str, Any]) -> str | None:
        description = spec.get("description")
        label = description if isinstance(description, str) and description else ident
        # Always without echo: an input is how a VS Code file asks for a secret.
        return getpass.getpass(f"{label} ({ident}): ", stream=sys.stderr) or None

    return ask


def prompting(given: Mapping[str, str], wanted: set[str], ask: Asker) -> Asker:
    """An ``inputs=`` callable: ``given`` answers first, then ``ask`` for the ``wanted`` ids."""

    def answer(ident: str, spec: Mapping[str, Any]) -> str | None:
        if ident in given:
            return given[ident]
        return ask(ident, spec) if ident in wanted else None

    return answer


def check_resolved(name: str, server: Any) -> None:
    """Refuse ``server`` when a variable it would send has no value.

    Raises:
        ConfigError: ``invalid_config``, naming the variable and its location.
    """
    unresolved = getattr(server, "unresolved", ())
    if not unresolved:
        return
    where, kind, ident = unresolved[0]
    what = {
        "input": f"input {ident} has no answer",
        "file": f"file {ident} cannot be read",
    }.get(kind, f"environment variable {ident} is not set")
    hint = " (pass --input ID=VALUE)" if kind == "input" else ""
    more = f" (and {len(unresolved) - 1} more)" if len(unresolved) > 1 else ""
    raise ConfigError(
        f"server {name!r}: {what}{hint}, used at {where}{more}; nothing was sent",
        op="resolve",
    )
