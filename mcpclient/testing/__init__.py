"""A scriptable MCP server for testing clients and hosts, hostile on demand.

Run it as a subprocess speaking stdio, or HTTP with ``--transport http``::

    python -m mcpclient.testing.server --era modern|legacy|dual [knobs]
    python -m mcpclient.testing.server --transport http --port 0 [knobs]

Every flag and ``hostile`` tool action is documented in ``docs/testing-server.md``
(``--help`` summarizes the flags). The protocol logic is transport-independent
(:class:`ServerCore` fed one message at a time, writing through a
:class:`Channel`), so other front ends can reuse it.

OAuth peers: the HTTP mode can act as a protected resource (``--oauth-*``,
:mod:`mcpclient.testing.oauth_guard`), and
:class:`mcpclient.testing.auth_server.AuthServer` is an in-process
authorization server (and enterprise IdP) issuing the tokens it accepts.

The package imports nothing else from mcpclient and uses only the standard
library, except ``auth_server`` and its ``auth_*`` modules (and DPoP proof
checks) which need PyJWT and ``cryptography`` (the ``test``/``oauth`` extras);
importing this package never loads them.
"""

from .core import Channel, InboundRequest, ServerConfig, ServerCore

__all__ = ["Channel", "InboundRequest", "ServerConfig", "ServerCore"]
