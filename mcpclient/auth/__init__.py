"""OAuth 2.1 authorization for HTTP MCP servers (the ``oauth`` extra).

Give an :class:`OAuth` provider to an HTTP transport and a protected server
works with no glue: the first 401 starts discovery (RFC 9728 protected
resource metadata, RFC 8414 / OpenID authorization server metadata), client
registration (pre-registered, client ID metadata document, or dynamic), the
grant, and the request is sent again with the token::

    import mcpclient
    from mcpclient.auth import OAuth
    from mcpclient.transports import StreamableHTTPTransport

    transport = StreamableHTTPTransport("https://mcp.example.com/mcp", auth=OAuth())

Grants: :class:`AuthorizationCodeGrant` (PKCE S256, the system browser and a
loopback listener by default, or a headless ``redirect`` callable),
:class:`DeviceCodeGrant` (RFC 8628: a user code shown through a callback, for
hosts without a browser), :class:`ClientCredentialsGrant`,
:class:`JWTBearerGrant` (workload identity; without a client identity it
registers nothing and sends no client authentication) and
:class:`TokenExchangeGrant` (enterprise-managed: ID token -> ID-JAG -> access
token). ``OAuth(dpop=True)`` binds tokens with DPoP (RFC 9449).

Tokens and registrations live in a :class:`TokenStore`:
:class:`MemoryTokenStore` (the default), :class:`FileTokenStore` (private
files), :class:`KeyringTokenStore` (the OS keychain, the ``keyring`` extra), or
the host's own. Secrets never appear in ``repr``, ``str``, logs or
error messages.

Importing this package needs only the core dependencies; building an
:class:`OAuth` needs ``cryptography`` and ``PyJWT``
(``pip install 'mcpclient[oauth]'``) and raises :class:`~mcpclient.ConfigError`
saying so when they are missing.
"""

from __future__ import annotations

from mcpclient.auth.grants import (
    AuthorizationCodeGrant,
    ClientCredentialsGrant,
    DeviceCode,
    DeviceCodeGrant,
    Grant,
    JWTBearerGrant,
    TokenExchangeGrant,
)
from mcpclient.auth.oauth import MAX_STEP_UPS, OAuth
from mcpclient.auth.tokens import (
    ClientInfo,
    FileTokenStore,
    KeyringTokenStore,
    MemoryTokenStore,
    TokenSet,
    TokenStore,
)
from mcpclient.transports import AuthChallenge, AuthProvider

__all__ = [
    "MAX_STEP_UPS",
    "AuthChallenge",
    "AuthProvider",
    "AuthorizationCodeGrant",
    "ClientCredentialsGrant",
    "ClientInfo",
    "DeviceCode",
    "DeviceCodeGrant",
    "FileTokenStore",
    "Grant",
    "JWTBearerGrant",
    "KeyringTokenStore",
    "MemoryTokenStore",
    "OAuth",
    "TokenExchangeGrant",
    "TokenSet",
    "TokenStore",
]
