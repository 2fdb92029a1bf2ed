"""Reading one server entry: typed fields, expansion, origins, unknown keys.

Each dialect module walks its file with an :class:`Entry` per server: every
``take_*`` call checks the type, expands the variables the dialect expands,
and notes where the field came from; :meth:`Entry.build` makes the
:class:`~mcpclient.config.ServerConfig` (or records why it cannot).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from mcpclient.config import refs
from mcpclient.config.envfile import read_env_file
from mcpclient.config.expand import Expander
from mcpclient.config.problems import Problems
from mcpclient.config.values import ServerConfig, ToolFilter
from mcpclient.errors import ConfigError

__all__ = ["Context", "Entry", "kind_of", "servers_table"]

Path_ = Sequence[str | int]


def kind_of(value: object) -> str:
    """The JSON type name of ``value`` (for messages that must not show it)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


@attrs.define
class Context:
    """What every entry of one load shares."""

    dialect: str
    problems: Problems
    expander: Expander
    base_dir: Path
    env: Mapping[str, str]


def servers_table(ctx: Context, document: object, path: Path_) -> dict[str, Any] | None:
    """The object at ``path`` in ``document`` (the servers table), or None (recorded)."""
    node = document
    walked: list[str | int] = []
    for part in path:
        if not isinstance(node, dict):
            ctx.problems.error(walked, f"must be an object, got {kind_of(node)}")
            return None
        if part not in node:
            return {}
        node = node[part]
        walked.append(part)
    if not isinstance(node, dict):
        ctx.problems.error(walked, f"must be an object, got {kind_of(node)}")
        return None
    return node


