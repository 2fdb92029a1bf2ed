"""Which clients the test authorization server knows.

Pre-registered clients, clients registered dynamically (RFC 7591, the
``register`` endpoint) and clients whose ``client_id`` is the URL of a client
ID metadata document (resolved at each use when ``cimd`` is on). Nothing here
is meant to be used directly.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from typing import Any

from .auth_base import (
    GRANT_CODE,
    NO_STORE,
    IssuingServer,
    OAuthError,
    RegisteredClient,
    Reply,
    is_loopback_http,
    json_reply,
    load_public_key,
)

AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none", "private_key_jwt")
SECRET_METHODS = ("client_secret_basic", "client_secret_post")
CIMD_TIMEOUT = 5.0
CIMD_MAX_BYTES = 65536


def preregistered_client(
    client_id: str,
    *,
    secret: str | None,
    auth_method: str | None,
    public_key: Any,
    redirect_uris: Iterable[str] | None,
    grant_types: Iterable[str] | None,
) -> RegisteredClient:
    """A pre-registered client (see :meth:`~mcpclient.testing.auth_server.AuthServer.add_client`).

    Raises:
        ValueError: an unknown ``auth_method``, or one without its secret or key.
    """
    if auth_method is None:
        auth_method = (
            "client_secret_basic"
            if secret is not None
            else "private_key_jwt"
            if public_key is not None
            else "none"
        )
    if auth_method not in AUTH_METHODS:
        raise ValueError(f"auth_method must be one of {AUTH_METHODS}")
    if auth_method.startswith("client_secret") and secret is None:
        raise ValueError(f"{auth_method} needs a secret")
    if auth_method == "private_key_jwt" and public_key is None:
        raise ValueError("private_key_jwt needs a public_key")
    client = RegisteredClient(
        client_id=client_id,
        secret=secret,
        auth_method=auth_method,
        public_key=None if public_key is None else load_public_key(public_key),
        redirect_uris=None if redirect_uris is None else tuple(redirect_uris),
        grant_types=None if grant_types is None else tuple(grant_types),
        source="preregistered",
    )
    return client


class ClientRegistry:
    """The known clients, and the client ID metadata documents resolved.

    Thread safety: every method may be called from any thread.
    """

    def __init__(self, server: IssuingServer) -> None:
        """Bind to ``server`` (its ``cimd`` and ``dcr_application_type`` knobs)."""
        self._server = server
        self._lock = threading.Lock()
        self._clients: dict[str, RegisteredClient] = {}
        self._published: dict[str, Any] = {}
        self._cimd_fetches: list[str] = []

    def save_client(self, client: RegisteredClient) -> None:
        """Add or replace a client."""
        with self._lock:
            self._clients[client.client_id] = client

    def clients(self) -> dict[str, RegisteredClient]:
        """Every registered client (CIMD clients are fetched, not kept)."""
        with self._lock:
            return dict(self._clients)

    def client(self, client_id: str) -> RegisteredClient | None:
        """The client ``client_id``: registered, or fetched as a metadata document.

        Raises:
            OAuthError: a metadata document that cannot be used (``invalid_client``).
        """
        with self._lock:
            known = self._clients.get(client_id)
        if known is not None or not self._server.config.cimd:
            return known
        if not client_id.startswith(("https://", "http://")):
            return None
        with self._lock:
            self._cimd_fetches.append(client_id)
            published = self._published.get(client_id)
        document = published if published is not None else _download(client_id)
        return _cimd_client(client_id, document)

    def publish_client_document(self, url: str, document: Any) -> None:
        """Resolve ``url`` to ``document`` without any network fetch."""
        with self._lock:
            self._published[url] = document

    def cimd_fetches(self) -> list[str]:
        """Every client ID metadata document URL resolved so far, in order."""
        with self._lock:
            return list(self._cimd_fetches)

    # -- dynamic client registration (RFC 7591)

    def register(self, *, body: Any) -> Reply:
        """Register a client from a JSON registration request."""
        if not isinstance(body, dict):
            raise OAuthError("invalid_client_metadata", "the body must be a JSON object")
        grant_types = body.get("grant_types", [GRANT_CODE])
        if not isinstance(grant_types, list) or not all(isinstance(g, str) for g in grant_types):
            raise OAuthError("invalid_client_metadata", "grant_types must be strings")
        redirect_uris = body.get("redirect_uris", [])
        if not isinstance(redirect_uris, list) or not all(
            isinstance(u, str)
            and "#" not in u
            and (is_loopback_http(u) or u.startswith("https://"))
            for u in redirect_uris
        ):
            raise OAuthError("invalid_redirect_uri", "redirect_uris must be loopback or https")
        if GRANT_CODE in grant_types and not redirect_uris:
            raise OAuthError("invalid_redirect_uri", "redirect_uris are required")
        method = body.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in (*SECRET_METHODS, "none"):
            raise OAuthError("invalid_client_metadata", "unsupported token_endpoint_auth_method")
        application_type = body.get("application_type")
        wanted = self._server.config.dcr_application_type
        if wanted is not None and application_type != wanted:
            raise OAuthError("invalid_client_metadata", f"application_type must be {wanted}")
        client = RegisteredClient(
            client_id="dcr-" + secrets.token_hex(8),
            secret=secrets.token_urlsafe(24) if method in SECRET_METHODS else None,
            auth_method=method,
            public_key=None,
            redirect_uris=tuple(redirect_uris),
            # As real authorization servers do: only the grants it registered for.
            grant_types=tuple(grant_types),
            source="dcr",
            application_type=application_type if isinstance(application_type, str) else None,
            metadata=dict(body),
        )
        self.save_client(client)
        answer = {
            **body,
            "client_id": client.client_id,
            "client_id_issued_at": int(time.time()),
            "token_endpoint_auth_method": method,
            "grant_types": grant_types,
        }
        if client.secret is not None:
            answer["client_secret"] = client.secret
            answer["client_secret_expires_at"] = 0
        return json_reply(201, answer, headers=NO_STORE)


def _download(url: str) -> Any:
    """GET a JSON document (no proxies, 5 s, 64 KiB)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with opener.open(request, timeout=CIMD_TIMEOUT) as response:
            data = response.read(CIMD_MAX_BYTES + 1)
        return json.loads(data.decode("utf-8")) if len(data) <= CIMD_MAX_BYTES else None
    except (OSError, ValueError, urllib.error.URLError) as exc:
        raise OAuthError("invalid_client", "client metadata document unavailable") from exc


