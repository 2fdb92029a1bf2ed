"""``load``: a host's configuration (a file, a dict or a text) → name → ServerConfig."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from mcpclient.config import jsonc, registry
from mcpclient.config.dialect import ReadOptions
from mcpclient.config.expand import Expander, InputsArg
from mcpclient.config.files import MAX_DEPTH, FileReadError, depth_exceeds, read_regular
from mcpclient.config.problems import Problems, log
from mcpclient.config.reading import Context
from mcpclient.config.values import ConfigFile, LoadedConfig, ServerConfig
from mcpclient.config.vscode import input_specs
from mcpclient.errors import ConfigError

__all__ = ["Source", "load"]

#: What :func:`load` reads.
Source = str | os.PathLike[str] | Mapping[str, Any] | ConfigFile

#: Files that hold a host's other settings too (their other top-level keys are not warned about).
_SHARED = frozenset({".claude.json", "claude_desktop_config.json", "settings.json", "config.toml"})
#: Folders whose parent is the workspace (``${workspaceFolder}``, relative paths).
_WORKSPACE_DIRS = frozenset({".vscode", ".cursor", ".gemini", ".zed", ".codex"})


@attrs.define
class _Document:
    value: Any
    label: str
    path: Path | None
    comments: bool = False
    trailing_commas: bool = False
    fmt: str = ""  # "json", "toml" or "" (a dict)


def _looks_like_text(source: str) -> bool:
    stripped = source.lstrip()
    return "\n" in source or stripped.startswith(("{", "["))


def _read_file(path: Path, problems: Problems) -> str | None:
    # Regular files only, read to the bound: /dev/zero, a FIFO or a directory
    # is refused at once instead of filling memory or blocking the load.
    try:
        return read_regular(path, jsonc.MAX_TEXT_BYTES).decode("utf-8")
    except FileNotFoundError:
        problems.error_at(problems.source, "no such file")
    except FileReadError as exc:
        problems.error_at(problems.source, exc.reason)
    except UnicodeDecodeError:
        problems.error_at(problems.source, "cannot read the file: it is not UTF-8 text")
    return None


class _TOMLError(ValueError):
    """The text is not TOML, or nests deeper than ``MAX_DEPTH``."""


def _toml(text: str) -> Any:
    """``tomllib.loads(text)``, its nesting bounded like JSON's.

    Raises:
        _TOMLError: not TOML, or nested deeper than ``MAX_DEPTH`` (tomllib
            recurses per level, so a deep document would otherwise end in
            ``RecursionError``).
    """
    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _TOMLError(str(exc)) from None
    except RecursionError:
        raise _TOMLError(f"nested deeper than {MAX_DEPTH}") from None
    if depth_exceeds(value, MAX_DEPTH):
        raise _TOMLError(f"nested deeper than {MAX_DEPTH}")
    return value


def _parse_text(text: str, fmt: str, problems: Problems) -> _Document | None:
    """Parse as ``fmt`` ("toml", "json", or "" to try JSON then TOML)."""
    if fmt == "toml":
        try:
            return _Document(_toml(text), problems.source, None, fmt="toml")
        except _TOMLError as exc:
            problems.error_at(problems.source, f"not valid TOML: {exc}")
            return None
    try:
        parsed = jsonc.parse(text)
    except jsonc.JSONCError as exc:
        if not fmt:
            try:
                return _Document(_toml(text), problems.source, None, fmt="toml")
            except _TOMLError:
                pass
        problems.error_at(
            f"{problems.source}:{exc.line}:{exc.column}", f"not valid JSON: {exc.message}"
        )
        return None
    return _Document(
        parsed.value, problems.source, None, parsed.comments, parsed.trailing_commas, fmt="json"
    )


def _workspace(path: Path | None, project: str | None) -> Path:
    if project is not None:
        return Path(project)
    if path is None:
        return Path.cwd()
    parent = path.resolve().parent
    return parent.parent if parent.name in _WORKSPACE_DIRS else parent


def load(
    source: Source,
    *,
    dialect: str = "auto",
    env: Mapping[str, str] | None = None,
    inputs: InputsArg = None,
    strict: bool = True,
    references: bool = False,
) -> LoadedConfig:
    """Read a host's MCP configuration into ``name → ServerConfig``.

    Args:
        source: a path (``str`` or ``os.PathLike``), a :class:`ConfigFile`
            from :func:`discover`, a parsed document (a mapping), or the
            file's text (a ``str`` holding a newline or starting with ``{``
            or ``[``).
        dialect: ``"auto"`` (from the file's name and location, then its
            keys; the result's ``dialect`` and ``reason`` say which and why),
            or one of ``claude-desktop``, ``claude-code``, ``cursor``,
            ``vscode``, ``windsurf``, ``gemini``, ``codex``, ``zed``,
            ``cline``, ``fastmcp``.
        env: the environment variables expanded (default ``os.environ``).
        inputs: VS Code ``${input:id}`` answers: a mapping of id → value, or
            a callable ``(id, spec) -> str | None``.
        strict: an unset variable is an error (True) or expands to ``""``
            with a warning (False); either way the servers it touched list
            it in ``ServerConfig.unresolved``.
        references: keep each variable reference (``${env:TOKEN}``,
            ``${input:id}``, ``${file:...}``, Codex's ``bearer_token_env_var``)
            as a reference instead of its value, so :func:`dump` can write it
            in another dialect's syntax; no variable needs to be set. Such
            servers cannot connect (``definition()`` refuses them).

    Returns:
        A :class:`LoadedConfig`: a mapping in file order. Disabled servers
        are included with ``disabled=True``. Warnings (unknown keys,
        settings mcpclient ignores...) are issued as :class:`ConfigWarning`
        and kept in its ``warnings``.

    Raises:
        ConfigFileError: the source cannot be read or has problems; its
            ``problems`` lists every one with its ``file:/json/pointer``.
        ConfigError: ``dialect`` names no dialect.

    Thread safety: safe from any thread (a load shares nothing).
    """
    chosen = None if dialect == "auto" else registry.get(dialect)
    if dialect != "auto" and chosen is None:
        raise ConfigError(
            f"unknown dialect {dialect!r}; known: auto, {', '.join(registry.DIALECTS)}",
            op="load_config",
        )
    if not isinstance(source, str | os.PathLike | Mapping | ConfigFile):
        raise ConfigError(
            "the source must be a path, a ConfigFile, a mapping or a str of text;"
            f" got {type(source).__name__}",
            op="load_config",
        )
    project: str | None = None
    path: Path | None = None
    if isinstance(source, ConfigFile):
        path, project = source.path, source.project
        if chosen is None:
            chosen = registry.get(source.host)
    elif isinstance(source, os.PathLike) or (
        isinstance(source, str) and not _looks_like_text(source)
    ):
        path = Path(source).expanduser()
    label = (
        str(path) if path is not None else ("<dict>" if isinstance(source, Mapping) else "<string>")
    )
    problems = Problems(label)

    document: _Document | None
    if isinstance(source, Mapping):
        # A caller's document gets the bound a parsed file has: every walker
        # below may then recurse without meeting a RecursionError.
        if depth_exceeds(source, MAX_DEPTH):
            problems.error([], f"nested deeper than {MAX_DEPTH}")
        document = None if problems.errors else _Document(source, label, None)
    else:
        if path is not None:
            text = _read_file(path, problems)
        else:
            assert isinstance(source, str)
            text = source
        fmt = ""
        if chosen is not None:
            fmt = "toml" if chosen.format == "toml" else "json"
        elif path is not None:
            fmt = "toml" if path.suffix == ".toml" else "json"
        document = None if text is None else _parse_text(text, fmt, problems)
    if document is None:
        problems.finish(stacklevel=2)
        raise AssertionError("unreachable: a source that did not parse has a problem")
    document.path = path

    reason = "given"
    if chosen is None and path is not None:
        name = registry.by_path(path)
        if name is not None:
            chosen, reason = registry.get(name), "file name"
    if chosen is None:
        name, reason = registry.by_keys(document.value)
        if document.fmt == "toml":
            name, reason = "codex", "TOML"
        chosen = registry.get(name)
    assert chosen is not None
    # A TOML file is located by dotted keys (mcp_servers.github), not JSON pointers.
    problems.toml = chosen.format == "toml"
    log.debug("reading %s as %s (%s)", label, chosen.name, reason)

    if chosen.format == "json" and (document.comments or document.trailing_commas):
        what = "comments" if document.comments else "trailing commas"
        problems.warn([], f"{chosen.title} reads plain JSON; it may reject a file with {what}")
    workspace = _workspace(path, project)
    specs = input_specs(document.value, problems) if chosen.name == "vscode" else {}
    expander = Expander(
        chosen.syntax,
        problems,
        env=env,
        strict=strict,
        workspace=workspace,
        home=Path.home(),
        inputs=inputs,
        input_specs=specs,
        references=references,
    )
    ctx = Context(chosen.name, problems, expander, workspace, expander.env)
    shared = path is not None and path.name in _SHARED
    servers: dict[str, ServerConfig] = chosen.read(
        ctx, document.value, ReadOptions(project=project, shared=shared)
    )
    _check_binding_names(servers, problems)
    warned = problems.finish(stacklevel=2)
    return LoadedConfig(servers, dialect=chosen.name, reason=reason, source=label, warnings=warned)


def _check_binding_names(servers: Mapping[str, ServerConfig], problems: Problems) -> None:
    seen: dict[str, str] = {}
    for name, server in servers.items():
        binding = server.binding_name
        if binding in seen:
            problems.warnings.append(
                f"{problems.source}: servers {seen[binding]!r} and {name!r} share the"
                f" binding name {binding!r}; pass name= to definition() to tell them apart",
            )
        seen.setdefault(binding, name)
