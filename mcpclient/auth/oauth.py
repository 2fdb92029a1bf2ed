"""The OAuth 2.1 auth provider for HTTP MCP servers: :class:`OAuth`.

The HTTP transport asks :meth:`OAuth.headers_for` for the ``Authorization``
(and ``DPoP``) headers of every request; when the server answers 401 or 403
the client calls :meth:`OAuth.recover` once, on its auth thread, and sends the
request again. ``recover`` climbs a ladder, cheapest rung first:

1. The rejected ``Authorization`` is not the current one: another flow already
   replaced the token, nothing to do.
2. DPoP ``use_dpop_nonce`` from the MCP server: keep its nonce.
3. 403 ``insufficient_scope``: step up, authorizing again with the union of the
   scopes requested so far and the challenged ones (at most
   :data:`MAX_STEP_UPS` authorization requests per requested scope set, the
   first authorization included, then ``auth_denied``).
4. 401: discover (protected resource metadata, authorization server
   metadata), then use a stored token, or refresh (even a token that is not
   expired locally: the server said no), and only when refreshing is refused
   (``auth_expired``/``auth_denied``) authorize anew with the grant.

Discovery runs on every 401 that needs more than a nonce, so a server that
moved to another authorization server is noticed: the new issuer gets its own
client registration and tokens, the old ones are never sent to it.

The rungs are climbed here; the steps they take (discovery, the grants, the
token endpoint, the provider's state) live in :mod:`mcpclient.auth._flow`,
the base class of :class:`OAuth`.

Thread safety: ``headers_for`` may be called from any thread at any time;
``recover`` runs one flow at a time (a lock), never holding the lock that
``headers_for`` takes while it does I/O.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from mcpclient._core import redaction
from mcpclient._core.deadline import now
from mcpclient._core.limits import clean_text

# registration: not used here, but tests patch registration.obtain_client through this name.
from mcpclient.auth import discovery, registration  # noqa: F401
from mcpclient.auth._flow import EXCHANGE_SECONDS as EXCHANGE_SECONDS  # noqa: PLC0414
from mcpclient.auth._flow import _Context as _Context  # noqa: PLC0414
from mcpclient.auth._flow import _fail, _Flow, _io, _log, _State
from mcpclient.auth._rules import bears, merge, origin, scope_list
from mcpclient.auth.grants import (
    AuthorizationCodeGrant,
    ClientSettings,
    Grant,
    JWTBearerGrant,
    check_arguments,
)
from mcpclient.auth.tokens import MemoryTokenStore, TokenSet, TokenStore
from mcpclient.errors import AuthError, ConfigError, FailureClass
from mcpclient.transports import AuthChallenge

if TYPE_CHECKING:
    from mcpclient.auth._jose import SigningKey

__all__ = ["MAX_STEP_UPS", "OAuth"]

#: Authorization requests allowed for one requested scope set, the first one
#: included: a 403 ``insufficient_scope`` that would need another stands as
#: ``auth_denied``. A server that keeps refusing the scopes it challenges for
#: gets exactly this many authorization requests.
MAX_STEP_UPS = 3

#: A token refreshed because of a 401 and rejected again within this many
#: seconds was never accepted: the next 401 authorizes anew instead of
#: refreshing in a loop. Later rejections (a revocation hours on) refresh.
FUTILE_REFRESH_SECONDS = 10.0

_INSTALL_HINT = (
    "mcpclient.auth.OAuth needs the optional cryptography and PyJWT packages: "
    "install them with pip install 'mcpclient[oauth]'"
)


class OAuth(_Flow):
    """OAuth 2.1 authorization for one HTTP MCP server (an auth provider).

    Give it to the transport; the first 401 starts discovery and the grant::

        from mcpclient.auth import OAuth
        transport = StreamableHTTPTransport("https://mcp.example.com/mcp", auth=OAuth())

    Args:
        grant: how tokens are obtained: :class:`AuthorizationCodeGrant` (a
            person in a browser, the default), :class:`DeviceCodeGrant` (a
            person approves a user code on another device),
            :class:`ClientCredentialsGrant`, :class:`JWTBearerGrant` or
            :class:`TokenExchangeGrant`.
        client_id: a pre-registered client ID (else a client ID metadata
            document or dynamic registration is used). A
            :class:`JWTBearerGrant` with neither ``client_id`` nor
            ``client_metadata_url`` is an anonymous workload: its token
            requests carry no client authentication and nothing is registered.
        client_secret: its secret, for ``client_secret_basic``/``_post``.
        issuer: the authorization server ``client_id`` (and its secret or
            key) was registered with. The configured client is only ever
            presented to that issuer; without ``issuer`` it is bound to the
            first issuer it is used with, recorded in ``store``. When the MCP
            server names another authorization server, that one gets a client
            ID metadata document or a dynamic registration, or the flow fails
            ``auth_failed`` naming both issuers: the configured secret is
            never sent to it.
        client_key: a PEM private key for ``private_key_jwt``.
        client_key_id: the ``kid`` of ``client_key``, if the server wants one.
        token_endpoint_auth_method: force a method (``client_secret_basic``,
            ``client_secret_post``, ``none``, ``private_key_jwt``).
        client_metadata_url: an https URL of this client's ID metadata
            document, used as the client ID where the server supports it.
        client_name: the name shown by the authorization server.
        application_type: ``native`` or ``web`` for dynamic registration.
        scopes: scopes to request when the server's challenge names none
            (default: the server's ``scopes_supported``).
        store: where tokens and registrations are kept (default: memory).
        dpop: bind tokens to a key of this provider with DPoP (RFC 9449).
        allow_private_networks: let discovery reach private addresses (an
            intranet authorization server); loopback is allowed only when the
            MCP server itself is on loopback.
        ca_bundle: a PEM file or directory of trust anchors for the
            authorization servers' TLS (the rule MCP traffic follows).

    Raises:
        ConfigError: an argument is unusable, or the ``oauth`` extra is missing.

    Thread safety: one instance serves one server; any thread may ask for
    headers, and authorization flows run one at a time.
    """

    def __init__(
        self,
        *,
        grant: Grant | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        issuer: str | None = None,
        client_key: str | bytes | None = None,
        client_key_id: str | None = None,
        token_endpoint_auth_method: str | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "mcpclient",
        application_type: str = "native",
        scopes: Sequence[str] | None = None,
        store: TokenStore | None = None,
        dpop: bool = False,
        allow_private_networks: bool = False,
        ca_bundle: str | None = None,
    ) -> None:
        try:
            from mcpclient.auth._jose import SigningKey  # noqa: PLC0415 - the oauth extra
        except ImportError:
            raise ConfigError(_INSTALL_HINT, op="OAuth") from None

        grant = AuthorizationCodeGrant() if grant is None else grant
        check_arguments(
            grant,
            client_id=client_id,
            client_secret=client_secret,
            client_key=client_key,
            token_endpoint_auth_method=token_endpoint_auth_method,
            client_metadata_url=client_metadata_url,
            client_name=client_name,
            application_type=application_type,
            scopes=scopes,
            issuer=issuer,
        )
        key: SigningKey | None = None
        if client_key is not None:
            try:
                key = SigningKey.from_pem(client_key, key_id=client_key_id)
            except ConfigError as exc:  # its message never quotes the PEM
                raise ConfigError(f"OAuth.client_key: {exc.message}", op="OAuth") from None
        self._grant: Grant = grant
        # Workload identity without a client (RFC 7523 §3.1): no registration,
        # no client authentication at the token endpoint.
        self._anonymous = (
            isinstance(grant, JWTBearerGrant) and client_id is None and client_metadata_url is None
        )
        self._settings = ClientSettings(
            client_id=client_id,
            client_secret=client_secret,
            issuer=issuer,
            client_key=key,
            token_endpoint_auth_method=token_endpoint_auth_method,
            client_metadata_url=client_metadata_url,
            client_name=client_name,
            application_type=application_type,
        )
        self._scopes = tuple(scopes or ())
        self._store: TokenStore = MemoryTokenStore() if store is None else store
        self._dpop_key = SigningKey.generate_dpop() if dpop else None
        self._allow_private = bool(allow_private_networks)
        self._ca_bundle = ca_bundle
        self._lock = threading.Lock()  # guards _state; never held across I/O
        self._flow_lock = threading.Lock()  # one recover() at a time
        self._state = _State()
        # A server or authorization server may quote the secret back: it is
        # redacted from every message while this provider lives.
        self._redactor = redaction.register(
            redaction.Redactor((client_secret, getattr(grant, "idp_client_secret", None)))
        )

    # -- what the transport calls -------------------------------------------------

    def headers_for(self, method: str, url: str) -> Mapping[str, str]:
        """The ``Authorization`` (and ``DPoP``) headers for one request to the server.

        Empty before the first authorization, and for a URL outside the
        server's origin (a token is only ever sent to the server it was
        issued for).
        """
        with self._lock:
            tokens, nonce, server = (
                self._state.tokens,
                self._state.resource_nonce,
                self._state.server_url,
            )
        if tokens is None or server is None or origin(url) != origin(server):
            return {}
        if tokens.token_type.lower() == "dpop" and self._dpop_key is not None:
            from mcpclient.auth._jose import dpop_proof  # noqa: PLC0415 - the oauth extra

            proof = dpop_proof(
                self._dpop_key,
                method=method,
                url=url,
                nonce=nonce,
                access_token=tokens.access_token,
            )
            return {"Authorization": f"DPoP {tokens.access_token}", "DPoP": proof}
        return {"Authorization": f"Bearer {tokens.access_token}"}

    def recover(
        self, challenge: AuthChallenge, *, deadline: float, cancelled: threading.Event
    ) -> float:
        """Act on a 401/403 from the server; return the seconds a person spent.

        Raises:
            AuthError: ``auth_denied`` (refused, or step-up limit reached),
                ``auth_expired``, ``auth_required`` (no browser, or cancelled)
                or ``auth_failed`` (discovery, registration or a token endpoint
                failed; the message names which, never a secret).
        """
        if not self._flow_lock.acquire(timeout=max(0.0, deadline - now())):
            raise _fail("another authorization flow of this provider did not finish in time")
        try:
            return self._recover(challenge, deadline, cancelled)
        finally:
            with self._lock:
                http = self._state.http
            if http is not None:
                # Nothing of the flow stays open after it: the binding may
                # close before the next 401 (issue 27: one socket per cycle).
                http.release_idle()
            self._flow_lock.release()

    def interrupt(self) -> None:
        """Cut the network exchanges of a running flow at once (another thread).

        The client calls it when it closes during a flow, after setting the
        flow's ``cancelled`` event, so the flow ends now instead of at its
        current exchange's deadline.
        """
        with self._lock:
            http = self._state.http
        if http is not None:
            http.interrupt()

    # -- read-only views ----------------------------------------------------------

    @property
    def scopes(self) -> tuple[str, ...]:
        """The scopes of the current access token (empty before authorization)."""
        with self._lock:
            tokens = self._state.tokens
        return () if tokens is None else tokens.scopes

    @property
    def issuer(self) -> str | None:
        """The authorization server of the current token, or None."""
        with self._lock:
            tokens = self._state.tokens
        return None if tokens is None else tokens.issuer

    def __repr__(self) -> str:
        with self._lock:
            server, tokens = self._state.server_url, self._state.tokens
        where = "unbound" if server is None else "{}://{}".format(*origin(server)[:2])
        return f"<OAuth {self._grant!r} {where} authorized={tokens is not None}>"

    # -- the ladder -----------------------------------------------------------------

    def _recover(
        self, challenge: AuthChallenge, deadline: float, cancelled: threading.Event
    ) -> float:
        self._bind(challenge.url)
        if challenge.sent_authorization != self._current_authorization():
            _log.debug("auth: the rejected token was already replaced")
            return 0.0
        challenges = discovery.parse_www_authenticate(challenge.www_authenticate)
        params: dict[str, str] = {}
        for found in challenges:
            for name, value in found.params.items():
                params.setdefault(name, value)
        error = params.get("error", "")
        if error == "use_dpop_nonce" and self._dpop_key is not None:
            return self._take_nonce(challenge)
        if challenge.status == 403:
            if error != "insufficient_scope":
                raise _fail(
                    "the server refused the request (HTTP 403) with a valid token",
                    FailureClass.AUTH_DENIED,
                )
            return self._step_up(challenge, scope_list(params.get("scope")), deadline, cancelled)
        return self._on_401(challenge, params, deadline, cancelled)

    def _take_nonce(self, challenge: AuthChallenge) -> float:
        nonce = challenge.dpop_nonce
        with self._lock:
            if not nonce or nonce == self._state.resource_nonce:
                raise _fail("the server asked for a new DPoP nonce but gave none that is new")
            self._state.resource_nonce = nonce
        _log.debug("auth: took the server's DPoP nonce")
        return 0.0

    def _step_up(
        self,
        challenge: AuthChallenge,
        challenged: tuple[str, ...],
        deadline: float,
        cancelled: threading.Event,
    ) -> float:
        if not challenged:
            raise _fail(
                "the server answered insufficient_scope without naming a scope",
                FailureClass.AUTH_DENIED,
            )
        with self._lock:
            context, requested = self._state.context, self._state.requested
            if self._state.tokens is not None:
                # A token from the store: what it was granted counts as requested.
                requested = merge(requested, self._state.tokens.scopes)
            scopes = merge(requested, challenged)
            # The count includes the authorization that first asked for this
            # set (a 401's, or an earlier step-up's): asking again for scopes
            # the server keeps refusing is bounded, whoever asked first.
            attempts = self._state.authorizations.get(frozenset(scopes), 0)
        if attempts >= MAX_STEP_UPS:
            raise _fail(
                f"step-up limit: the server still requires more scope after {attempts}"
                f" authorization requests for the scopes {clean_text(' '.join(scopes), 200)}",
                FailureClass.AUTH_DENIED,
            )
        _log.debug("auth: step-up for scopes %s (attempt %d)", " ".join(scopes), attempts + 1)
        if context is None:
            context = self._discover(challenge, None, deadline)
        return self._authorize(context, scopes, challenge, deadline, cancelled)

    def _on_401(
        self,
        challenge: AuthChallenge,
        params: Mapping[str, str],
        deadline: float,
        cancelled: threading.Event,
    ) -> float:
        context = self._discover(challenge, params.get("resource_metadata"), deadline)
        with self._lock:
            tokens, refreshed_at = self._state.tokens, self._state.refreshed_at
        if tokens is not None and (tokens.issuer, tokens.resource) != (
            context.issuer,
            context.resource,
        ):
            _log.info("auth: the server now uses another authorization server; authorizing anew")
            tokens, refreshed_at = None, None
            self._set_tokens(None)
        if tokens is None:
            tokens = self._stored_tokens(context)
            refused = tokens is not None and bears(
                challenge.sent_authorization, tokens.access_token
            )
            if tokens is not None and not refused and not tokens.expired():
                self._set_tokens(tokens)
                return 0.0
        futile = (
            refreshed_at is not None
            and now() - refreshed_at < FUTILE_REFRESH_SECONDS
            and tokens is not None
            and not tokens.expired()
        )
        if (
            tokens is not None
            and tokens.refresh_token
            and not futile
            and self._refresh(context, tokens, deadline)
        ):
            return 0.0
        scopes = self._initial_scopes(context, scope_list(params.get("scope")))
        return self._authorize(context, scopes, challenge, deadline, cancelled)

    def _refresh(self, context: _Context, tokens: TokenSet, deadline: float) -> bool:
        """Refresh ``tokens``; False when the server refused (authorize anew), raise otherwise."""
        try:
            with self._endpoint(context, deadline) as endpoint:
                fresh = endpoint.refresh(
                    tokens, deadline=_io(deadline), send_resource=context.send_resource
                )
        except AuthError as exc:
            if exc.failure_class not in (FailureClass.AUTH_EXPIRED, FailureClass.AUTH_DENIED):
                raise
            _log.info(
                "auth: the refresh token was refused (%s); authorizing anew", exc.failure_class
            )
            self._store.delete_tokens(context.issuer, context.resource)
            self._set_tokens(None)
            return False
        fresh = self._pin(fresh, context)
        self._store.save_tokens(fresh)
        self._set_tokens(fresh, refreshed=True)
        _log.debug("auth: refreshed the access token")
        return True

    def _stored_tokens(self, context: _Context) -> TokenSet | None:
        stored = self._store.load_tokens(context.issuer, context.resource)
        # A DPoP token is bound to a key this provider does not hold: useless here.
        if stored is None or stored.token_type.lower() == "dpop":
            return None
        return stored
