"""The token and registration endpoints of the test authorization server.

Client authentication, every grant, dynamic registration, client ID metadata
documents and the DPoP checks of :class:`~mcpclient.testing.auth_server.AuthServer`
(whose docstring documents the behavior). Separate from the HTTP plumbing so
each part stays readable; nothing here is meant to be used directly.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import ipaddress
import json
import re
import secrets
import threading
import time
import urllib.error
import urllib.request
from base64 import b64decode
from collections.abc import Mapping
from typing import Any, Protocol
from urllib.parse import unquote_plus, urlsplit

import jwt
from cryptography.hazmat.primitives import serialization

from .oauth_common import (
    ASYMMETRIC_ALGS,
    ProofError,
    ReplayCache,
    b64url,
    encode_hs256,
    verify_dpop_proof,
)

GRANT_CODE = "authorization_code"
GRANT_REFRESH = "refresh_token"
GRANT_CLIENT_CREDENTIALS = "client_credentials"
GRANT_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
GRANT_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
TOKEN_TYPE_ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
TOKEN_TYPE_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_JAG_PROFILE = "urn:ietf:params:oauth:grant-profile:id-jag"
ID_JAG_TYP = "oauth-id-jag+jwt"
ID_JAG_LIFETIME = 300
SECRET_METHODS = ("client_secret_basic", "client_secret_post")
NO_STORE = (("Cache-Control", "no-store"),)
_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
CODE_LIFETIME = 600.0
CIMD_TIMEOUT = 5.0
CIMD_MAX_BYTES = 65536


@dataclasses.dataclass(frozen=True)
class Reply:
    """One HTTP answer of the authorization server."""

    status: int
    body: bytes
    content_type: str | None
    headers: tuple[tuple[str, str], ...] = ()
    error: str | None = None  # the OAuth error code, for the record

    @classmethod
    def text(cls, status: int, text: str, *, error: str | None = None) -> Reply:
        """A plain-text page."""
        return cls(status, text.encode("utf-8"), "text/plain; charset=utf-8", (), error)

    @classmethod
    def redirect(cls, location: str, *, error: str | None = None) -> Reply:
        """A 302 to ``location``."""
        return cls(302, b"", None, (("Location", location),), error)

    def with_headers(self, headers: tuple[tuple[str, str], ...]) -> Reply:
        """This reply with ``headers`` added."""
        return dataclasses.replace(self, headers=self.headers + headers)


def json_reply(status: int, document: Any, *, headers: tuple[tuple[str, str], ...] = ()) -> Reply:
    """A JSON answer (``error`` recorded from the document)."""
    error = document.get("error") if isinstance(document, dict) else None
    body = json.dumps(document).encode("utf-8")
    return Reply(status, body, "application/json", headers, error)


class OAuthError(Exception):
    """An RFC 6749 §5.2 error answer (``invalid_client`` 401, others 400 unless given)."""

    def __init__(
        self,
        error: str,
        description: str,
        *,
        status: int | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> None:
        """Keep the answer's parts."""
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description
        self.status = status if status is not None else 401 if error == "invalid_client" else 400
        self.headers = headers

    def reply(self) -> Reply:
        """The JSON error answer."""
        document = {"error": self.error, "error_description": self.description}
        return json_reply(self.status, document, headers=NO_STORE + self.headers)


@dataclasses.dataclass(frozen=True)
class RegisteredClient:
    """A client the server knows.

    Attributes:
        client_id: Its id (a URL for a client ID metadata document).
        secret: Its secret (the two ``client_secret_*`` methods), else None.
        auth_method: The token endpoint auth method it must use.
        public_key: The key that verifies its ``private_key_jwt`` assertions.
        redirect_uris: Registered redirect URIs; None accepts any loopback or https one.
        grant_types: Allowed grants; None allows every grant.
        source: ``"preregistered"``, ``"dcr"`` or ``"cimd"``.
        application_type: What its registration said (DCR/CIMD), if anything.
        metadata: The registration request or metadata document as received.
    """

    client_id: str
    secret: str | None = dataclasses.field(repr=False)
    auth_method: str
    public_key: Any = dataclasses.field(repr=False)
    redirect_uris: tuple[str, ...] | None
    grant_types: tuple[str, ...] | None
    source: str
    application_type: str | None = None
    metadata: Mapping[str, Any] = dataclasses.field(default_factory=dict, repr=False)


