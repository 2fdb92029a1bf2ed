"""``dump``: servers → the text of any dialect's file, and what it could not hold."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from mcpclient.config import refs, registry, toml_write
from mcpclient.config.dialect import Dialect
from mcpclient.config.values import ServerConfig
from mcpclient.errors import ConfigError

__all__ = ["Dumped", "dump"]


@attrs.frozen
class Dumped:
    """A written configuration.

    Attributes:
        text: the file's content (JSON, or TOML for Codex). It holds the
            servers' values as loaded; servers loaded with
            ``references=True`` keep their variable references instead
            (written in the target's syntax), so no secret's value is in it.
        dialect: the dialect written.
        lost: one line per setting the target cannot express (a URL server
            for Claude Desktop, a tool filter for Cursor...), each naming the
            server; those settings, or servers, are left out.
    """

    text: str
    dialect: str
    lost: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"<Dumped {self.dialect}: {len(self.text)} chars, {len(self.lost)} lost>"


def dump(servers: Mapping[str, ServerConfig] | Iterable[ServerConfig], dialect: str) -> Dumped:
    """Write ``servers`` as ``dialect``'s configuration file.

    Servers loaded with ``references=True`` keep each variable reference:
    it is written in the target's syntax (``${VAR}``, ``${env:VAR}``,
    ``${input:id}``, Codex's ``bearer_token_env_var``/``env_http_headers``/
    ``env_vars``); one the target cannot express is left out (a server whose
    command or URL needs it is left out whole) and listed in ``lost``.
    Servers loaded with values are written with those values. A mapping's
    keys are the names written.

    Raises:
        ConfigError: ``dialect`` names no dialect.

    Thread safety: pure; safe from any thread.
    """
    target = registry.get(dialect)
    if target is None:
        raise ConfigError(
            f"unknown dialect {dialect!r}; known: {', '.join(registry.DIALECTS)}", op="dump_config"
        )
    if isinstance(servers, Mapping):
        items = [s if s.name == name else attrs.evolve(s, name=name) for name, s in servers.items()]
    else:
        items = list(servers)
    lost: list[str] = []
    if not target.own_references:
        items = [s for s in (_with_references(s, target, lost) for s in items) if s is not None]
    document = target.write(items, lost)
    if target.format == "toml":
        text = toml_write.dumps(document)
    else:
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return Dumped(text, target.name, tuple(lost))


def _lose_refs(
    lost: list[str], s: ServerConfig, where: str, found: list[refs.Ref], title: str, *, whole: bool
) -> None:
    what = "the server is left out" if whole else "left out"
    for ref in found:
        lost.append(
            f"server {s.name!r}: {title} cannot reference {ref.describe()} in {where}; {what}"
        )


def _with_references(s: ServerConfig, target: Dialect, lost: list[str]) -> ServerConfig | None:
    """``s`` with its reference markers in ``target``'s syntax (None: it cannot be written)."""

    def one(text: str, field: str, where: str) -> str | None:
        allowed = target.expand_fields is None or field in target.expand_fields
        syntax = target.syntax if allowed else "none"
        rendered, problems = refs.render(text, syntax)
        if rendered is None:
            whole = field not in ("env", "headers")
            _lose_refs(lost, s, where, problems, target.title, whole=whole)
        else:
            for ref in problems:
                lost.append(
                    f"server {s.name!r}: {target.title} has no default value for"
                    f" {ref.name}; the default is left out"
                )
        return rendered

    changes: dict[str, Any] = {}
    for field in ("command", "url", "cwd"):
        value = getattr(s, field)
        if value is not None and refs.has_markers(value):
            rendered = one(value, field, field)
            if rendered is None:
                return None
            changes[field] = rendered
    args = [one(a, "args", f"args[{i}]") for i, a in enumerate(s.args)]
    if any(a is None for a in args):
        return None
    changes["args"] = tuple(a for a in args if a is not None)
    for field in ("env", "headers"):
        pairs = []
        for key, value in getattr(s, field):
            rendered = one(value, field, f"{field}.{key}")
            if rendered is not None:
                pairs.append((key, rendered))
        changes[field] = tuple(pairs)
    return attrs.evolve(s, **changes)
