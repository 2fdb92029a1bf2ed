"""Variable references kept as references: what ``config convert`` writes instead of values.

A load with ``references=True`` does not look variables up: each reference
(``${env:TOKEN}``, ``${input:key}``, ``${file:/run/token}``, Codex's
``bearer_token_env_var``...) becomes a *marker* in the string, and
:func:`render` turns each marker into the target dialect's own syntax, or
says the target cannot express it. The value of a secret is never read, so it
can never be written.

A marker is ``\\x00<kind>\\x1f<name>\\x1f<default>\\x00``: NUL cannot come
from a JSON or TOML string a host would accept, so a marker is never mistaken
for text, and :func:`has_markers` lets a connection refuse a string that
still holds one.
"""

from __future__ import annotations

import re

import attrs

__all__ = ["ENV", "FILE", "INPUT", "Ref", "find", "has_markers", "marker", "render"]

ENV = "env"
INPUT = "input"
FILE = "file"
#: A value taken from an ``envFile`` (its text is never kept).
ENV_FILE = "envfile"

_MARKER = re.compile("\x00([a-z]+)\x1f([^\x1f\x00]*)\x1f([^\x00]*)\x00")
_NO_DEFAULT = "\x02"


@attrs.frozen
class Ref:
    """One reference: its kind (``env``, ``input``, ``file``, ``envfile``) and name."""

    kind: str
    name: str
    default: str | None = None

    def describe(self) -> str:
        """For people: ``environment variable TOKEN``, ``input api-key``..."""
        what = {
            ENV: "environment variable",
            INPUT: "input",
            FILE: "file",
            ENV_FILE: "envFile value",
        }.get(self.kind, self.kind)
        return f"{what} {self.name}"


def marker(kind: str, name: str, default: str | None = None) -> str:
    """The marker standing for a reference in a loaded string."""
    return f"\x00{kind}\x1f{name}\x1f{_NO_DEFAULT if default is None else default}\x00"


def has_markers(text: str) -> bool:
    """Whether ``text`` holds a reference marker."""
    return "\x00" in text


def find(text: str) -> list[Ref]:
    """The references in ``text``, in order."""
    return [
        Ref(m.group(1), m.group(2), None if m.group(3) == _NO_DEFAULT else m.group(3))
        for m in _MARKER.finditer(text)
    ]


def only(text: str) -> Ref | None:
    """The reference ``text`` is made of entirely, or None."""
    match = _MARKER.fullmatch(text)
    return find(text)[0] if match else None


#: How each expansion syntax writes a reference: kind → template ({name}).
_SYNTAX: dict[str, dict[str, str]] = {
    "posix": {ENV: "${{{name}}}"},
    "shell": {ENV: "${{{name}}}"},
    "env": {ENV: "${{env:{name}}}"},
    "windsurf": {ENV: "${{env:{name}}}", FILE: "${{file:{name}}}"},
    "editor": {ENV: "${{env:{name}}}"},
    "vscode": {ENV: "${{env:{name}}}", INPUT: "${{input:{name}}}"},
}


def render(text: str, syntax: str) -> tuple[str | None, list[Ref]]:
    """``text`` with its markers written in ``syntax``; (None, the refs it cannot write) else.

    A ``${VAR:-default}`` keeps its default only in ``posix`` (Claude Code);
    elsewhere the default is dropped and reported.
    """
    refs = find(text)
    if not refs:
        return text, []
    templates = _SYNTAX.get(syntax, {})
    missing = [r for r in refs if r.kind not in templates]
    lost_defaults = [r for r in refs if r.default is not None and syntax != "posix"]
    if missing:
        return None, missing

    def one(match: re.Match[str]) -> str:
        kind, name, default = match.group(1), match.group(2), match.group(3)
        if syntax == "posix" and default != _NO_DEFAULT:
            return f"${{{name}:-{default}}}"
        return templates[kind].format(name=name)

    return _MARKER.sub(one, text), lost_defaults
