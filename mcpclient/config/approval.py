"""A default approval policy from the hints host configs carry.

Cline's ``autoApprove`` (tools run without asking; the per-server list in
``cline_mcp_settings.json``, https://docs.cline.bot/mcp/configuring-mcp-servers),
Gemini CLI's ``trust`` (every tool of the server runs without confirmation;
``mcpServers.<name>.trust`` in ``settings.json``,
https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md)
and Codex's ``default_tools_approval_mode`` / per-tool ``approval_mode =
"approve"`` are read into :attr:`ServerConfig.trust` and
:attr:`ServerConfig.auto_approve`;
:func:`approval_policy` turns them into an ``approve`` callable for
``run_tool_calls`` (or a ``before`` hook of :class:`mcpclient.hooks.CallHooks`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from mcpclient.config.values import ServerConfig
from mcpclient.errors import ConfigError
from mcpclient.hooks import CallInfo, Decision

__all__ = ["approval_policy"]


def approval_policy(
    configs: Mapping[str, ServerConfig],
    *,
    otherwise: Callable[[CallInfo], Decision | None] | None = None,
) -> Callable[[CallInfo], Decision | None]:
    """An ``approve`` callable: allow what the configs pre-approve, ask ``otherwise`` the rest.

    A call is allowed when its server's config has ``trust=True`` or lists
    the tool's raw name in ``auto_approve``. A server is matched by its file
    name or its ``binding_name`` (the keys ``Host.from_config`` uses).
    Anything else goes to ``otherwise`` (for example a prompt to the user);
    without it, it is denied with a reason naming the setting that would
    allow it. Annotations play no part: the specification calls them
    untrusted hints.

    Raises:
        ConfigError: ``configs`` is not a mapping of ``ServerConfig``.
    """
    if not isinstance(configs, Mapping) or not all(
        isinstance(c, ServerConfig) for c in configs.values()
    ):
        raise ConfigError("approval_policy takes a mapping of ServerConfig", op="approval_policy")
    if otherwise is not None and not callable(otherwise):
        raise ConfigError("approval_policy otherwise must be callable", op="approval_policy")
    servers: dict[str, ServerConfig] = {}
    for name, server in configs.items():
        servers.setdefault(str(name), server)
        servers.setdefault(server.binding_name, server)

    def approve(info: CallInfo) -> Decision | None:
        server = servers.get(info.binding)
        if server is not None and (server.trust or info.tool in server.auto_approve):
            return Decision.allow()
        if otherwise is not None:
            return otherwise(info)
        return Decision.deny(
            f"{info.tool!r} on {info.binding!r} is not pre-approved by the host config "
            "(autoApprove, trust or approval_mode); ask the user to approve it"
        )

    return approve