def _cimd_client(url: str, document: Any) -> RegisteredClient:
    """Check a client ID metadata document fetched from ``url``."""
    if not isinstance(document, dict):
        raise OAuthError("invalid_client", "client metadata document is not a JSON object")
    if document.get("client_id") != url:
        raise OAuthError("invalid_client", "client metadata document client_id differs")
    redirect_uris = document.get("redirect_uris")
    if (
        not isinstance(document.get("client_name"), str)
        or not isinstance(redirect_uris, list)
        or not redirect_uris
        or not all(isinstance(u, str) for u in redirect_uris)
    ):
        raise OAuthError("invalid_client", "client metadata document lacks name or redirects")
    method = document.get("token_endpoint_auth_method", "none")
    key = None
    if method == "private_key_jwt":
        jwks = document.get("jwks")
        keys = jwks.get("keys") if isinstance(jwks, dict) else None
        if not isinstance(keys, list) or not keys or not isinstance(keys[0], dict):
            raise OAuthError("invalid_client", "private_key_jwt needs jwks in the document")
        key = load_public_key(keys[0])
    elif method != "none":
        raise OAuthError("invalid_client", "a metadata-document client cannot use a secret")
    application_type = document.get("application_type")
    return RegisteredClient(
        client_id=url,
        secret=None,
        auth_method=method,
        public_key=key,
        redirect_uris=tuple(redirect_uris),
        grant_types=None,
        source="cimd",
        application_type=application_type if isinstance(application_type, str) else None,
        metadata=document,
    )
