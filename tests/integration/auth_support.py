"""Start the OAuth test peers: the in-process authorization server and the protected
HTTP test server (a ``python -m mcpclient.testing.server --transport http
--oauth-issuer ...`` subprocess), plus small helpers to drive them by hand.

Typical end-to-end set-up::

    def test_something(oauth_peers: OAuthPeers) -> None:
        auth = oauth_peers.auth(scopes_supported=("mcp",))
        server = oauth_peers.protected(auth, "--oauth-scopes", "mcp")
        ...  # connect a client to server.url; assert on auth.requests, server.log()

The ``oauth_peers`` fixture closes everything it started when the test ends
(servers in reverse order). Import it into a test module with
``from .auth_support import oauth_peers`` (listed in ``__all__``; pytest finds
an imported fixture by name).
"""

from __future__ import annotations

import hashlib
import secrets
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import ec

from mcpclient.testing.auth_server import AuthServer
from mcpclient.testing.oauth_common import b64url, jwk_thumbprint, token_hash
from tests.support.http_servers import ScriptedServer

__all__ = [
    "AuthServer",
    "OAuthPeers",
    "ProtectedServer",
    "authorization_redirect",
    "dpop_jwk",
    "dpop_proof",
    "oauth_peers",
    "pkce_pair",
    "redirect_params",
    "thumbprint",
]

SERVER_COMMAND = [sys.executable, "-m", "mcpclient.testing.server"]
TIMEOUT = 10.0


class ProtectedServer(ScriptedServer):
    """The HTTP test server protected by ``auth`` (or by ``issuer``/``secret``).

    Runs ``python -m mcpclient.testing.server --transport http --port 0
    --record <file> --oauth-issuer I --oauth-secret S <flags>``; ``flags`` may
    hold any server flag (``--era modern``, ``--oauth-prm challenge``, ...).
    ``url`` (``http://127.0.0.1:PORT/mcp``) is the MCP endpoint and the
    resource identifier; ``records()`` and ``close()`` come from
    :class:`ScriptedServer`.
    """

    def __init__(
        self,
        tmp: Path,
        auth: AuthServer | None = None,
        *flags: str,
        issuer: str | None = None,
        secret: bytes | None = None,
    ) -> None:
        """Start the subprocess and wait for its listening line."""
        issuer = issuer if issuer is not None else auth.issuer if auth is not None else None
        secret = secret if secret is not None else auth.token_secret if auth is not None else None
        if issuer is None or secret is None:
            raise ValueError("give an AuthServer or both issuer and secret")
        super().__init__(tmp, "--oauth-issuer", issuer, "--oauth-secret", secret.hex(), *flags)

    # -- the control endpoint

    def control(self, **changes: Any) -> dict[str, Any]:
        """POST ``changes`` to ``/oauth-control`` (e.g. ``revoke=True``); returns the new state."""
        response = requests.post(self.base + "/oauth-control", json=changes, timeout=TIMEOUT)
        assert response.status_code == 200, response.text
        state: dict[str, Any] = response.json()
        return state

    def state(self) -> dict[str, Any]:
        """``GET /oauth-control``: the knobs, the current DPoP nonce and the log."""
        response = requests.get(self.base + "/oauth-control", timeout=TIMEOUT)
        assert response.status_code == 200, response.text
        state: dict[str, Any] = response.json()
        return state

    def log(self) -> list[dict[str, Any]]:
        """The guard's decisions on the MCP requests, oldest first."""
        entries: list[dict[str, Any]] = self.state()["log"]
        return entries

    def revoke(self) -> None:
        """Reject every token issued so far (a 401 for a locally unexpired token)."""
        self.control(revoke=True)

    def trust(self, auth: AuthServer) -> None:
        """Switch to another authorization server (its issuer and secret; old tokens fail)."""
        self.control(issuer=auth.issuer, secret=auth.token_secret.hex())

    def __enter__(self) -> ProtectedServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class OAuthPeers:
    """Starts peers for one test and closes them all (newest first)."""

    def __init__(self, tmp: Path) -> None:
        self._tmp = tmp
        self._open: list[AuthServer | ProtectedServer] = []

    def auth(self, **knobs: Any) -> AuthServer:
        """A new :class:`AuthServer` with ``knobs``."""
        server = AuthServer(**knobs)
        self._open.append(server)
        return server

    def protected(self, auth: AuthServer | None = None, *flags: str, **kw: Any) -> ProtectedServer:
        """A new :class:`ProtectedServer` (arguments as its constructor's, minus ``tmp``)."""
        server = ProtectedServer(self._tmp, auth, *flags, **kw)
        self._open.append(server)
        return server

    def close(self) -> None:
        """Close every peer started, newest first."""
        while self._open:
            self._open.pop().close()


@pytest.fixture
def oauth_peers(tmp_path: Path) -> Iterator[OAuthPeers]:
    """An :class:`OAuthPeers` whose servers are closed after the test."""
    peers = OAuthPeers(tmp_path)
    try:
        yield peers
    finally:
        peers.close()


# ----------------------------------------------------------------------------- by hand


def pkce_pair() -> tuple[str, str]:
    """A PKCE ``(verifier, S256 challenge)``."""
    verifier = secrets.token_urlsafe(32)
    return verifier, b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def authorization_redirect(url: str) -> str:
    """Follow an authorization URL like a headless browser: the ``Location`` it redirects to.

    Usable as ``AuthorizationCodeGrant(redirect=authorization_redirect)``.
    """
    response = requests.get(url, allow_redirects=False, timeout=TIMEOUT)
    location = response.headers.get("Location")
    assert response.status_code == 302 and location, (response.status_code, response.text)
    return location


def redirect_params(location: str) -> dict[str, str]:
    """The query parameters of a redirect URL (first values)."""
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}


def dpop_jwk(key: ec.EllipticCurvePrivateKey) -> dict[str, str]:
    """The public JWK of an EC key."""
    jwk: dict[str, str] = jwt.algorithms.ECAlgorithm.to_jwk(key.public_key(), as_dict=True)
    return jwk


def dpop_proof(
    key: ec.EllipticCurvePrivateKey,
    *,
    method: str,
    url: str,
    nonce: str | None = None,
    access_token: str | None = None,
    iat: float | None = None,
    jti: str | None = None,
) -> str:
    """A DPoP proof (RFC 9449) made with PyJWT; ``iat``/``jti`` overridable for bad proofs."""
    claims: dict[str, Any] = {
        "jti": jti or secrets.token_hex(12),
        "htm": method,
        "htu": url,
        "iat": int(time.time() if iat is None else iat),
    }
    if nonce is not None:
        claims["nonce"] = nonce
    if access_token is not None:
        claims["ath"] = token_hash(access_token)
    headers = {"typ": "dpop+jwt", "jwk": dpop_jwk(key)}
    return jwt.encode(claims, key, algorithm="ES256", headers=headers)


def thumbprint(key: ec.EllipticCurvePrivateKey) -> str:
    """The RFC 7638 thumbprint of ``key``'s public JWK (``cnf.jkt``)."""
    return jwk_thumbprint(dpop_jwk(key))
