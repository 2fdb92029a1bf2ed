"""What a dialect is: how to read a host's file into servers and write servers back.

Each dialect module (``mcpservers``, ``vscode``, ``gemini``, ``codex``,
``zed``) builds :class:`Dialect` values; ``registry`` lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from mcpclient.config.reading import Context
from mcpclient.config.values import ServerConfig

__all__ = ["Dialect", "ReadOptions"]


@attrs.frozen
class ReadOptions:
    """How the loader asks a dialect to read a document.

    Attributes:
        project: Claude Code: read ``projects.<project>.mcpServers`` (local scope).
        shared: the file holds the host's other settings too, so top-level
            keys that are not about servers are not warned about.
    """

    project: str | None = None
    shared: bool = False


#: Reads a parsed document into name → ServerConfig (problems go to the context).
Reader = Callable[[Context, Any, ReadOptions], dict[str, ServerConfig]]
#: Writes servers as a document; appends to the list what the target cannot express.
Writer = Callable[[Sequence[ServerConfig], list[str]], Any]


@attrs.frozen
class Dialect:
    """One host's configuration format.

    Attributes:
        name: the dialect's identifier (``"claude-code"``).
        title: the host's name for people (``"Claude Code"``).
        syntax: its variable expansion (see :mod:`mcpclient.config.expand`).
        format: ``"json"``, ``"jsonc"`` (comments and trailing commas
            accepted by the host) or ``"toml"``.
        read, write: the dialect's reader and writer.
        expand_fields: the :class:`ServerConfig` fields whose strings the
            host expands (None: all of them); a reference elsewhere cannot be
            written.
        own_references: the writer turns references into the host's own
            keys itself (Codex's ``bearer_token_env_var``...).
    """

    name: str
    title: str
    syntax: str
    format: str
    read: Reader
    write: Writer
    expand_fields: frozenset[str] | None = None
    own_references: bool = False


def lose(lost: list[str], s: ServerConfig, what: str, title: str) -> None:
    """Report that dialect ``title`` cannot express ``what`` of server ``s``."""
    lost.append(f"server {s.name!r}: {title} cannot express {what}; left out")


def lose_client_settings(lost: list[str], s: ServerConfig, title: str) -> None:
    """Report the client-side settings (filter, timeouts, trust, auto-approval) ``s`` has.

    For dialects whose files hold none of them (VS Code, Zed).
    """
    for present, what in (
        (not s.tool_filter.is_empty, "a tool filter"),
        (s.tool_timeout is not None, "a tool timeout"),
        (s.startup_timeout is not None, "a startup timeout"),
        (s.trust is not None, "trust"),
        (bool(s.auto_approve), "auto-approved tools"),
    ):
        if present:
            lose(lost, s, what, title)
