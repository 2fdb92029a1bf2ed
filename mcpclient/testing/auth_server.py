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
``I/device_authorization`` (POST, form; only with ``device``)
    RFC 8628 §3.1: an authenticated client (as at the token endpoint) gets a
    ``device_code``, ``user_code``, ``verification_uri`` (``I/device``, not
    served), ``verification_uri_complete``, ``expires_in``
    (``device_lifetime``) and ``interval`` (``device_interval``). Polling the
    token endpoint with ``urn:ietf:params:oauth:grant-type:device_code``
    answers ``authorization_pending`` until :meth:`AuthServer.decide_device`
    approves (a token, single use), denies (``access_denied``), expires
    (``expired_token``) or asks for one ``slow_down``;
    :meth:`AuthServer.device_polls` tells when each poll came.
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
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

from .auth_authorize import authorize
from .auth_base import OAuthError, RegisteredClient, Reply, json_reply, load_public_key
from .auth_clients import ClientRegistry, preregistered_client
from .auth_config import AuthServerConfig, RecordedRequest
from .auth_device import DEVICE_PATH
from .auth_grants import TokenEndpoint
from .auth_http import AuthHTTPServer, first_values, parse_form, parse_json
from .auth_idp import public_jwk
from .auth_metadata import (
    AUTHORIZE_PATH,
    JWKS_PATH,
    OAUTH_WELL_KNOWN,
    OIDC_WELL_KNOWN,
    REGISTER_PATH,
    TOKEN_PATH,
    metadata_document,
)

__all__ = ["AuthServer", "AuthServerConfig", "RecordedRequest", "RegisteredClient"]


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
        self.public_jwk: dict[str, str] = public_jwk(self._signing_key)
        """The public half of the server's ES256 signing key (ID tokens, ID-JAGs)."""
        self.token_secret: bytes = token_secret or secrets.token_bytes(32)
        """The HS256 secret of its access tokens (give it to the protected server)."""
        self._registry = ClientRegistry(self)
        self.tokens = TokenEndpoint(self, self._registry)
        self._httpd = AuthHTTPServer((host, 0), self)
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
        client = preregistered_client(
            client_id,
            secret=secret,
            auth_method=auth_method,
            public_key=public_key,
            redirect_uris=redirect_uris,
            grant_types=grant_types,
        )
        self._registry.save_client(client)
        return client

    def clients(self) -> dict[str, RegisteredClient]:
        """Every pre-registered and dynamically registered client, by id."""
        return self._registry.clients()

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
        self._registry.publish_client_document(url, json.loads(json.dumps(document)))

    @property
    def cimd_fetches(self) -> list[str]:
        """Every client ID metadata document URL resolved (published or fetched), in order."""
        return self._registry.cimd_fetches()

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

    # -- the device grant (RFC 8628)

    def decide_device(self, user_code: str, action: str) -> None:
        """What the person (or time) did with ``user_code``; the next poll sees it.

        ``action``: ``"approve"``, ``"deny"`` (``access_denied``), ``"expire"``
        (``expired_token`` from now on) or ``"slow_down"`` (the next poll
        alone answers ``slow_down``).

        Raises:
            KeyError: no device code has that user code (or it was spent).
        """
        self.tokens.devices.decide(user_code, action)

    def device_polls(self, user_code: str) -> list[float]:
        """When (``time.monotonic()``) the token endpoint was polled for ``user_code``."""
        return self.tokens.devices.polls(user_code)

    # -- documents

    def metadata(self) -> dict[str, Any]:
        """The authorization server metadata document as currently served."""
        trusts_idps = self.tokens.trusts_idps()
        return metadata_document(self.config, self.issuer, trusts_idps=trusts_idps)

    # -- request handling (called by the HTTP handler threads)

    def handle(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> Reply:
        """Answer one HTTP request and record it."""
        parts = urlsplit(target)
        query = first_values(parts.query)
        endpoint, reply = "unknown", Reply.text(404, "not found")
        form: dict[str, str] = {}
        body_json: Any = None
        try:
            endpoint, route = self._route(method, parts.path)
            if route is not None:
                if endpoint in ("token", "device"):
                    form = parse_form(body, headers)
                    reply = route(form=form, headers=headers)
                elif endpoint == "register":
                    body_json = parse_json(body)
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
        if cfg.device:
            table["POST", base + DEVICE_PATH] = ("device", self.tokens.authorize_device)
        if cfg.dcr:
            table["POST", base + REGISTER_PATH] = ("register", self._registry.register)
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
        return authorize(
            query, cfg=self.config, issuer=self.issuer, clients=self._registry, tokens=self.tokens
        )
