"""A scriptable MCP server for testing clients and hosts, hostile on demand.

Run it as a subprocess speaking stdio, or HTTP with ``--transport http``::

    python -m mcpclient.testing.server --era modern|legacy|dual [knobs]
    python -m mcpclient.testing.server --transport http --port 0 [knobs]

Every flag and ``hostile`` tool action is documented in
:mod:`mcpclient.testing.server`. The protocol logic is transport-independent
(:class:`ServerCore` fed one message at a time, writing through a
:class:`Channel`), so other front ends can reuse it. The package uses only the
standard library and imports nothing else from mcpclient.
"""

from .core import Channel, InboundRequest, ServerConfig, ServerCore

__all__ = ["Channel", "InboundRequest", "ServerConfig", "ServerCore"]