class Entry:
    """One server's raw object being read."""

    def __init__(self, ctx: Context, name: str, raw: object, path: Path_) -> None:
        self.ctx = ctx
        self.name = name
        self.path = list(path)
        self.ok = isinstance(raw, dict)
        self.raw: dict[str, Any] = raw if isinstance(raw, dict) else {}
        self.origins: dict[str, str] = {}
        self.errors_before = len(ctx.problems.errors)
        #: The top-level keys whose strings the host expands (None: every key).
        self.expand_keys: frozenset[str] | None = None
        if not self.ok:
            ctx.problems.error(self.path, f"a server must be an object, got {kind_of(raw)}")

    # ------------------------------------------------------------------ helpers

    def at(self, *parts: str | int) -> list[str | int]:
        """The path of a part of this entry."""
        return [*self.path, *parts]

    def has(self, key: str) -> bool:
        """Whether the entry sets ``key``."""
        return key in self.raw

    def error(self, key: str | None, message: str) -> None:
        """Record an error at ``key`` (or at the entry)."""
        self.ctx.problems.error(self.at(key) if key else self.path, message)

    def warn(self, key: str | None, message: str) -> None:
        """Record a warning at ``key`` (or at the entry)."""
        self.ctx.problems.warn(self.at(key) if key else self.path, message)

    def note(self, field: str, key: str) -> None:
        """Record that ``field`` came from ``key``."""
        self.origins.setdefault(field, self.ctx.problems.where(self.at(key)))

    def _expand(self, text: str, path: Path_, expand: bool) -> str:
        if not expand:
            return text
        key = path[len(self.path)] if len(path) > len(self.path) else None
        if self.expand_keys is not None and key not in self.expand_keys:
            return text
        return self.ctx.expander.expand(text, path)

    def unresolved(self) -> tuple[tuple[str, str, str], ...]:
        """(location, kind, name) of the references of this entry that had no value."""
        depth = len(self.path)
        return tuple(
            (self.ctx.problems.where(path), kind, name)
            for path, kind, name in self.ctx.expander.missing
            if list(path[:depth]) == self.path
        )

    # ------------------------------------------------------------------ takers

    def take_str(self, key: str, field: str | None = None, *, expand: bool = True) -> str | None:
        """A string field, expanded."""
        if key not in self.raw:
            return None
        value = self.raw[key]
        if not isinstance(value, str):
            self.error(key, f"must be a string, got {kind_of(value)}")
            return None
        self.note(field or key, key)
        return self._expand(value, self.at(key), expand)

    def take_str_list(
        self, key: str, field: str | None = None, *, expand: bool = True
    ) -> tuple[str, ...] | None:
        """An array of strings, each expanded."""
        if key not in self.raw:
            return None
        value = self.raw[key]
        if not isinstance(value, list):
            self.error(key, f"must be an array of strings, got {kind_of(value)}")
            return None
        out: list[str] = []
        for index, item in enumerate(value):
            if not isinstance(item, str):
                self.ctx.problems.error(
                    self.at(key, index), f"must be a string, got {kind_of(item)}"
                )
                continue
            out.append(self._expand(item, self.at(key, index), expand))
        self.note(field or key, key)
        return tuple(out)

    def take_str_map(
        self, key: str, field: str | None = None, *, expand: bool = True
    ) -> list[tuple[str, str]] | None:
        """An object of string values, each expanded (values are never quoted in messages)."""
        if key not in self.raw:
            return None
        value = self.raw[key]
        if not isinstance(value, dict):
            self.error(key, f"must be an object of strings, got {kind_of(value)}")
            return None
        out: list[tuple[str, str]] = []
        for name, given in value.items():
            # Hosts pass numbers through as their text (PORT = 8080).
            number = isinstance(given, int | float) and not isinstance(given, bool)
            item = str(given) if number else given
            if not isinstance(item, str):
                self.ctx.problems.error(
                    self.at(key, name), f"must be a string, got {kind_of(item)}"
                )
                continue
            out.append((name, self._expand(item, self.at(key, name), expand)))
        self.note(field or key, key)
        return out

    def take_bool(self, key: str, field: str | None = None) -> bool | None:
        """A boolean field."""
        if key not in self.raw:
            return None
        value = self.raw[key]
        if not isinstance(value, bool):
            self.error(key, f"must be a boolean, got {kind_of(value)}")
            return None
        self.note(field or key, key)
        return value

    def take_seconds(self, key: str, field: str, *, scale: float = 1.0) -> float | None:
        """A positive duration in the file's unit, returned in seconds (``value * scale``)."""
        if key not in self.raw:
            return None
        value = self.raw[key]
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value <= 0
        ):
            self.error(key, f"must be a positive number, got {kind_of(value)}")
            return None
        self.note(field, key)
        return float(value) * scale

    def take_env_file(self, env: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """``env`` after the ``envFile`` entries it does not set itself (VS Code, Cursor).

        Loaded with ``references=True``, the file's values are not kept (they
        are the secrets the file exists to hold): each is a reference that no
        dialect can write, so ``dump`` reports it instead of writing it.
        """
        env_file = self.take_str("envFile", "env")
        if not env_file:
            return env
        file_path = Path(env_file).expanduser()
        if not file_path.is_absolute():
            file_path = self.ctx.base_dir / file_path
        given = {k for k, _ in env}
        from_file = read_env_file(file_path, self.ctx.problems, self.at("envFile"))
        if self.ctx.expander.references:
            from_file = [(k, refs.marker(refs.ENV_FILE, f"{env_file}:{k}")) for k, _ in from_file]
        return [(k, v) for k, v in from_file if k not in given] + env

    def unknown(self, known: frozenset[str]) -> None:
        """Warn about the keys no dialect rule read."""
        self.ctx.problems.unknown_keys(self.raw, known, self.path)

    def ignored(self, keys: Sequence[str], why: str = "") -> None:
        """Warn about keys the dialect defines that mcpclient does not act on."""
        for key in keys:
            if key in self.raw:
                self.ctx.problems.ignored(self.at(key), why or f"{key!r} is a host setting")

    # ------------------------------------------------------------------ building

    def resolve_cwd(self, cwd: str | None) -> str | None:
        """``cwd`` made absolute against the file's directory."""
        if cwd is None or not cwd:
            return None
        path = Path(os.path.expanduser(cwd))
        return str(path if path.is_absolute() else (self.ctx.base_dir / path))

    def resolve_command(self, command: str | None, cwd: str | None) -> str | None:
        """A relative command path (``./server``) made absolute against ``cwd`` or the file."""
        if command is None or os.sep not in command or os.path.isabs(command):
            return command
        base = Path(cwd) if cwd else self.ctx.base_dir
        return str(base / command)

    def build(self, **fields: Any) -> ServerConfig | None:
        """The ServerConfig, or None when this entry had errors (all recorded)."""
        if not self.ok or len(self.ctx.problems.errors) > self.errors_before:
            return None
        transport = fields.get("transport")
        if transport == "stdio" and not fields.get("command"):
            self.error(None, "a stdio server needs a command")
            return None
        if transport in ("http", "sse") and not fields.get("url"):
            self.error(None, "a remote server needs a URL")
            return None
        if transport == "stdio":
            fields["cwd"] = self.resolve_cwd(fields.get("cwd"))
            fields["command"] = self.resolve_command(fields.get("command"), fields["cwd"])
        for key in ("args", "env", "headers", "auto_approve"):
            if fields.get(key) is None:
                fields.pop(key, None)
        fields.setdefault("unresolved", self.unresolved())
        try:
            return ServerConfig(
                name=self.name,
                dialect=self.ctx.dialect,
                source=self.ctx.problems.source,
                origins=tuple(self.origins.items()),
                **fields,
            )
        except ConfigError as exc:
            self.error(None, exc.message)
            return None

    def tool_filter(
        self, allow: Sequence[str] | None, deny: Sequence[str] | None, where: str
    ) -> ToolFilter:
        """A ToolFilter from include/exclude lists (duplicates dropped with a warning)."""

        def unique(names: Sequence[str] | None) -> tuple[str, ...]:
            out: list[str] = []
            for name in names or ():
                if not name:
                    self.warn(where, "an empty tool name, ignored")
                elif name in out:
                    self.warn(where, f"lists tool {name!r} twice")
                else:
                    out.append(name)
            return tuple(out)

        return ToolFilter(allow=unique(allow), deny=unique(deny))