@dataclasses.dataclass(frozen=True)
class _Code:
    client_id: str
    redirect_uri: str
    challenge: str
    method: str
    scopes: tuple[str, ...]
    resource: str | None
    expires: float
    subject: str


@dataclasses.dataclass
class _Refresh:
    client_id: str
    scopes: tuple[str, ...]
    resource: str | None
    jkt: str | None
    subject: str


@dataclasses.dataclass(frozen=True)
class _Grant:
    """What a grant proved: the token to issue."""

    client_id: str
    subject: str
    scopes: tuple[str, ...]
    resource: str | None
    refreshable: bool = False
    old_refresh: str | None = None  # a refresh grant: the token presented
    refresh_scopes: tuple[str, ...] | None = None  # scopes a new refresh token keeps


def is_loopback_http(url: str) -> bool:
    """True for an ``http`` URL whose host is a loopback address or ``localhost``."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return False
    if parts.scheme != "http":
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_public_key(value: Any) -> Any:
    """A verification key from PEM (public or private), a JWK dict, or a key object."""
    if isinstance(value, Mapping):
        key: Any = jwt.PyJWK(dict(value)).key
    elif isinstance(value, str | bytes):
        data = value.encode("ascii") if isinstance(value, str) else value
        if b"PRIVATE KEY" in data:
            key = serialization.load_pem_private_key(data, password=None)
        else:
            key = serialization.load_pem_public_key(data)
    else:
        key = value
    # A private key verifies through its public half; never keep the private one.
    return key.public_key() if hasattr(key, "private_bytes") else key


def _constant_equal(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


def _pkce_ok(verifier: str, challenge: str, method: str) -> bool:
    if not _VERIFIER.fullmatch(verifier):
        return False
    if method == "S256":
        computed = b64url(hashlib.sha256(verifier.encode("ascii")).digest())
        return _constant_equal(computed, challenge)
    return method == "plain" and _constant_equal(verifier, challenge)


def _policy_allows(policy: str, granted: tuple[str, ...]) -> bool:
    """Whether the ``refresh_tokens`` knob lets a code grant carry a refresh token."""
    return policy == "always" or (policy == "offline_access" and "offline_access" in granted)


def _scopes(form: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(form.get("scope", "").split())


def _header(headers: list[tuple[str, str]], name: str) -> list[str]:
    return [value for key, value in headers if key.lower() == name.lower()]


class ServerKnobs(Protocol):
    """The knobs of :class:`~mcpclient.testing.auth_server.AuthServerConfig` read here."""

    @property
    def anonymous_jwt_bearer(self) -> bool: ...
    @property
    def cimd(self) -> bool: ...
    @property
    def dcr_application_type(self) -> str | None: ...
    @property
    def default_audience(self) -> str | None: ...
    @property
    def dpop(self) -> str: ...
    @property
    def dpop_nonce(self) -> bool: ...
    @property
    def idp(self) -> bool: ...
    @property
    def jag_client_id(self) -> str | None: ...
    @property
    def refresh_rotation(self) -> bool: ...
    @property
    def refresh_tokens(self) -> str: ...
    @property
    def require_resource(self) -> bool: ...
    @property
    def subject(self) -> str: ...
    @property
    def token_error(self) -> str | None: ...
    @property
    def token_lifetime(self) -> float | None: ...
    @property
    def withheld_scopes(self) -> tuple[str, ...]: ...


class IssuingServer(Protocol):
    """What the endpoints need of their :class:`~mcpclient.testing.auth_server.AuthServer`.

    A protocol, so that this module need not import the server module that
    imports it.
    """

    @property
    def config(self) -> ServerKnobs: ...
    @property
    def issuer(self) -> str: ...
    @property
    def token_endpoint(self) -> str: ...
    @property
    def token_secret(self) -> bytes: ...
    @property
    def public_jwk(self) -> dict[str, str]: ...
    def sign(self, claims: Mapping[str, Any], *, typ: str) -> str: ...


class TokenEndpoint:
    """The token and registration endpoints' state and logic.

    Thread safety: every method may be called from any thread.
    """

    def __init__(self, server: IssuingServer) -> None:
        """Bind to ``server`` (its config, issuer, secret and signing key)."""
        self._server = server
        self._lock = threading.Lock()
        self._clients: dict[str, RegisteredClient] = {}
        self._codes: dict[str, _Code] = {}
        self._refresh: dict[str, _Refresh] = {}
        self._idps: dict[str, Any] = {}
        self._assertion_issuers: dict[str, Any] = {}
        self._replay = ReplayCache()
        self._dpop_replay = ReplayCache()
        self._nonce = secrets.token_urlsafe(16)
        self._own_key = load_public_key(server.public_jwk)
        self._published: dict[str, Any] = {}
        self._cimd_fetches: list[str] = []

    # -- set-up

    def save_client(self, client: RegisteredClient) -> None:
        """Add or replace a client."""
        with self._lock:
            self._clients[client.client_id] = client

    def clients(self) -> dict[str, RegisteredClient]:
        """Every registered client (CIMD clients are fetched, not kept)."""
        with self._lock:
            return dict(self._clients)

    def trust_idp(self, issuer: str, key: Any) -> None:
        """Accept ID-JAGs from ``issuer``."""
        with self._lock:
            self._idps[issuer] = key

    def trusts_idps(self) -> bool:
        """True when some IdP is trusted (the metadata then lists the ID-JAG profile)."""
        with self._lock:
            return bool(self._idps)

    def trust_assertion_issuer(self, issuer: str, key: Any) -> None:
        """Accept workload JWT-bearer assertions from ``issuer``."""
        with self._lock:
            self._assertion_issuers[issuer] = key

    def revoke_refresh_tokens(self) -> int:
        """Forget every refresh token; returns how many there were."""
        with self._lock:
            count = len(self._refresh)
            self._refresh.clear()
            return count

    @property
    def dpop_nonce(self) -> str:
        """The current DPoP nonce."""
        with self._lock:
            return self._nonce

    def rotate_dpop_nonce(self) -> str:
        """Replace the DPoP nonce."""
        with self._lock:
            self._nonce = secrets.token_urlsafe(16)
            return self._nonce

    def new_code(
        self,
        *,
        client_id: str,
        redirect_uri: str,
        challenge: str,
        method: str,
        scopes: tuple[str, ...],
        resource: str | None,
    ) -> str:
        """Store and return a fresh authorization code."""
        code = "code-" + secrets.token_urlsafe(24)
        record = _Code(
            client_id,
            redirect_uri,
            challenge,
            method,
            scopes,
            resource,
            time.monotonic() + CODE_LIFETIME,
            self._server.config.subject,
        )
        with self._lock:
            self._codes[code] = record
        return code

    def mint(
        self,
        *,
        client_id: str,
        subject: str,
        scopes: tuple[str, ...],
        audience: str | None,
        lifetime: float | None,
        jkt: str | None,
    ) -> str:
        """An HS256 access token (format in :mod:`mcpclient.testing.oauth_common`)."""
        now = time.time()
        claims: dict[str, Any] = {
            "iss": self._server.issuer,
            "sub": subject,
            "client_id": client_id,
            "scope": " ".join(scopes),
            "iat": now,
            "jti": secrets.token_hex(12),
        }
        if audience is not None:
            claims["aud"] = audience
        if lifetime is not None:
            claims["exp"] = now + lifetime
        if jkt is not None:
            claims["cnf"] = {"jkt": jkt}
        return encode_hs256(claims, self._server.token_secret)

    # -- clients

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

    def _authenticate(
        self, form: Mapping[str, str], headers: list[tuple[str, str]]
    ) -> RegisteredClient | None:
        """The client the request authenticates as, None when it names no client."""
        authorization = _header(headers, "Authorization")
        if authorization and authorization[0][:6].lower() == "basic ":
            return self._basic(authorization[0][6:].strip(), form)
        if "client_assertion" in form:
            return self._private_key_jwt(form)
        client_id = form.get("client_id")
        if client_id is None:
            return None
        client = self.client(client_id)
        if client is None:
            raise OAuthError("invalid_client", "unknown client")
        if "client_secret" in form:
            ok = client.auth_method == "client_secret_post" and _constant_equal(
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
        client = self.client(client_id) if sep else None
        if (
            client is None
            or client.auth_method != "client_secret_basic"
            or not _constant_equal(secret, client.secret or "")
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
        client = self.client(client_id)
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

    # -- the token endpoint

    def handle(self, *, form: Mapping[str, str], headers: list[tuple[str, str]]) -> Reply:
        """Answer one token request."""
        cfg = self._server.config
        extra: tuple[tuple[str, str], ...] = ()
        if cfg.dpop != "off" and cfg.dpop_nonce:
            extra = (("DPoP-Nonce", self.dpop_nonce),)
        try:
            if cfg.token_error is not None:
                raise OAuthError(cfg.token_error, "forced by the token_error knob")
            # DPoP first: a use_dpop_nonce answer must not spend a code or an assertion.
            jkt = self._dpop(headers)
            client = self._authenticate(form, headers)
            reply = self._grant(form, client, jkt)
        except OAuthError as failure:
            reply = failure.reply()
        return reply.with_headers(extra)

    def _dpop(self, headers: list[tuple[str, str]]) -> str | None:
        cfg = self._server.config
        if cfg.dpop == "off":
            return None
        proofs = _header(headers, "DPoP")
        if not proofs:
            if cfg.dpop == "required":
                raise OAuthError("invalid_dpop_proof", "a DPoP proof is required")
            return None
        if len(proofs) > 1:
            raise OAuthError("invalid_dpop_proof", "exactly one DPoP header is allowed")
        try:
            return verify_dpop_proof(
                proofs[0],
                method="POST",
                url=self._server.token_endpoint,
                replay=self._dpop_replay,
                nonce=self.dpop_nonce if cfg.dpop_nonce else None,
            )
        except ProofError as exc:
            error = "use_dpop_nonce" if exc.use_nonce else "invalid_dpop_proof"
            raise OAuthError(error, exc.reason) from exc

    def _grant(
        self, form: Mapping[str, str], client: RegisteredClient | None, jkt: str | None
    ) -> Reply:
        grant_type = form.get("grant_type", "")
        allowed = client.grant_types if client is not None else None
        if allowed is not None and grant_type not in allowed:
            raise OAuthError("unauthorized_client", f"{grant_type} is not allowed")
        if grant_type == GRANT_TOKEN_EXCHANGE and self._server.config.idp:
            return self._token_exchange(form, client)
        handlers = {
            GRANT_CODE: self._code_grant,
            GRANT_REFRESH: self._refresh_grant,
            GRANT_CLIENT_CREDENTIALS: self._client_credentials,
            GRANT_JWT_BEARER: self._jwt_bearer,
        }
        handler = handlers.get(grant_type)
        if handler is None:
            raise OAuthError("unsupported_grant_type", "unsupported grant_type")
        return self._issue(handler(form, client, jkt), jkt)

    def _resource(self, form: Mapping[str, str], bound: str | None) -> str | None:
        resource = form.get("resource")
        if bound is not None and resource is not None and resource != bound:
            raise OAuthError("invalid_target", "resource differs from the one granted")
        resource = resource or bound
        if resource is None and self._server.config.require_resource:
            raise OAuthError("invalid_target", "resource is required")
        return resource

    @staticmethod
    def _named(client: RegisteredClient | None) -> RegisteredClient:
        if client is None:
            raise OAuthError("invalid_client", "client authentication is required")
        return client

    def _code_grant(
        self, form: Mapping[str, str], client: RegisteredClient | None, jkt: str | None
    ) -> _Grant:
        client = self._named(client)
        with self._lock:
            record = self._codes.pop(form.get("code", ""), None)  # single use, even on failure
        if record is None or record.expires < time.monotonic():
            raise OAuthError("invalid_grant", "unknown, used or expired code")
        if record.client_id != client.client_id:
            raise OAuthError("invalid_grant", "the code was issued to another client")
        if form.get("redirect_uri") != record.redirect_uri:
            raise OAuthError("invalid_grant", "redirect_uri differs from the authorization's")
        if not _pkce_ok(form.get("code_verifier", ""), record.challenge, record.method):
            raise OAuthError("invalid_grant", "PKCE verification failed")
        resource = self._resource(form, record.resource)
        return _Grant(client.client_id, record.subject, record.scopes, resource, refreshable=True)

    def _refresh_grant(
        self, form: Mapping[str, str], client: RegisteredClient | None, jkt: str | None
    ) -> _Grant:
        client = self._named(client)
        token = form.get("refresh_token", "")
        with self._lock:
            record = self._refresh.get(token)
        if record is None or record.client_id != client.client_id:
            raise OAuthError("invalid_grant", "unknown or revoked refresh token")
        if record.jkt is not None and record.jkt != jkt:
            raise OAuthError("invalid_grant", "the refresh token is bound to another DPoP key")
        scopes = _scopes(form) or record.scopes
        if not set(scopes) <= set(record.scopes):
            raise OAuthError("invalid_scope", "scope exceeds the original grant")
        resource = self._resource(form, record.resource)
        return _Grant(
            client.client_id,
            record.subject,
            scopes,
            resource,
            refreshable=True,
            old_refresh=token,
            refresh_scopes=record.scopes,
        )

    def _client_credentials(
        self, form: Mapping[str, str], client: RegisteredClient | None, jkt: str | None
    ) -> _Grant:
        client = self._named(client)
        if client.auth_method == "none":
            raise OAuthError("unauthorized_client", "public clients cannot use this grant")
        resource = self._resource(form, None)
        return _Grant(client.client_id, client.client_id, _scopes(form), resource)

    def _jwt_bearer(
        self, form: Mapping[str, str], client: RegisteredClient | None, jkt: str | None
    ) -> _Grant:
        assertion = form.get("assertion")
        if not assertion:
            raise OAuthError("invalid_request", "assertion is required")
        try:
            header = jwt.get_unverified_header(assertion)
            issuer = jwt.decode(assertion, options={"verify_signature": False}).get("iss")
        except jwt.PyJWTError as exc:
            raise OAuthError("invalid_grant", "malformed assertion") from exc
        is_jag = header.get("typ") == ID_JAG_TYP
        if client is None and not is_jag and not self._server.config.anonymous_jwt_bearer:
            raise OAuthError("invalid_client", "client authentication is required")
        with self._lock:
            key = (self._idps if is_jag else self._assertion_issuers).get(str(issuer))
        if key is None:
            raise OAuthError("invalid_grant", "the assertion's issuer is not trusted")
        server = self._server
        try:
            claims = jwt.decode(
                assertion,
                key,
                algorithms=list(ASYMMETRIC_ALGS),
                audience=[server.issuer, server.token_endpoint],
                issuer=str(issuer),
                options={"require": ["exp", "sub", "iss", "aud"]},
            )
        except jwt.PyJWTError as exc:
            why = type(exc).__name__
            raise OAuthError("invalid_grant", f"assertion rejected ({why})") from exc
        if is_jag:
            return self._id_jag_grant(claims, form, self._named(client))
        if not self._spend(claims.get("jti"), required=False):
            raise OAuthError("invalid_grant", "assertion replayed")
        client_id = client.client_id if client is not None else str(claims["sub"])
        return _Grant(client_id, str(claims["sub"]), _scopes(form), self._resource(form, None))

    def _id_jag_grant(
        self, claims: Mapping[str, Any], form: Mapping[str, str], client: RegisteredClient
    ) -> _Grant:
        # The client is checked before the jti is spent: a retry with credentials still works.
        if claims.get("client_id", client.client_id) != client.client_id:
            raise OAuthError("invalid_grant", "the ID-JAG was issued for another client")
        if not self._spend(claims.get("jti"), required=True):
            raise OAuthError("invalid_grant", "ID-JAG jti missing or replayed")
        bound = claims.get("resource")
        resource = self._resource(form, bound if isinstance(bound, str) else None)
        scopes = _scopes(form) or tuple(str(claims.get("scope", "")).split())
        return _Grant(client.client_id, str(claims["sub"]), scopes, resource)

    def _spend(self, jti: Any, *, required: bool) -> bool:
        """Record a grant assertion's ``jti``; False when missing (if required) or replayed."""
        if not jti:
            return not required
        return self._replay.add(f"grant:{jti}")

    def _token_exchange(self, form: Mapping[str, str], client: RegisteredClient | None) -> Reply:
        """IdP mode: an ID token for an ID-JAG (RFC 8693, SEP-990)."""
        server = self._server
        for name, wanted in (
            ("requested_token_type", TOKEN_TYPE_ID_JAG),
            ("subject_token_type", TOKEN_TYPE_ID_TOKEN),
        ):
            if form.get(name) != wanted:
                raise OAuthError("invalid_request", f"{name} must be {wanted}")
        audience = form.get("audience")
        if not audience:
            raise OAuthError("invalid_request", "audience is required")
        try:
            identity = jwt.decode(
                form.get("subject_token", ""),
                self._own_key,
                algorithms=["ES256"],
                issuer=server.issuer,
                options={"verify_aud": False, "require": ["exp", "sub", "iss"]},
            )
        except jwt.PyJWTError as exc:
            why = type(exc).__name__
            raise OAuthError("invalid_grant", f"subject_token rejected ({why})") from exc
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": server.issuer,
            "sub": identity["sub"],
            "aud": audience,
            "iat": now,
            "exp": now + ID_JAG_LIFETIME,
            "jti": secrets.token_hex(12),
        }
        client_id = server.config.jag_client_id or (client.client_id if client else None)
        if client_id is not None:
            claims["client_id"] = client_id
        if form.get("resource"):
            claims["resource"] = form["resource"]
        if form.get("scope"):
            claims["scope"] = form["scope"]
        answer: dict[str, Any] = {
            "access_token": server.sign(claims, typ=ID_JAG_TYP),
            "issued_token_type": TOKEN_TYPE_ID_JAG,
            "token_type": "N_A",
            "expires_in": ID_JAG_LIFETIME,
        }
        if form.get("scope"):
            answer["scope"] = form["scope"]
        return json_reply(200, answer, headers=NO_STORE)

    def _issue(self, grant: _Grant, jkt: str | None) -> Reply:
        cfg = self._server.config
        scopes = tuple(s for s in grant.scopes if s not in cfg.withheld_scopes)
        access = self.mint(
            client_id=grant.client_id,
            subject=grant.subject,
            scopes=scopes,
            audience=grant.resource or cfg.default_audience,
            lifetime=cfg.token_lifetime,
            jkt=jkt,
        )
        body: dict[str, Any] = {"access_token": access, "token_type": "DPoP" if jkt else "Bearer"}
        if cfg.token_lifetime is not None:
            body["expires_in"] = int(cfg.token_lifetime)
        if scopes:
            body["scope"] = " ".join(scopes)
        refresh = self._new_refresh(grant, scopes, jkt)
        if refresh is not None:
            body["refresh_token"] = refresh
        return json_reply(200, body, headers=NO_STORE)

    def _new_refresh(self, grant: _Grant, granted: tuple[str, ...], jkt: str | None) -> str | None:
        cfg = self._server.config
        if grant.old_refresh is not None:
            if not cfg.refresh_rotation:
                return None
            with self._lock:
                self._refresh.pop(grant.old_refresh, None)
        elif not grant.refreshable or not _policy_allows(cfg.refresh_tokens, granted):
            return None
        token = "rt-" + secrets.token_urlsafe(24)
        scopes = grant.refresh_scopes if grant.refresh_scopes is not None else granted
        record = _Refresh(grant.client_id, scopes, grant.resource, jkt, grant.subject)
        with self._lock:
            self._refresh[token] = record
        return token

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
            grant_types=None,
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
