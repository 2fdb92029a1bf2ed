"""An in-process OAuth 2.1 authorization server (and enterprise IdP) for tests.

Needs PyJWT and ``cryptography`` (the ``test`` and ``oauth`` extras); the rest
of :mod:`mcpclient.testing` uses only the standard library. Start one with
its knobs (the fields of :class:`AuthServerConfig`), point a client at it, and
assert on what it recorded::

    with AuthServer(scopes_supported=("mcp", "offline_access")) as auth:
        auth.add_client("app", secret="s3cret")          # client_secret_basic
        ...                                               # run the client
        assert auth.requests_to("token")[0].form["grant_type"] == "authorization_code"

It listens on ``127.0.0.1:0`` (a ``ThreadingHTTPServer`` on a daemon thread
named ``authserver-<port>``; one thread per connection, HTTP/1.0, every
connection closed after its answer, 10 s socket timeouts, 64 KiB bodies) until
:meth:`AuthServer.close` (or the end of the ``with`` block).

Endpoints (``I`` = :attr:`AuthServer.issuer` = ``url`` + ``issuer_path``):

``I/authorize`` (GET)
    No user interface: validates the request and answers at once with a 302 to
    ``redirect_uri`` carrying ``code``, ``state`` and ``iss`` (per
    ``redirect_iss``), or ``error=access_denied`` (``deny``). Checks: known
    client (pre-registered, registered, or a client ID metadata document when
    ``cimd``), ``redirect_uri`` registered (a loopback one matches on any port,
    RFC 8252 §7.3; a pre-registered client without redirect URIs accepts any
    loopback or https one) — a bad client or redirect URI is a 400 page, not a
    redirect; ``response_type=code``; a PKCE ``code_challenge`` with a method
    in ``code_challenge_methods`` (S256 when that field is absent);
    ``resource`` when ``require_resource``. Codes live 10 minutes, single use.
``I/token`` (POST, form)
    Client authentication: ``client_secret_basic`` (id and secret
    form-urlencoded inside Basic), ``client_secret_post``, ``none`` (just
    ``client_id``), ``private_key_jwt`` (RFC 7523 assertion: ``iss`` = ``sub``
    = client id, ``aud`` the issuer or the token endpoint, ``exp``, unused
    ``jti``, signed by the registered key) — a client must use the method it
    registered (else 401 ``invalid_client``). Grants:
    ``authorization_code`` (same client and ``redirect_uri``, PKCE verifier,
    ``resource`` equal to the authorization request's when both are given),
    ``refresh_token`` (rotation per ``refresh_rotation``; a narrower ``scope``
    is allowed; DPoP-bound to the same key), ``client_credentials``
    (confidential clients only), ``urn:ietf:params:oauth:grant-type:jwt-bearer``
    (an ID-JAG from an IdP given to :meth:`AuthServer.trust_idp`, or a
    workload JWT from an issuer given to
    :meth:`AuthServer.trust_assertion_issuer`; ``aud`` must be the issuer or
    the token endpoint; an ID-JAG always needs client authentication, a
    workload JWT unless ``anonymous_jwt_bearer``), and, with ``idp=True``,
    ``urn:ietf:params:oauth:grant-type:token-exchange`` (RFC 8693: an ID token
    from :meth:`AuthServer.issue_id_token` → an ID-JAG). Errors are RFC 6749
    §5.2 JSON (``invalid_client`` is 401, others 400).
``I/register`` (POST, JSON; only with ``dcr``)
    RFC 7591 dynamic registration: ``redirect_uris`` (loopback http or https)
    required for the code grant, ``token_endpoint_auth_method``
    (``client_secret_basic`` by default, ``client_secret_post`` — both get a
    secret — or ``none``; anything else is ``invalid_client_metadata``),
    ``application_type`` checked against ``dcr_application_type``. 201.
``I/jwks`` (GET)
    The server's public signing key (ID tokens and ID-JAGs are ES256).
Metadata (GET; RFC 8414 / OpenID Connect discovery), per ``metadata``.
Any path given to :meth:`AuthServer.host_document` (e.g. a client ID
metadata document; :meth:`AuthServer.publish_client_document` instead makes
any URL, https included, resolve to a document without a fetch). Everything
else is 404.

Records: :attr:`AuthServer.requests` (every request with its form/JSON body,
headers, status, OAuth ``error`` and ``Location``; :meth:`AuthServer.requests_to`
filters by endpoint), :attr:`AuthServer.cimd_fetches`,
:meth:`AuthServer.clients` (``application_type`` and registration metadata of
dynamically registered clients).

Access tokens are HS256 JWTs (see :mod:`mcpclient.testing.oauth_common`)
under :attr:`AuthServer.token_secret` with ``iss``, ``sub``, ``client_id``,
``scope``, ``iat``, ``jti``, ``aud`` (the ``resource``, else
``default_audience``, else none), ``exp`` (per ``token_lifetime``) and
``cnf.jkt`` when DPoP-bound, so the protected test server verifies them
offline. Refresh tokens and codes are opaque.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import socket
import socketserver
import threading
import time
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

from .auth_grants import (
    GRANT_JWT_BEARER,
    GRANT_TOKEN_EXCHANGE,
    ID_JAG_PROFILE,
    OAuthError,
    RegisteredClient,
    Reply,
    TokenEndpoint,
    is_loopback_http,
    json_reply,
    load_public_key,
)
from .oauth_common import DPOP_ALGS, jwk_thumbprint

__all__ = ["AuthServer", "AuthServerConfig", "RecordedRequest", "RegisteredClient"]

AUTHORIZE_PATH = "/authorize"
TOKEN_PATH = "/token"
REGISTER_PATH = "/register"
JWKS_PATH = "/jwks"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"
METADATA_LOCATIONS = ("oauth", "oidc", "oidc-appended")
REDIRECT_ISS = ("correct", "missing", "wrong", "trailing-slash", "case")
#: The ``iss`` sent with ``redirect_iss="wrong"``.
WRONG_ISSUER = "https://other-issuer.invalid"
REFRESH_POLICIES = ("always", "offline_access", "never")
DPOP_MODES = ("off", "optional", "required")
AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none", "private_key_jwt")
MAX_BODY = 65536
SOCKET_TIMEOUT = 10.0


@dataclasses.dataclass(frozen=True)
class AuthServerConfig:
    """The knobs of an :class:`AuthServer` (pass them as keyword arguments).

    Attributes:
        issuer_path: Appended to the server URL to form the issuer (``""`` or
            ``"/tenant"``, no trailing slash); the endpoints live under it.
        metadata: Where the metadata document is served, any of ``"oauth"``
            (RFC 8414, ``/.well-known/oauth-authorization-server`` + path),
            ``"oidc"`` (``/.well-known/openid-configuration`` + path) and
            ``"oidc-appended"`` (path + ``/.well-known/openid-configuration``);
            ``()`` serves none (the 2025-03-26 client then falls back to
            ``/authorize``, ``/token``, ``/register`` at the root: use
            ``issuer_path=""``).
        metadata_issuer: The ``issuer`` written in the document, when it must
            differ from the real one (the mismatch test).
        code_challenge_methods: ``code_challenge_methods_supported``; None
            omits the field (the server then accepts S256 only).
        iss_supported: ``authorization_response_iss_parameter_supported``.
        redirect_iss: The ``iss`` on the authorization redirect: ``"correct"``,
            ``"missing"``, ``"wrong"`` (:data:`WRONG_ISSUER`),
            ``"trailing-slash"`` (issuer + ``/``) or ``"case"`` (scheme and
            host upper-cased).
        deny: The authorization endpoint answers ``error=access_denied``.
        cimd: ``client_id_metadata_document_supported``: an http(s) URL used as
            ``client_id`` is resolved (a document given to
            :meth:`AuthServer.publish_client_document`, else fetched: 5 s,
            64 KiB, no proxies) at every authorization and token request, and
            must be a JSON object with that ``client_id``, ``client_name`` and
            ``redirect_uris`` (``token_endpoint_auth_method`` ``none``, the
            default, or ``private_key_jwt`` with ``jwks``).
        dcr: Serve the registration endpoint (and list it in the metadata).
        dcr_application_type: When set, registration requires exactly this
            ``application_type`` (else 400 ``invalid_client_metadata``).
        scopes_supported: ``scopes_supported``; None omits the field. Any
            requested scope is granted either way (minus ``withheld_scopes``).
        withheld_scopes: Scopes silently left out of every token (so a step-up
            for them never succeeds).
        refresh_tokens: When a refresh token is issued with a code or refresh
            grant: ``"always"``, ``"offline_access"`` (only when that scope was
            granted) or ``"never"``.
        refresh_rotation: A refresh grant returns a new refresh token and
            invalidates the old one; False returns none and keeps the old one.
        token_lifetime: Access-token ``expires_in``/``exp`` in seconds; None
            issues tokens without expiry.
        require_resource: Authorization and token requests need ``resource``
            (else ``invalid_target``).
        default_audience: ``aud`` of tokens requested without ``resource``.
        dpop: ``"off"`` (proofs ignored, Bearer tokens), ``"optional"`` (a
            proof binds the token) or ``"required"`` (no proof: 400
            ``invalid_dpop_proof``).
        dpop_nonce: Token requests need the server nonce in their proof: a
            missing or stale one gets 400 ``use_dpop_nonce``; every token
            response carries ``DPoP-Nonce``.
        token_error: Every token request fails with this error code (401 for
            ``invalid_client``, else 400) until cleared.
        anonymous_jwt_bearer: Accept a workload JWT-bearer assertion (its
            issuer given to :meth:`AuthServer.trust_assertion_issuer`) with no
            client authentication at all (RFC 7523 §3.1; the token's
            ``client_id`` is then the assertion's ``sub``). Off, such a request
            is 401 ``invalid_client`` (the assertion neither verified nor spent).
        idp: Also act as an enterprise IdP: RFC 8693 token exchange of an ID
            token (:meth:`AuthServer.issue_id_token`) for an ID-JAG.
        jag_client_id: The ``client_id`` claim of the ID-JAGs this IdP issues
            (default: the client that asked, if it identified itself).
        subject: ``sub`` of tokens issued by the code grant.
    """

    issuer_path: str = ""
    metadata: tuple[str, ...] = ("oauth",)
    metadata_issuer: str | None = None
    code_challenge_methods: tuple[str, ...] | None = ("S256",)
    iss_supported: bool = True
    redirect_iss: str = "correct"
    deny: bool = False
    cimd: bool = False
    dcr: bool = True
    dcr_application_type: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    withheld_scopes: tuple[str, ...] = ()
    refresh_tokens: str = "always"
    refresh_rotation: bool = True
    token_lifetime: float | None = 3600.0
    require_resource: bool = False
    default_audience: str | None = None
    dpop: str = "off"
    dpop_nonce: bool = False
    token_error: str | None = None
    anonymous_jwt_bearer: bool = False
    idp: bool = False
    jag_client_id: str | None = None
    subject: str = "test-user"

    def __post_init__(self) -> None:
        """Reject values the server could not act on."""
        path = self.issuer_path
        if path and (not path.startswith("/") or path.endswith("/") or "?" in path):
            raise ValueError("issuer_path must be '' or '/segments' without a trailing slash")
        for name, value, allowed in (
            ("metadata", self.metadata, METADATA_LOCATIONS),
            ("redirect_iss", (self.redirect_iss,), REDIRECT_ISS),
            ("refresh_tokens", (self.refresh_tokens,), REFRESH_POLICIES),
            ("dpop", (self.dpop,), DPOP_MODES),
        ):
            unknown = set(value) - set(allowed)
            if unknown:
                raise ValueError(f"{name}: unknown {sorted(unknown)} (choose from {allowed})")
        if self.token_lifetime is not None and self.token_lifetime < 0:
            raise ValueError("token_lifetime must be >= 0 or None")
        for name in ("metadata", "withheld_scopes"):
            if isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a tuple of strings")


@dataclasses.dataclass(frozen=True)
class RecordedRequest:
    """One request the server answered, for assertions.

    Attributes:
        method: ``GET``/``POST``/...
        path: The path, without the query.
        query: Query parameters (first value of each).
        headers: Every header line as sent, in order.
        form: The form body's parameters (token endpoint), else empty.
        json: The decoded JSON body (registration), else None.
        endpoint: ``"metadata"``, ``"authorize"``, ``"token"``, ``"register"``,
            ``"jwks"``, ``"document"`` or ``"unknown"``.
        status: The HTTP status answered.
        error: The OAuth ``error`` code answered (JSON body or redirect), if any.
        location: The ``Location`` answered (authorization redirects).
    """

    method: str
    path: str
    query: Mapping[str, str]
    headers: tuple[tuple[str, str], ...]
    form: Mapping[str, str]
    json: Any
    endpoint: str
    status: int
    error: str | None
    location: str | None

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), or None."""
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None


def _public_jwk(key: ec.EllipticCurvePrivateKey) -> dict[str, str]:
    jwk = cast(dict[str, str], jwt.algorithms.ECAlgorithm.to_jwk(key.public_key(), as_dict=True))
    jwk["kid"] = jwk_thumbprint(jwk)
    jwk["alg"] = "ES256"
    jwk["use"] = "sig"
    return jwk


class AuthServer:
    """An OAuth authorization server on ``127.0.0.1:0`` (see the module docstring).

    Example::

        with AuthServer(dcr=False) as auth:
            auth.add_client("svc", secret="pw")
            token = requests.post(auth.token_endpoint, data={
                "grant_type": "client_credentials"}, auth=("svc", "pw")).json()

    Thread safety: every method may be called from any thread while the
    server runs; :meth:`configure` takes effect for the next request.
    """

    def __init__(
        self, *, host: str = "127.0.0.1", token_secret: bytes | None = None, **knobs: Any
    ) -> None:
        """Start serving; ``knobs`` are :class:`AuthServerConfig` fields."""
        self._config = AuthServerConfig(**knobs)
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._documents: dict[str, bytes] = {}
        self._signing_key = ec.generate_private_key(ec.SECP256R1())
        self.public_jwk: dict[str, str] = _public_jwk(self._signing_key)
        """The public half of the server's ES256 signing key (ID tokens, ID-JAGs)."""
        self.token_secret: bytes = token_secret or secrets.token_bytes(32)
        """The HS256 secret of its access tokens (give it to the protected server)."""
        self.tokens = TokenEndpoint(self)
        self._httpd = _HTTPServer((host, 0), self)
        port = self._httpd.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{port}"
        """The server's origin, ``http://127.0.0.1:<port>``."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"authserver-{port}",
            daemon=True,
        )
        self._thread.start()
        self._closed = False

    # -- lifecycle

    def __enter__(self) -> AuthServer:
        """Return self; the server already runs."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Stop the server."""
        self.close()

    def close(self) -> None:
        """Stop serving and close the socket (idempotent, bounded to ~5 s)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5.0)

    # -- configuration

    @property
    def config(self) -> AuthServerConfig:
        """The knobs in force."""
        with self._lock:
            return self._config

    def configure(self, **changes: Any) -> AuthServerConfig:
        """Change knobs at run time (validated like the constructor's); returns the new set."""
        with self._lock:
            self._config = dataclasses.replace(self._config, **changes)
            return self._config

    @property
    def issuer(self) -> str:
        """The issuer identifier: :attr:`url` + ``issuer_path``."""
        return self.url + self.config.issuer_path

    @property
    def authorization_endpoint(self) -> str:
        """``<issuer>/authorize``."""
        return self.issuer + AUTHORIZE_PATH

    @property
    def token_endpoint(self) -> str:
        """``<issuer>/token``."""
        return self.issuer + TOKEN_PATH

    @property
    def registration_endpoint(self) -> str:
        """``<issuer>/register`` (served only with ``dcr``)."""
        return self.issuer + REGISTER_PATH

    @property
    def metadata_urls(self) -> dict[str, str]:
        """Every metadata location by ``metadata`` name (served or not)."""
        path = self.config.issuer_path
        return {
            "oauth": f"{self.url}{OAUTH_WELL_KNOWN}{path}",
            "oidc": f"{self.url}{OIDC_WELL_KNOWN}{path}",
            "oidc-appended": f"{self.url}{path}{OIDC_WELL_KNOWN}",
        }

    # -- test set-up

    def add_client(
        self,
        client_id: str,
        *,
        secret: str | None = None,
        auth_method: str | None = None,
        public_key: Any = None,
        redirect_uris: Iterable[str] | None = None,
        grant_types: Iterable[str] | None = None,
    ) -> RegisteredClient:
        """Pre-register a client.

        ``auth_method`` defaults to ``client_secret_basic`` with a ``secret``,
        ``private_key_jwt`` with a ``public_key`` (PEM, a JWK dict or a
        ``cryptography`` key; a private key's public half is used), else
        ``none``. ``redirect_uris`` None accepts any loopback or https
        redirect; ``grant_types`` None allows every grant.
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
        self.tokens.save_client(client)
        return client

    def clients(self) -> dict[str, RegisteredClient]:
        """Every pre-registered and dynamically registered client, by id."""
        return self.tokens.clients()

    def host_document(self, path: str, document: Any) -> str:
        """Serve ``document`` as JSON at ``path`` (e.g. a client ID metadata document).

        Returns the document's URL.
        """
        if not path.startswith("/"):
            raise ValueError("path must start with '/'")
        data = json.dumps(document).encode("utf-8")
        with self._lock:
            self._documents[path] = data
        return self.url + path

    def publish_client_document(self, url: str, document: Any) -> None:
        """Make ``url`` (any URL, e.g. ``https://client.example/app.json``) resolve to
        ``document`` when used as a ``client_id`` with ``cimd``, without a network fetch.

        The client never fetches its own metadata document, so this lets a test
        use an https ``client_id`` while every peer stays plain loopback http.
        """
        self.tokens.publish_client_document(url, json.loads(json.dumps(document)))

    @property
    def cimd_fetches(self) -> list[str]:
        """Every client ID metadata document URL resolved (published or fetched), in order."""
        return self.tokens.cimd_fetches()

    def trust_idp(self, idp: AuthServer | str, public_key: Any = None) -> None:
        """Accept ID-JAGs signed by ``idp`` (an IdP-mode server, or an issuer and its key).

        The metadata then lists the ID-JAG grant profile.
        """
        if isinstance(idp, AuthServer):
            self.tokens.trust_idp(idp.issuer, load_public_key(idp.public_jwk))
        else:
            self.tokens.trust_idp(idp, load_public_key(public_key))

    def trust_assertion_issuer(self, issuer: str, public_key: Any) -> None:
        """Accept JWT-bearer assertions (workload identity) from ``issuer`` signed by its key."""
        self.tokens.trust_assertion_issuer(issuer, load_public_key(public_key))

    def issue_id_token(
        self, *, subject: str = "test-user", audience: str = "idp-client", lifetime: float = 300.0
    ) -> str:
        """An OIDC ID token signed by this server (the IdP's SSO result)."""
        now = time.time()
        claims = {
            "iss": self.issuer,
            "sub": subject,
            "aud": audience,
            "iat": int(now),
            "exp": int(now + lifetime),
            "jti": secrets.token_hex(8),
        }
        return self.sign(claims, typ="JWT")

    def sign(self, claims: Mapping[str, Any], *, typ: str) -> str:
        """``claims`` as a JWT signed ES256 with the server key (``kid`` in the header)."""
        headers = {"typ": typ, "kid": self.public_jwk["kid"]}
        return jwt.encode(dict(claims), self._signing_key, algorithm="ES256", headers=headers)

    def mint_access_token(
        self,
        *,
        resource: str | None = None,
        scopes: Iterable[str] = (),
        client_id: str = "test-client",
        lifetime: float | None = 3600.0,
        jkt: str | None = None,
    ) -> str:
        """An access token as the token endpoint would issue it (for resource-server tests)."""
        return self.tokens.mint(
            client_id=client_id,
            subject=self.config.subject,
            scopes=tuple(scopes),
            audience=resource,
            lifetime=lifetime,
            jkt=jkt,
        )

    def revoke_refresh_tokens(self) -> int:
        """Invalidate every refresh token issued so far; returns how many."""
        return self.tokens.revoke_refresh_tokens()

    @property
    def dpop_nonce(self) -> str:
        """The current DPoP nonce (required in proofs with ``dpop_nonce``)."""
        return self.tokens.dpop_nonce

    def rotate_dpop_nonce(self) -> str:
        """Replace the DPoP nonce (proofs with the old one get ``use_dpop_nonce``)."""
        return self.tokens.rotate_dpop_nonce()

    # -- records

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request answered so far, in order."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, endpoint: str) -> list[RecordedRequest]:
        """The recorded requests of one endpoint kind (see :class:`RecordedRequest`)."""
        return [r for r in self.requests if r.endpoint == endpoint]

    def clear_requests(self) -> None:
        """Forget the recorded requests."""
        with self._lock:
            self._requests.clear()

    # -- documents

    def metadata(self) -> dict[str, Any]:
        """The authorization server metadata document as currently served."""
        cfg = self.config
        issuer = self.issuer
        grants = ["authorization_code", "refresh_token", "client_credentials", GRANT_JWT_BEARER]
        if cfg.idp:
            grants.append(GRANT_TOKEN_EXCHANGE)
        doc: dict[str, Any] = {
            "issuer": cfg.metadata_issuer if cfg.metadata_issuer is not None else issuer,
            "authorization_endpoint": issuer + AUTHORIZE_PATH,
            "token_endpoint": issuer + TOKEN_PATH,
            "jwks_uri": issuer + JWKS_PATH,
            "response_types_supported": ["code"],
            "grant_types_supported": grants,
            "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
            "token_endpoint_auth_signing_alg_values_supported": ["ES256", "RS256", "PS256"],
            "authorization_response_iss_parameter_supported": cfg.iss_supported,
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
        }
        if cfg.dcr:
            doc["registration_endpoint"] = issuer + REGISTER_PATH
        if cfg.code_challenge_methods is not None:
            doc["code_challenge_methods_supported"] = list(cfg.code_challenge_methods)
        if cfg.scopes_supported is not None:
            doc["scopes_supported"] = list(cfg.scopes_supported)
        if cfg.cimd:
            doc["client_id_metadata_document_supported"] = True
        if cfg.dpop != "off":
            doc["dpop_signing_alg_values_supported"] = list(DPOP_ALGS)
        if self.tokens.trusts_idps():
            doc["authorization_grant_profiles_supported"] = [ID_JAG_PROFILE]
        return doc

    # -- request handling (called by the HTTP handler threads)

    def handle(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> Reply:
        """Answer one HTTP request and record it."""
        parts = urlsplit(target)
        query = _first_values(parts.query)
        endpoint, reply = "unknown", Reply.text(404, "not found")
        form: dict[str, str] = {}
        body_json: Any = None
        try:
            endpoint, route = self._route(method, parts.path)
            if route is not None:
                if endpoint == "token":
                    form = _parse_form(body, headers)
                    reply = route(form=form, headers=headers)
                elif endpoint == "register":
                    body_json = _parse_json(body)
                    reply = route(body=body_json)
                else:
                    reply = route(query=query, path=parts.path)
        except OAuthError as failure:
            reply = failure.reply()
        except Exception:  # a peer must never die of a request: answer 500
            reply = json_reply(500, {"error": "server_error"})
        entry = RecordedRequest(
            method=method,
            path=parts.path,
            query=query,
            headers=tuple(headers),
            form=form,
            json=body_json,
            endpoint=endpoint,
            status=reply.status,
            error=reply.error,
            location=next((v for k, v in reply.headers if k == "Location"), None),
        )
        with self._lock:
            self._requests.append(entry)
        return reply

    def _route(self, method: str, path: str) -> tuple[str, Any]:
        cfg = self.config
        base = cfg.issuer_path
        meta = [
            (f"{OAUTH_WELL_KNOWN}{base}", "oauth"),
            (f"{OIDC_WELL_KNOWN}{base}", "oidc"),
            (f"{base}{OIDC_WELL_KNOWN}", "oidc-appended"),
        ]
        # Path-less issuers: "oidc" and "oidc-appended" are the same URL.
        served = {p for p, name in meta if name in cfg.metadata}
        with self._lock:
            is_document = path in self._documents
        table: dict[tuple[str, str], tuple[str, Any]] = {
            ("GET", base + AUTHORIZE_PATH): ("authorize", self._authorize),
            ("POST", base + TOKEN_PATH): ("token", self.tokens.handle),
            ("GET", base + JWKS_PATH): ("jwks", self._jwks),
        }
        if cfg.dcr:
            table["POST", base + REGISTER_PATH] = ("register", self.tokens.register)
        if method == "GET" and path in served:
            return "metadata", self._metadata
        if method == "GET" and is_document:
            return "document", self._document
        if (method, path) in table:
            return table[method, path]
        if path in served or is_document or any(p == path for _m, p in table):
            raise OAuthError("invalid_request", "method not allowed", status=405)
        # A miss at any metadata location still counts as a metadata request.
        is_meta = path.startswith(OAUTH_WELL_KNOWN) or OIDC_WELL_KNOWN in path
        return ("metadata" if is_meta else "unknown"), None

    def _metadata(self, **_: Any) -> Reply:
        return json_reply(200, self.metadata())

    def _jwks(self, **_: Any) -> Reply:
        return json_reply(200, {"keys": [self.public_jwk]})

    def _document(self, *, path: str, **_: Any) -> Reply:
        with self._lock:
            data = self._documents[path]
        return Reply(200, data, "application/json")

    def _authorize(self, *, query: Mapping[str, str], **_: Any) -> Reply:
        cfg = self.config
        try:
            client = self.tokens.client(query.get("client_id", ""))
        except OAuthError as failure:  # a bad metadata document: never redirect
            return Reply.text(400, failure.description, error="invalid_client")
        redirect_uri = query.get("redirect_uri", "")
        if client is None:
            return Reply.text(400, "unknown client", error="invalid_client")
        if not _redirect_allowed(client, redirect_uri):
            return Reply.text(400, "redirect_uri not registered", error="invalid_request")

        def back(**params: str) -> Reply:
            if "state" in query:
                params["state"] = query["state"]
            iss = self._redirect_iss()
            if iss is not None:
                params["iss"] = iss
            return Reply.redirect(_with_query(redirect_uri, params), error=params.get("error"))

        if query.get("response_type") != "code":
            return back(error="unsupported_response_type")
        challenge = query.get("code_challenge", "")
        method = query.get("code_challenge_method", "plain")
        allowed = cfg.code_challenge_methods or ("S256",)
        if not challenge or method not in allowed:
            return back(error="invalid_request", error_description="PKCE S256 is required")
        resource = query.get("resource")
        if cfg.require_resource and not resource:
            return back(error="invalid_target", error_description="resource is required")
        if cfg.deny:
            return back(error="access_denied", error_description="the user said no")
        code = self.tokens.new_code(
            client_id=client.client_id,
            redirect_uri=redirect_uri,
            challenge=challenge,
            method=method,
            scopes=tuple(query.get("scope", "").split()),
            resource=resource,
        )
        return back(code=code)

    def _redirect_iss(self) -> str | None:
        mode, issuer = self.config.redirect_iss, self.issuer
        if mode == "missing":
            return None
        if mode == "wrong":
            return WRONG_ISSUER
        if mode == "trailing-slash":
            return issuer + "/"
        if mode == "case":
            parts = urlsplit(issuer)
            return urlunsplit(
                (parts.scheme.upper(), parts.netloc.upper(), parts.path, parts.query, "")
            )
        return issuer


# ------------------------------------------------------------------------ helpers


def _first_values(query: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        values.setdefault(key, value)
    return values


def _parse_form(body: bytes, headers: list[tuple[str, str]]) -> dict[str, str]:
    """A token request's form; RFC 6749 §3.2: form-encoded, no repeated parameter."""
    content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
    if content_type.split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
        raise OAuthError("invalid_request", "the body must be application/x-www-form-urlencoded")
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(body))
    except (UnicodeDecodeError, ValueError) as exc:
        raise OAuthError("invalid_request", "malformed form body") from exc
    form: dict[str, str] = {}
    for key, value in pairs:
        if key in form:
            raise OAuthError("invalid_request", f"parameter {key} repeated")
        form[key] = value
    return form


def _parse_json(body: bytes) -> Any:
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise OAuthError("invalid_client_metadata", "the body is not JSON") from exc


def _with_query(url: str, params: Mapping[str, str]) -> str:
    parts = urlsplit(url)
    extra = urlencode(params)
    query = f"{parts.query}&{extra}" if parts.query else extra
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def _redirect_allowed(client: RegisteredClient, uri: str) -> bool:
    """Exact match, or a loopback match on any port (RFC 8252 §7.3)."""
    if not uri or "#" in uri:
        return False
    if client.redirect_uris is None:
        return is_loopback_http(uri) or uri.startswith("https://")
    for registered in client.redirect_uris:
        if uri == registered:
            return True
        if is_loopback_http(registered) and is_loopback_http(uri):
            want, got = urlsplit(registered), urlsplit(uri)
            if (want.hostname, want.path, want.query) == (got.hostname, got.path, got.query):
                return True
    return False


# ------------------------------------------------------------------------ HTTP plumbing


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 64

    def __init__(self, address: tuple[str, int], auth: AuthServer) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.auth = auth
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name (getfqdn): slow, and not needed.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection: nothing lingers
    server_version = "mcpclient-testing-auth"
    timeout = SOCKET_TIMEOUT

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the access log."""

    def _serve(self) -> None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self._send(Reply.text(413 if length > MAX_BODY else 400, "bad body length"))
            return
        body = self.rfile.read(length) if length else b""
        auth = cast(_HTTPServer, self.server).auth
        self._send(auth.handle(self.command, self.path, self.headers.items(), body))

    do_GET = do_POST = do_PUT = do_DELETE = _serve  # noqa: N815 - http.server's naming

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        if reply.content_type is not None:
            self.send_header("Content-Type", reply.content_type)
        for name, value in reply.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)
        self.wfile.flush()
