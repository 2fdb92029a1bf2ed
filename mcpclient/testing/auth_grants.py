"""The token endpoint of the test authorization server: DPoP checks and every grant.

``authorization_code`` (with PKCE), ``refresh_token``, ``client_credentials``,
JWT bearer (workload assertions and ID-JAGs) and, in IdP mode, token exchange
(:mod:`.auth_idp`), for the client :mod:`.auth_client_auth` authenticated;
the clients themselves are kept by :mod:`.auth_clients`. The behavior is
documented in the docstring of :class:`~mcpclient.testing.auth_server.AuthServer`;
nothing here is meant to be used directly.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import secrets
import threading
import time
from collections.abc import Mapping
from typing import Any

import jwt

from .auth_base import (
    GRANT_CLIENT_CREDENTIALS,
    GRANT_CODE,
    GRANT_JWT_BEARER,
    GRANT_REFRESH,
    GRANT_TOKEN_EXCHANGE,
    ID_JAG_TYP,
    NO_STORE,
    IssuingServer,
    OAuthError,
    RegisteredClient,
    Reply,
    constant_equal,
    header_values,
    json_reply,
    load_public_key,
)
from .auth_client_auth import ClientAuthentication
from .auth_clients import ClientRegistry
from .auth_device import GRANT_DEVICE_CODE, VERIFICATION_PATH, DeviceCodes
from .auth_idp import token_exchange
from .oauth_common import (
    ASYMMETRIC_ALGS,
    ProofError,
    ReplayCache,
    b64url,
    encode_hs256,
    verify_dpop_proof,
)

_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
CODE_LIFETIME = 600.0


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


def _pkce_ok(verifier: str, challenge: str, method: str) -> bool:
    if not _VERIFIER.fullmatch(verifier):
        return False
    if method == "S256":
        computed = b64url(hashlib.sha256(verifier.encode("ascii")).digest())
        return constant_equal(computed, challenge)
    return method == "plain" and constant_equal(verifier, challenge)


def _policy_allows(policy: str, granted: tuple[str, ...]) -> bool:
    """Whether the ``refresh_tokens`` knob lets a code grant carry a refresh token."""
    return policy == "always" or (policy == "offline_access" and "offline_access" in granted)


def _scopes(form: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(form.get("scope", "").split())


class TokenEndpoint:
    """The token endpoint's state and logic.

    Thread safety: every method may be called from any thread.
    """

    def __init__(self, server: IssuingServer, clients: ClientRegistry) -> None:
        """Bind to ``server`` (its config, issuer, secret and signing key) and its ``clients``."""
        self._server = server
        self._lock = threading.Lock()
        self._codes: dict[str, _Code] = {}
        self._refresh: dict[str, _Refresh] = {}
        self._idps: dict[str, Any] = {}
        self._assertion_issuers: dict[str, Any] = {}
        self._replay = ReplayCache()
        self._dpop_replay = ReplayCache()
        self._nonce = secrets.token_urlsafe(16)
        self._own_key = load_public_key(server.public_jwk)
        # One replay cache for client assertions and grant assertions (prefixed apart).
        self._authentication = ClientAuthentication(clients, server, self._replay)
        self.devices = DeviceCodes()

    # -- set-up

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
            client = self._authentication.authenticate(form, headers)
            reply = self._grant(form, client, jkt)
        except OAuthError as failure:
            reply = failure.reply()
        return reply.with_headers(extra)

    def authorize_device(self, *, form: Mapping[str, str], headers: list[tuple[str, str]]) -> Reply:
        """Answer one device authorization request (RFC 8628 §3.1, §3.2)."""
        cfg = self._server.config
        try:
            client = self._named(self._authentication.authenticate(form, headers))
            allowed = client.grant_types
            if allowed is not None and GRANT_DEVICE_CODE not in allowed:
                raise OAuthError("unauthorized_client", "the device grant is not allowed")
            self._resource(form, None)
            device_code, user_code = self.devices.issue(
                client.client_id, form, lifetime=cfg.device_lifetime
            )
        except OAuthError as failure:
            return failure.reply()
        page = self._server.issuer + VERIFICATION_PATH
        body: dict[str, Any] = {
            "device_code": device_code,
            "user_code": user_code,
            "verification_uri": page,
            "verification_uri_complete": f"{page}?user_code={user_code}",
            "expires_in": int(cfg.device_lifetime) or 1,
        }
        if cfg.device_interval is not None:
            body["interval"] = cfg.device_interval
        return json_reply(200, body, headers=NO_STORE)

    def _dpop(self, headers: list[tuple[str, str]]) -> str | None:
        cfg = self._server.config
        if cfg.dpop == "off":
            return None
        proofs = header_values(headers, "DPoP")
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
            return token_exchange(self._server, self._own_key, form, client)
        handlers = {
            GRANT_CODE: self._code_grant,
            GRANT_REFRESH: self._refresh_grant,
            GRANT_CLIENT_CREDENTIALS: self._client_credentials,
            GRANT_JWT_BEARER: self._jwt_bearer,
        }
        if self._server.config.device:
            handlers[GRANT_DEVICE_CODE] = self._device_grant
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

    def _device_grant(
        self, form: Mapping[str, str], client: RegisteredClient | None, jkt: str | None
    ) -> _Grant:
        client = self._named(client)
        approved = self.devices.poll(form.get("device_code", ""), client.client_id)
        resource = self._resource(form, approved.resource)
        subject = self._server.config.subject
        return _Grant(client.client_id, subject, approved.scopes, resource, refreshable=True)

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
