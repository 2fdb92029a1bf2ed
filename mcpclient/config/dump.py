"""``dump``: servers → the text of any dialect's file, and what it could not hold."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

import attrs

from mcpclient.config import registry, toml_write
from mcpclient.config.values import ServerConfig
from mcpclient.errors import ConfigError

__all__ = ["Dumped", "dump"]


@attrs.frozen
class Dumped:
    """A written configuration.

    Attributes:
        text: the file's content (JSON, or TOML for Codex). It holds the
            servers' values as loaded, secrets included: write it only where
            the original file could be read.
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

    Variables were expanded when the servers were loaded, so the values are
    written as they are now (a ``${VAR}`` in the source is not kept). A
    mapping's keys are the names written.

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
    document = target.write(items, lost)
    if target.format == "toml":
        text = toml_write.dumps(document)
    else:
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return Dumped(text, target.name, tuple(lost))
