"""Client authentication at the test authorization server's token endpoint.

``client_secret_basic``, ``client_secret_post``, ``none`` and
``private_key_jwt`` (RFC 7523 client assertions); a client must use the method
it registered. Nothing here is meant to be used directly.
"""

from __future__ import annotations

from base64 import b64decode
from collections.abc import Mapping
from urllib.parse import unquote_plus

import jwt

from .auth_base import IssuingServer, OAuthError, RegisteredClient, constant_equal, header_values
from .auth_clients import ClientRegistry
from .oauth_common import ASYMMETRIC_ALGS, ReplayCache

CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


class ClientAuthentication:
    """Who a token request authenticates as.

    Thread safety: every method may be called from any thread.
    """

    def __init__(self, clients: ClientRegistry, server: IssuingServer, replay: ReplayCache) -> None:
        """Look clients up in ``clients``; record assertion ``jti`` values in ``replay``."""
        self._clients = clients
        self._server = server
        self._replay = replay

    def authenticate(
        self, form: Mapping[str, str], headers: list[tuple[str, str]]
    ) -> RegisteredClient | None:
        """The client the request authenticates as, None when it names no client."""
        authorization = header_values(headers, "Authorization")
        if authorization and authorization[0][:6].lower() == "basic ":
            return self._basic(authorization[0][6:].strip(), form)
        if "client_assertion" in form:
            return self._private_key_jwt(form)
        client_id = form.get("client_id")
        if client_id is None:
            return None
        client = self._clients.client(client_id)
        if client is None:
            raise OAuthError("invalid_client", "unknown client")
        if "client_secret" in form:
            ok = client.auth_method == "client_secret_post" and constant_equal(
                form["client_secret"], client.secret or ""
            )
            if not ok:
                raise OAuthError("invalid_client", "client_secret_post authentication failed")
        elif client.auth_method != "none":
            raise OAuthError("invalid_client", f"this client must use {client.auth_method}")
        return client

    def _basic(self, encoded: str, form: Mapping[str, str]) -> RegisteredClient:
        challenge = (("WWW-Authenticate", 'Basic realm="token"'),)
        try:
            decoded = b64decode(encoded, validate=True).decode("utf-8")
        except ValueError as exc:
            raise OAuthError("invalid_client", "malformed Basic credentials") from exc
        raw_id, sep, raw_secret = decoded.partition(":")
        # RFC 6749 §2.3.1: both parts are form-urlencoded before base64.
        client_id, secret = unquote_plus(raw_id), unquote_plus(raw_secret)
        client = self._clients.client(client_id) if sep else None
        if (
            client is None
            or client.auth_method != "client_secret_basic"
            or not constant_equal(secret, client.secret or "")
        ):
            raise OAuthError(
                "invalid_client", "client_secret_basic authentication failed", headers=challenge
            )
        if form.get("client_id", client_id) != client_id:
            raise OAuthError("invalid_request", "client_id differs from the Basic credentials")
        return client

    def _private_key_jwt(self, form: Mapping[str, str]) -> RegisteredClient:
        if form.get("client_assertion_type") != CLIENT_ASSERTION_TYPE:
            raise OAuthError("invalid_client", "unsupported client_assertion_type")
        assertion = form["client_assertion"]
        try:
            unverified = jwt.decode(assertion, options={"verify_signature": False})
        except jwt.PyJWTError as exc:
            raise OAuthError("invalid_client", "malformed client assertion") from exc
        client_id = form.get("client_id") or str(unverified.get("sub", ""))
        client = self._clients.client(client_id)
        if client is None or client.auth_method != "private_key_jwt" or client.public_key is None:
            raise OAuthError("invalid_client", "unknown client or not a private_key_jwt client")
        server = self._server
        try:
            claims = jwt.decode(
                assertion,
                client.public_key,
                algorithms=list(ASYMMETRIC_ALGS),
                audience=[server.issuer, server.token_endpoint],
                issuer=client_id,
                options={"require": ["exp", "sub", "jti"]},
            )
        except jwt.PyJWTError as exc:
            why = type(exc).__name__
            raise OAuthError("invalid_client", f"client assertion rejected ({why})") from exc
        if claims["sub"] != client_id:
            raise OAuthError("invalid_client", "client assertion sub is not the client")
        if not self._replay.add(f"client:{claims['jti']}"):
            raise OAuthError("invalid_client", "client assertion replayed")
        return client
