"""Use the MCP servers people already configured: every host's configuration file.

Example:
    >>> from mcpclient import config
    >>> servers = config.load("~/.cursor/mcp.json")          # doctest: +SKIP
    >>> for name, server in servers.enabled().items():        # doctest: +SKIP
    ...     with mcpclient.connect(server.definition()) as client:
    ...         print(name, [t.raw_name for t in client.catalog().tools])

Functions:
    :func:`load` reads a path, a :class:`ConfigFile`, a dict or a text into
    a :class:`LoadedConfig`: a mapping of the file's server name →
    :class:`ServerConfig`, in file order, that also says which ``dialect``
    was used and why (``reason``). :func:`discover` lists the files present
    for every host and scope. :func:`dump` writes servers as any dialect and
    says what the target cannot express. :func:`approval_policy` turns the
    configs' approval hints (``trust``, ``auto_approve``) into an
    ``approve`` callable for ``run_tool_calls``.

:class:`ServerConfig` attributes (the ones a ``Host`` or an exporter reads):
    ``name`` (the file's name; ``binding_name`` is it made a valid binding
    name), ``transport`` (``"stdio"``, ``"http"``, ``"sse"``), ``command``,
    ``args``, ``env``/``env_mapping``, ``cwd``, ``url``,
    ``headers``/``header_mapping`` (a bearer token is an ``Authorization``
    header here), ``startup_timeout`` and ``tool_timeout`` (seconds),
    ``tool_filter`` (a :class:`ToolFilter`: globs, deny wins, ``permits(name)``),
    ``disabled``, ``trust``, ``auto_approve``, ``dialect``, ``source``,
    ``unresolved`` (variables a ``strict=False`` load found unset),
    ``sse_fallback`` (the host falls back to HTTP+SSE for this URL), and
    ``origin(field)`` (``"file:/json/pointer"``; ``"file:dotted.key"`` in TOML).
    ``definition()`` builds the :class:`mcpclient.Definition`, tool filter and
    timeouts included.

Dialects: ``claude-desktop``, ``claude-code``, ``cursor``, ``vscode``,
``windsurf``, ``gemini``, ``codex``, ``zed``, ``cline``, ``fastmcp``; each
with its own keys, units (Gemini's and FastMCP's ``timeout`` are
milliseconds, Cline's seconds, Codex's ``startup_timeout_ms`` milliseconds)
and variable syntax (see :mod:`mcpclient.config.expand`). ``load(...,
references=True)`` keeps each variable reference instead of its value, so
``dump`` writes it in the target's syntax (see :mod:`mcpclient.config.refs`).

Problems: a file with errors raises one :class:`ConfigFileError` (a :class:`mcpclient.ConfigError`)
whose ``problems`` lists each with its location. Anything ignored (an unknown
key, a host-only setting, an unset variable with ``strict=False``) is a
:class:`ConfigWarning` issued through :mod:`warnings` (and kept in
``LoadedConfig.warnings``). No repr, error, warning or log record shows an
environment value, a header value or a token.
"""

from __future__ import annotations

from mcpclient.config import registry as _registry
from mcpclient.config.approval import approval_policy
from mcpclient.config.dump import Dumped, dump
from mcpclient.config.load import load
from mcpclient.config.locations import discover
from mcpclient.config.problems import ConfigWarning
from mcpclient.config.values import ConfigFile, LoadedConfig, ServerConfig, ToolFilter
from mcpclient.errors import ConfigFileError

#: The dialect names ``load`` and ``dump`` accept (besides ``"auto"``).
DIALECTS: tuple[str, ...] = tuple(_registry.DIALECTS)

__all__ = [
    "DIALECTS",
    "ConfigFile",
    "ConfigFileError",
    "ConfigWarning",
    "Dumped",
    "LoadedConfig",
    "ServerConfig",
    "ToolFilter",
    "approval_policy",
    "discover",
    "dump",
    "load",
]
