"""Token endpoint requests: every grant, client authentication, DPoP, the response rules.

:class:`TokenEndpoint` speaks to one authorization server's token endpoint as
one registered client: it adds client authentication (``client_secret_basic``,
``client_secret_post``, ``none`` or ``private_key_jwt``), the RFC 8707
``resource``, and a DPoP proof when a DPoP key is set, and turns the reply
into a :class:`~mcpclient.auth.tokens.TokenSet` or a classified
:class:`~mcpclient.errors.AuthError`. :func:`exchange_for_id_jag` is the
RFC 8693 exchange at an enterprise identity provider (ID token -> ID-JAG).

Without a client (``TokenEndpoint(meta, None, http)``) it speaks as no client
at all, for an anonymous workload's JWT bearer grant (workload identity
federation; client authentication is optional there, RFC 7523 §3.1): the
request then carries no ``client_id``, secret or client assertion.

Requests are never retried, with one exception: an authorization server that
answers ``use_dpop_nonce`` with a ``DPoP-Nonce`` gets the request once more
with a proof carrying that nonce (RFC 9449 §8; the request was refused before
its code or refresh token was looked at). Any other retry could spend a
single-use code, a single-use assertion or a rotating refresh token twice.

Response rules: a non-200 reply, or a 200 reply with ``error``, fails with
the class of its error code (``invalid_grant``, ``expired_token`` -> ``auth_expired``;
``access_denied``, ``invalid_client``, ``unauthorized_client`` ->
``auth_denied``; other known codes -> ``auth_failed``; no or an unknown code:
401/403 -> ``auth_denied``, else ``auth_failed``). A success needs an
``access_token``; ``token_type`` must be ``Bearer`` (or ``DPoP`` when a DPoP
key was used); ``expires_in`` absent means no known expiry, negative is an
error, 0 is already expired, and more than a year is cut to a year; ``scope``
absent means the scopes requested. Server text in errors is bounded to 200
characters, with any secret this request sent scrubbed out of it. The reply
documents are mapped (and bounded) by :mod:`mcpclient._internal.wire.oauth`;
what depends on the request (the token types acceptable, the scopes asked
for, the secrets to scrub) is judged here.

Thread safety: a :class:`TokenEndpoint` may be shared; each call is one
independent exchange (the DPoP nonce is kept under a lock).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from mcpclient._core.limits import normalize_message
from mcpclient._internal.wire import oauth as wire
from mcpclient._internal.wire.oauth import MAX_EXPIRES_IN as MAX_EXPIRES_IN  # noqa: PLC0414
from mcpclient._internal.wire.oauth import TOKEN_TYPE_ID_JAG as TOKEN_TYPE_ID_JAG  # noqa: PLC0414
from mcpclient.auth._jose import SigningKey, client_assertion, dpop_proof
from mcpclient.auth.tokens import ClientInfo, TokenSet
from mcpclient.errors import AuthError, ConfigError, FailureClass

if TYPE_CHECKING:
    from mcpclient.auth._net import JSONResponse, SafeHTTP
    from mcpclient.auth.discovery import ServerMetadata

__all__ = [
    "CLIENT_ASSERTION_TYPE",
    "DEVICE_WAIT_CODES",
    "GRANT_DEVICE_CODE",
    "GRANT_JWT_BEARER",
    "GRANT_TOKEN_EXCHANGE",
    "MAX_EXPIRES_IN",
    "TOKEN_TYPE_ID_JAG",
    "TOKEN_TYPE_ID_TOKEN",
    "TokenEndpoint",
    "classify_error",
    "exchange_for_id_jag",
]

GRANT_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
GRANT_DEVICE_CODE = "urn:ietf:params:oauth:grant-type:device_code"
#: RFC 8628 §3.5: the answers to a device code poll that mean "keep polling".
DEVICE_WAIT_CODES = frozenset({"authorization_pending", "slow_down"})
GRANT_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
TOKEN_TYPE_ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
#: Bound on server text (an error code or description) kept in a message.
MAX_SERVER_TEXT = 200
#: Bound on a ``DPoP-Nonce`` kept from the authorization server.
MAX_NONCE_CHARS = 1024

_EXPIRED_CODES = frozenset({"invalid_grant", "expired_token"})
_DENIED_CODES = frozenset({"access_denied", "invalid_client", "unauthorized_client"})
_FAILED_CODES = frozenset(
    {
        "invalid_request",
        "invalid_scope",
        "invalid_target",
        "unsupported_grant_type",
        "server_error",
        "temporarily_unavailable",
        "use_dpop_nonce",
        "invalid_dpop_proof",
    }
)
# Form fields whose values are secrets: scrubbed from any server text we show.
_SECRET_FIELDS = (
    "code",
    "code_verifier",
    "refresh_token",
    "client_secret",
    "client_assertion",
    "assertion",
    "subject_token",
    "device_code",
)


def _fail(message: str, failure_class: FailureClass = FailureClass.AUTH_FAILED) -> AuthError:
    return AuthError(message, failure_class=failure_class)


def classify_error(code: str | None, status: int) -> FailureClass:
    """The failure class of an OAuth error ``code`` in a reply with HTTP ``status``."""
    if code in _EXPIRED_CODES:
        return FailureClass.AUTH_EXPIRED
    if code in _DENIED_CODES:
        return FailureClass.AUTH_DENIED
    if code in _FAILED_CODES:
        return FailureClass.AUTH_FAILED
    if status in (401, 403):
        return FailureClass.AUTH_DENIED
    return FailureClass.AUTH_FAILED


def _scrub(text: str, sent_secrets: Iterable[str]) -> str:
    # A server may echo what it was sent ("refresh token abc... is revoked").
    for secret in sent_secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return normalize_message(text, MAX_SERVER_TEXT)


def _reply_error(reply: JSONResponse, what: str, sent_secrets: Sequence[str]) -> AuthError:
    error = wire.error_reply(reply.body)
    code = error.error
    parts = [f"HTTP {reply.status}"]
    if code is not None:
        parts.append(repr(_scrub(code, sent_secrets)[:64]))
    message = f"the {what} refused the request ({', '.join(parts)})"
    description = error.error_description
    if description is not None and description.strip():
        message += f": {_scrub(description, sent_secrets)}"
    return _fail(message, classify_error(code, reply.status))


def _visible_ascii(value: str, *, space: bool) -> bool:
    low = 0x20 if space else 0x21
    return all(low <= ord(c) <= 0x7E for c in value)


def _valid_nonce(value: str | None) -> str | None:
    # RFC 9449 §8.1: nonce = 1*NQCHAR (visible ASCII but '"' and '\').
    if not value or len(value) > MAX_NONCE_CHARS:
        return None
    if not _visible_ascii(value, space=False) or '"' in value or "\\" in value:
        return None
    return value


class TokenEndpoint:
    """One client's token endpoint at one authorization server.

    Example::

        endpoint = TokenEndpoint(meta, client, http, dpop_key=SigningKey.generate_dpop())
        tokens = endpoint.exchange_code(code, verifier=verifier, redirect_uri=uri,
                                        deadline=deadline, resource=resource)
        tokens = endpoint.refresh(tokens, deadline=deadline)

        workload = TokenEndpoint(meta, None, http)  # anonymous: no client authentication
        tokens = workload.jwt_bearer(assertion, scopes=(), deadline=deadline, resource=resource)

    Args:
        meta: the authorization server's metadata (``issuer``, ``token_endpoint``).
        client: the client registered with that issuer, or None for no client
            at all: requests then carry no client authentication (no
            ``client_id``, secret or client assertion). Only
            :meth:`jwt_bearer` and :meth:`refresh` work without a client.
        http: the checked HTTP client every request goes through.
        signing_key: the client's key, required by ``private_key_jwt``.
        dpop_key: bind tokens to this key with DPoP proofs (RFC 9449).
        dpop_nonce: a ``DPoP-Nonce`` this server gave earlier, if known.

    Raises:
        AuthError: ``auth_failed``: the client belongs to another issuer, or
            ``private_key_jwt`` without a signing key.

    Thread safety: may be shared between threads.
    """

    def __init__(
        self,
        meta: ServerMetadata,
        client: ClientInfo | None,
        http: SafeHTTP,
        *,
        signing_key: SigningKey | None = None,
        dpop_key: SigningKey | None = None,
        dpop_nonce: str | None = None,
    ) -> None:
        if client is not None:
            if client.issuer and client.issuer != meta.issuer:
                # A registration is only good at the server that made it (mix-up defense).
                raise _fail("the client was registered with another authorization server")
            if client.auth_method == "private_key_jwt" and signing_key is None:
                raise _fail("token endpoint auth method private_key_jwt needs a client key")
        self._meta = meta
        self._client = client
        self._http = http
        self._signing_key = signing_key
        self._dpop_key = dpop_key
        self._lock = threading.Lock()
        self._nonce = _valid_nonce(dpop_nonce)

    def __repr__(self) -> str:
        method = "anonymous" if self._client is None else self._client.auth_method
        return (
            f"<TokenEndpoint {self._meta.token_endpoint!r} {method}"
            f"{' dpop' if self._dpop_key else ''}>"
        )

    @property
    def dpop_nonce(self) -> str | None:
        """The latest ``DPoP-Nonce`` the authorization server sent, if any."""
        with self._lock:
            return self._nonce

    # --- grants ----------------------------------------------------------------

    def exchange_code(
        self,
        code: str,
        *,
        verifier: str,
        redirect_uri: str,
        deadline: float,
        resource: str | None,
        scopes: Sequence[str] = (),
    ) -> TokenSet:
        """Redeem an authorization code (with its PKCE verifier). Never retried.

        ``scopes`` are what was requested, used when the reply names none.

        Raises:
            AuthError: ``auth_failed`` without a client; else see the module
                docstring.
        """
        self._need_client("the authorization code grant")
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        }
        return self.request(form, deadline=deadline, resource=resource, requested_scopes=scopes)

    def refresh(self, tokens: TokenSet, *, deadline: float, send_resource: bool = True) -> TokenSet:
        """Refresh ``tokens`` (same scopes, no ``scope`` parameter).

        A rotated refresh token replaces the old one; when the reply has none,
        the old one is kept. ``send_resource=False`` leaves out the
        ``resource`` parameter (2025-03-26 servers).

        Raises:
            AuthError: ``auth_expired`` when there is no refresh token or the
                server answers ``invalid_grant``; ``auth_failed`` when the
                tokens belong to another issuer; else see the module docstring.
        """
        if tokens.refresh_token is None:
            raise _fail("there is no refresh token to use", FailureClass.AUTH_EXPIRED)
        if tokens.issuer != self._meta.issuer:
            raise _fail("the tokens were issued by another authorization server")
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
        resource = tokens.resource if send_resource and tokens.resource else None
        fresh = self.request(
            form, deadline=deadline, resource=resource, requested_scopes=tokens.scopes
        )
        changes: dict[str, Any] = {"resource": tokens.resource}
        if fresh.refresh_token is None:
            changes["refresh_token"] = tokens.refresh_token
        return attrs.evolve(fresh, **changes)

    def client_credentials(
        self, *, scopes: Sequence[str], deadline: float, resource: str | None
    ) -> TokenSet:
        """The client credentials grant (machine to machine; no person involved).

        Raises:
            AuthError: ``auth_failed`` without a client; else see the module
                docstring.
        """
        self._need_client("the client credentials grant")
        form = {"grant_type": "client_credentials", **_scope_field(scopes)}
        return self.request(form, deadline=deadline, resource=resource, requested_scopes=scopes)

    def jwt_bearer(
        self, assertion: str, *, scopes: Sequence[str], deadline: float, resource: str | None
    ) -> TokenSet:
        """The JWT bearer grant (RFC 7523 §2.1): a workload JWT or an ID-JAG as ``assertion``.

        Without a client the request carries no client authentication
        (RFC 7523 §3.1). Never retried (but for ``use_dpop_nonce``): a refused
        assertion, ``invalid_grant`` (``auth_expired``) or ``invalid_scope``
        (``auth_failed``), is raised as it came.

        Raises:
            AuthError: see the module docstring.
        """
        form = {"grant_type": GRANT_JWT_BEARER, "assertion": assertion, **_scope_field(scopes)}
        return self.request(form, deadline=deadline, resource=resource, requested_scopes=scopes)

    def poll_device_code(
        self, device_code: str, *, scopes: Sequence[str], deadline: float, resource: str | None
    ) -> TokenSet | str:
        """One device code poll (RFC 8628 §3.4): the tokens, or a "keep polling" code.

        Returns:
            The :class:`TokenSet` once the person approved, else the error
            code of :data:`DEVICE_WAIT_CODES` the server answered
            (``authorization_pending`` or ``slow_down``).

        Raises:
            AuthError: any other answer, as in the module docstring
                (``access_denied`` -> ``auth_denied``); ``expired_token``
                -> ``auth_expired``; ``auth_failed`` without a client.
        """
        self._need_client("the device authorization grant")
        form = {"grant_type": GRANT_DEVICE_CODE, "device_code": device_code}
        sent_secrets = [device_code]
        if self._client is not None and self._client.client_secret:
            sent_secrets.append(self._client.client_secret)
        reply, issued_at = self._exchange(form, resource, deadline, sent_secrets)
        code = wire.error_reply(reply.body).error
        if reply.status == 400 and code in DEVICE_WAIT_CODES:
            return code
        return self._token_set(reply, issued_at, resource, scopes, sent_secrets)

    def device_authorization(
        self, *, scopes: Sequence[str], deadline: float, resource: str | None
    ) -> Any:
        """Ask the ``device_authorization_endpoint`` for a device code (RFC 8628 §3.1).

        The client authenticates as at the token endpoint.

        Returns:
            The reply's JSON body (checked by :mod:`mcpclient.auth.device`).

        Raises:
            AuthError: ``auth_failed`` without a client or an endpoint; a
                refusal classified as in the module docstring.
        """
        self._need_client("the device authorization grant")
        url = self._meta.device_authorization_endpoint
        if not url:
            raise _fail(f"{self._meta.issuer} has no device_authorization_endpoint")
        body, basic = self._authenticate(_scope_field(scopes))
        if resource is not None:
            body["resource"] = resource
        what = "device authorization endpoint"
        reply = self._http.post_form(url, body, deadline=deadline, what=what, basic=basic)
        secret = self._client.client_secret if self._client is not None else None
        if reply.status != 200 or wire.error_reply(reply.body).error is not None:
            raise _reply_error(reply, what, [secret] if secret else [])
        return reply.body

    # --- the exchange ----------------------------------------------------------

    def request(
        self,
        form: Mapping[str, str],
        *,
        deadline: float,
        resource: str | None,
        requested_scopes: Sequence[str] = (),
    ) -> TokenSet:
        """POST ``form`` to the token endpoint, with client authentication (if any) and DPoP.

        Args:
            form: the grant's fields (``grant_type`` and its parameters).
            deadline: a ``time.monotonic()`` instant bounding the exchange.
            resource: the RFC 8707 resource to name, or None to name none.
            requested_scopes: the scopes asked for (kept when the reply has no
                ``scope``).

        Raises:
            AuthError: see the module docstring.
        """
        sent_secrets = [form[name] for name in _SECRET_FIELDS if form.get(name)]
        if self._client is not None and self._client.client_secret:
            sent_secrets.append(self._client.client_secret)
        reply, issued_at = self._exchange(form, resource, deadline, sent_secrets)
        return self._token_set(reply, issued_at, resource, requested_scopes, sent_secrets)

    def _exchange(
        self,
        form: Mapping[str, str],
        resource: str | None,
        deadline: float,
        sent_secrets: list[str],
    ) -> tuple[JSONResponse, float]:
        what = "token endpoint"
        for attempt in range(2):
            body, basic = self._authenticate(form)
            if resource is not None:
                body["resource"] = resource
            if "client_assertion" in body:
                sent_secrets.append(body["client_assertion"])
            headers: dict[str, str] = {}
            if self._dpop_key is not None:
                headers["DPoP"] = dpop_proof(
                    self._dpop_key,
                    method="POST",
                    url=self._meta.token_endpoint,
                    nonce=self.dpop_nonce,
                )
            issued_at = time.time()
            reply = self._http.post_form(
                self._meta.token_endpoint,
                body,
                deadline=deadline,
                what=what,
                headers=headers,
                basic=basic,
            )
            fresh = self._take_nonce(reply)
            retry = (
                attempt == 0
                and self._dpop_key is not None
                and reply.status in (400, 401)
                and wire.error_reply(reply.body).error == "use_dpop_nonce"
                and fresh
            )
            if not retry:
                return reply, issued_at
        return reply, issued_at

    def _need_client(self, grant: str) -> None:
        if self._client is None:
            raise _fail(f"{grant} needs a client; this token endpoint has none")

    def _take_nonce(self, reply: JSONResponse) -> bool:
        """Keep a new ``DPoP-Nonce`` from ``reply``; whether one was new."""
        if self._dpop_key is None:
            return False
        nonce = _valid_nonce(reply.headers.get("dpop-nonce"))
        if nonce is None:
            return False
        with self._lock:
            changed = nonce != self._nonce
            self._nonce = nonce
        return changed

    def _authenticate(
        self, form: Mapping[str, str]
    ) -> tuple[dict[str, str], tuple[str, str] | None]:
        body = dict(form)
        client = self._client
        if client is None:
            return body, None  # anonymous: no client_id, no secret, no client assertion
        method = client.auth_method
        if method == "client_secret_basic":
            assert client.client_secret is not None  # ClientInfo enforces it
            return body, (client.client_id, client.client_secret)
        body["client_id"] = client.client_id
        if method == "client_secret_post":
            assert client.client_secret is not None
            body["client_secret"] = client.client_secret
        elif method == "private_key_jwt":
            assert self._signing_key is not None  # checked in __init__
            body["client_assertion_type"] = CLIENT_ASSERTION_TYPE
            body["client_assertion"] = client_assertion(
                self._signing_key, client_id=client.client_id, audience=self._meta.issuer
            )
        return body, None

    def _token_set(
        self,
        reply: JSONResponse,
        issued_at: float,
        resource: str | None,
        requested: Sequence[str],
        sent_secrets: Sequence[str],
    ) -> TokenSet:
        what = "token endpoint"
        if reply.status != 200 or wire.error_reply(reply.body).error is not None:
            raise _reply_error(reply, what, sent_secrets)
        granted = wire.token_reply(reply.body, what=what)
        expires_in = granted.expires_in
        try:
            return TokenSet(
                granted.access_token,
                token_type=self._token_type(granted.token_type, what),
                refresh_token=granted.refresh_token,
                expires_at=None if expires_in is None else issued_at + expires_in,
                scopes=tuple(requested) if granted.scope is None else granted.scope,
                issuer=self._meta.issuer,
                resource=resource or "",
            )
        except ConfigError as exc:
            raise _fail(f"the {what} reply is unusable: {exc.message}") from None

    def _token_type(self, value: str, what: str) -> str:
        kind = value.lower()
        if kind == "bearer":
            return "Bearer"
        if kind == "dpop" and self._dpop_key is not None:
            return "DPoP"
        raise _fail(f"the {what} issued an unsupported token type {normalize_message(value, 32)!r}")


def _scope_field(scopes: Sequence[str]) -> dict[str, str]:
    return {"scope": " ".join(scopes)} if scopes else {}


def exchange_for_id_jag(
    http: SafeHTTP,
    *,
    idp_token_endpoint: str,
    id_token: str,
    audience: str,
    resource: str | None,
    scopes: Sequence[str],
    client_id: str | None,
    client_secret: str | None,
    deadline: float,
) -> str:
    """Exchange an ID token for an ID-JAG at the enterprise IdP (RFC 8693, SEP-990).

    Sends ``grant_type`` token-exchange, ``requested_token_type`` ID-JAG,
    ``subject_token`` (the ID token) with ``subject_token_type`` id_token,
    ``audience`` (the MCP authorization server's issuer), ``resource`` and
    ``scope`` when given. The IdP client authenticates with HTTP Basic when
    it has a secret, else names its ``client_id`` in the body.

    Returns:
        The ID-JAG, to present with :meth:`TokenEndpoint.jwt_bearer`.

    Raises:
        AuthError: classified like a token endpoint failure; ``auth_failed``
            when the reply's ``issued_token_type`` is not the ID-JAG type.
    """
    what = "identity provider token endpoint"
    form = {
        "grant_type": GRANT_TOKEN_EXCHANGE,
        "requested_token_type": TOKEN_TYPE_ID_JAG,
        "subject_token": id_token,
        "subject_token_type": TOKEN_TYPE_ID_TOKEN,
        "audience": audience,
        **_scope_field(scopes),
    }
    if resource is not None:
        form["resource"] = resource
    basic = None
    if client_secret is not None:
        if client_id is None:
            raise _fail("an IdP client secret needs its client id")
        basic = (client_id, client_secret)
    elif client_id is not None:
        form["client_id"] = client_id
    sent_secrets = [id_token, *([client_secret] if client_secret else [])]
    reply = http.post_form(idp_token_endpoint, form, deadline=deadline, what=what, basic=basic)
    if reply.status != 200 or wire.error_reply(reply.body).error is not None:
        raise _reply_error(reply, what, sent_secrets)
    return wire.exchange_reply(reply.body, what=what).access_token
