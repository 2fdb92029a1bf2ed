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

Thread safety: ``headers_for`` may be called from any thread at any time;
``recover`` runs one flow at a time (a lock), never holding the lock that
``headers_for`` takes while it does I/O.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import attrs

from mcpclient._internal.checks import is_loopback_host
from mcpclient._internal.deadline import now
from mcpclient._internal.limits import clean_text
from mcpclient.auth import authorize, discovery, registration
from mcpclient.auth._net import SafeHTTP, URLPolicy, check_url
from mcpclient.auth._rules import (
    bears,
    check_pkce,
    initial_scopes,
    merge,
    origin,
    scope_list,
)
from mcpclient.auth.grants import (
    AuthorizationCodeGrant,
    ClientCredentialsGrant,
    ClientSettings,
    Grant,
    JWTBearerGrant,
    TokenExchangeGrant,
    check_arguments,
)
from mcpclient.auth.tokens import ClientInfo, MemoryTokenStore, TokenSet, TokenStore
from mcpclient.errors import AuthError, ConfigError, FailureClass
from mcpclient.transports import AuthChallenge

if TYPE_CHECKING:
    from mcpclient.auth._jose import SigningKey
    from mcpclient.auth.discovery import ProtectedResource, ServerMetadata
    from mcpclient.auth.token_endpoint import TokenEndpoint

__all__ = ["MAX_STEP_UPS", "OAuth"]

_log = logging.getLogger(__name__)

#: Authorization requests allowed for one requested scope set, the first one
#: included: a 403 ``insufficient_scope`` that would need another stands as
#: ``auth_denied``. A server that keeps refusing the scopes it challenges for
#: gets exactly this many authorization requests.
MAX_STEP_UPS = 3

#: The longest one exchange with an OAuth endpoint may take, in seconds.
EXCHANGE_SECONDS = 30.0

#: A token refreshed because of a 401 and rejected again within this many
#: seconds was never accepted: the next 401 authorizes anew instead of
#: refreshing in a loop. Later rejections (a revocation hours on) refresh.
FUTILE_REFRESH_SECONDS = 10.0

_INSTALL_HINT = (
    "mcpclient.auth.OAuth needs the optional cryptography and PyJWT packages: "
    "install them with pip install 'mcpclient[oauth]'"
)


def _io(deadline: float) -> float:
    """The deadline of one exchange with an OAuth endpoint: the flow's, at most 30 s away.

    The flow's own deadline may be minutes away (a person is in the loop);
    a server that stalls one exchange must not hold the flow that long.
    """
    return min(deadline, now() + EXCHANGE_SECONDS)


def _fail(message: str, failure_class: FailureClass = FailureClass.AUTH_FAILED) -> AuthError:
    return AuthError(message, failure_class=failure_class, op="authorize")


def _callable_failure(what: str, exc: Exception) -> AuthError:
    if isinstance(exc, AuthError):
        return exc
    return _fail(f"the {what} callable raised {type(exc).__name__}")


@attrs.frozen(repr=False)
class _Context:
    """What discovery found for the bound server (no secrets)."""

    # The metadata's resource verbatim (sent as is), else the canonical server URL;
    # the key of the tokens.
    resource: str
    send_resource: bool  # RFC 8707 ``resource`` on requests (not for 2025-03-26 servers)
    meta: ServerMetadata
    prm: ProtectedResource | None

    @property
    def issuer(self) -> str:
        return self.meta.issuer


@attrs.define
class _State:
    """The provider's mutable state; read and written under ``OAuth._lock``."""

    server_url: str | None = None
    http: SafeHTTP | None = None
    policy: URLPolicy | None = None
    tokens: TokenSet | None = None
    # When the current token came from a refresh that a 401 asked for
    # (monotonic): if the server rejects it too, at once, refreshing again is
    # futile and a new authorization is due.
    refreshed_at: float | None = None
    resource_nonce: str | None = None
    context: _Context | None = None
    requested: tuple[str, ...] = ()
    # Authorization requests made per requested scope set (the step-up limit).
    authorizations: dict[frozenset[str], int] = attrs.Factory(dict)
    as_nonces: dict[str, str] = attrs.Factory(dict)  # DPoP-Nonce by issuer


class OAuth:
    """OAuth 2.1 authorization for one HTTP MCP server (an auth provider).

    Give it to the transport; the first 401 starts discovery and the grant::

        from mcpclient.auth import OAuth
        transport = StreamableHTTPTransport("https://mcp.example.com/mcp", auth=OAuth())

    Args:
        grant: how tokens are obtained: :class:`AuthorizationCodeGrant` (a
            person in a browser, the default), :class:`ClientCredentialsGrant`,
            :class:`JWTBearerGrant` or :class:`TokenExchangeGrant`.
        client_id: a pre-registered client ID (else a client ID metadata
            document or dynamic registration is used). A
            :class:`JWTBearerGrant` with neither ``client_id`` nor
            ``client_metadata_url`` is an anonymous workload: its token
            requests carry no client authentication and nothing is registered.
        client_secret: its secret, for ``client_secret_basic``/``_post``.
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

    # -- discovery ------------------------------------------------------------------

    def _discover(
        self, challenge: AuthChallenge, resource_metadata: str | None, deadline: float
    ) -> _Context:
        http, server = self._http()
        prm = discovery.fetch_protected_resource(
            server, resource_metadata, http, deadline=_io(deadline)
        )
        if prm is None:
            # A 2025-03-26 server: metadata at its origin, or the default endpoints.
            meta = discovery.legacy_server_metadata(server, http, deadline=_io(deadline))
            context = _Context(
                resource=discovery.canonical_resource(server),
                send_resource=False,
                meta=meta,
                prm=None,
            )
        else:
            issuer = prm.authorization_servers[0]
            with self._lock:
                known = self._state.context
            if known is not None and known.prm is not None and known.issuer == issuer:
                meta = known.meta
            else:
                meta = discovery.fetch_server_metadata(issuer, http, deadline=_io(deadline))
            context = _Context(resource=prm.resource, send_resource=True, meta=meta, prm=prm)
        with self._lock:
            previous = self._state.context
            if previous is not None and previous.issuer != context.issuer:
                # Scope bookkeeping belongs to one authorization server.
                self._state.requested = ()
                self._state.authorizations.clear()
            self._state.context = context
        _log.debug("auth: the authorization server is %s", context.issuer)
        return context

    def _initial_scopes(self, context: _Context, challenged: tuple[str, ...]) -> tuple[str, ...]:
        return initial_scopes(
            challenged=challenged,
            configured=self._scopes,
            resource_scopes=() if context.prm is None else context.prm.scopes_supported,
            advertised=context.meta.scopes_supported,
            wants_refresh=isinstance(self._grant, AuthorizationCodeGrant),
        )

    # -- grants -----------------------------------------------------------------------

    def _authorize(
        self,
        context: _Context,
        scopes: tuple[str, ...],
        challenge: AuthChallenge,
        deadline: float,
        cancelled: threading.Event,
    ) -> float:
        if cancelled.is_set():
            raise _fail("the authorization was cancelled", FailureClass.AUTH_REQUIRED)
        with self._lock:
            key = frozenset(scopes)
            self._state.authorizations[key] = self._state.authorizations.get(key, 0) + 1
        grant = self._grant
        person = 0.0
        resource = context.resource if context.send_resource else None
        if isinstance(grant, AuthorizationCodeGrant):
            tokens, person = self._code_flow(
                grant,
                context,
                scopes=scopes,
                challenge=challenge,
                deadline=deadline,
                cancelled=cancelled,
            )
        elif isinstance(grant, ClientCredentialsGrant):
            with self._endpoint(context, deadline) as endpoint:
                tokens = endpoint.client_credentials(
                    scopes=scopes, deadline=_io(deadline), resource=resource
                )
        else:
            if isinstance(grant, JWTBearerGrant):
                assertion = _call_for_text(grant.assertion, "JWTBearerGrant.assertion")
            else:
                assertion = self._id_jag(grant, context, scopes, deadline)
            with self._endpoint(context, deadline) as endpoint:
                tokens = endpoint.jwt_bearer(
                    assertion, scopes=scopes, deadline=_io(deadline), resource=resource
                )
        tokens = self._pin(tokens, context)
        self._store.save_tokens(tokens)
        self._set_tokens(tokens)
        with self._lock:
            self._state.requested = merge(self._state.requested, scopes)
        _log.info("auth: authorized with %s (scopes: %s)", context.issuer, " ".join(tokens.scopes))
        return person

    def _code_flow(
        self,
        grant: AuthorizationCodeGrant,
        context: _Context,
        *,
        scopes: tuple[str, ...],
        challenge: AuthChallenge,
        deadline: float,
        cancelled: threading.Event,
    ) -> tuple[TokenSet, float]:
        meta = context.meta
        check_pkce(meta, challenge.protocol_version, legacy=context.prm is None)
        if not meta.authorization_endpoint:
            raise _fail(f"{meta.issuer} has no authorization endpoint")
        with contextlib.ExitStack() as stack:
            receiver = None
            if grant.redirect is None:
                receiver = stack.enter_context(authorize.LoopbackReceiver())
            redirect_uri = (
                grant.headless_redirect_uri if receiver is None else receiver.redirect_uri
            )
            client = self._client(context, (redirect_uri,), deadline, scopes)
            verifier, code_challenge = authorize.new_pkce()
            state = authorize.new_state()
            params = {
                "response_type": "code",
                "client_id": client.client_id,
                "redirect_uri": redirect_uri,
                "state": state,
                "code_challenge": code_challenge,
                "code_challenge_method": "S256",
            }
            if context.send_resource:
                params["resource"] = context.resource
            if scopes:
                params["scope"] = " ".join(scopes)
            url = authorize.authorization_url(meta.authorization_endpoint, params)
            authorize.check_browser_url(url, allow_loopback_http=self._allow_loopback())
            iss_required = meta.authorization_response_iss_parameter_supported
            started = now()
            if receiver is None:
                assert grant.redirect is not None
                redirect = grant.redirect
                redirected = _call_for_text(
                    lambda: redirect(url), "AuthorizationCodeGrant.redirect"
                )
                if cancelled.is_set():
                    raise _fail("the authorization was cancelled", FailureClass.AUTH_REQUIRED)
                code = authorize.code_from_redirect(
                    redirected, state=state, issuer=meta.issuer, iss_required=iss_required
                )
            else:
                receiver.arm(state, meta.issuer, iss_required)
                _open(grant.open_browser or authorize.open_system_browser, url)
                code = receiver.wait(deadline=deadline, cancelled=cancelled)
            person = now() - started
        with self._endpoint(context, deadline, client) as endpoint:
            tokens = endpoint.exchange_code(
                code,
                verifier=verifier,
                redirect_uri=redirect_uri,
                deadline=_io(deadline),
                resource=context.resource if context.send_resource else None,
                scopes=scopes,
            )
        return tokens, person

    def _id_jag(
        self,
        grant: TokenExchangeGrant,
        context: _Context,
        scopes: tuple[str, ...],
        deadline: float,
    ) -> str:
        from mcpclient.auth.token_endpoint import exchange_for_id_jag  # noqa: PLC0415

        http, _ = self._http()
        policy = self._policy()
        check_url(grant.idp_token_endpoint, policy, what="IdP token endpoint")
        id_token = _call_for_text(grant.id_token, "TokenExchangeGrant.id_token")
        return exchange_for_id_jag(
            http,
            idp_token_endpoint=grant.idp_token_endpoint,
            id_token=id_token,
            audience=context.issuer,
            resource=context.resource if context.send_resource else None,
            scopes=scopes,
            client_id=grant.idp_client_id,
            client_secret=grant.idp_client_secret,
            deadline=_io(deadline),
        )

    # -- helpers ----------------------------------------------------------------------

    def _client(
        self,
        context: _Context,
        redirect_uris: tuple[str, ...],
        deadline: float,
        scopes: tuple[str, ...] = (),
    ) -> ClientInfo:
        http, _ = self._http()
        settings = attrs.evolve(self._settings, redirect_uris=redirect_uris)
        return registration.obtain_client(
            context.meta,
            settings,
            self._store,
            redirect_uris,
            http,
            deadline=_io(deadline),
            scopes=scopes,
        )

    @contextlib.contextmanager
    def _endpoint(
        self, context: _Context, deadline: float, client: ClientInfo | None = None
    ) -> Iterator[TokenEndpoint]:
        """The token endpoint of ``context``'s issuer; its DPoP nonce outlives the call.

        ``client`` None means this provider's client at that issuer (registered
        if need be), or no client at all for an anonymous workload.
        """
        from mcpclient.auth.token_endpoint import TokenEndpoint  # noqa: PLC0415

        http, _ = self._http()
        if client is None and not self._anonymous:
            client = self._client(context, (), deadline)
        with self._lock:
            nonce = self._state.as_nonces.get(context.issuer)
        endpoint = TokenEndpoint(
            context.meta,
            client,
            http,
            signing_key=self._settings.client_key,
            dpop_key=self._dpop_key,
            dpop_nonce=nonce,
        )
        try:
            yield endpoint
        finally:
            fresh = endpoint.dpop_nonce
            if fresh is not None:
                with self._lock:
                    self._state.as_nonces[context.issuer] = fresh

    def _pin(self, tokens: TokenSet, context: _Context) -> TokenSet:
        # Keyed by the issuer and resource this provider discovered, whatever
        # the token endpoint filled in (a 2025-03-26 server takes no resource).
        if tokens.issuer == context.issuer and tokens.resource == context.resource:
            return tokens
        return attrs.evolve(tokens, issuer=context.issuer, resource=context.resource)

    def _set_tokens(self, tokens: TokenSet | None, *, refreshed: bool = False) -> None:
        with self._lock:
            self._state.tokens = tokens
            self._state.refreshed_at = now() if refreshed and tokens is not None else None

    def _current_authorization(self) -> str | None:
        with self._lock:
            tokens = self._state.tokens
        if tokens is None:
            return None
        scheme = "DPoP" if tokens.token_type.lower() == "dpop" and self._dpop_key else "Bearer"
        return f"{scheme} {tokens.access_token}"

    def _bind(self, url: str) -> None:
        resource = discovery.canonical_resource(url)
        with self._lock:
            bound = self._state.server_url
            if bound is None:
                policy = URLPolicy(
                    allow_loopback=is_loopback_host(urlsplit(url).hostname or ""),
                    allow_private_networks=self._allow_private,
                    ca_bundle=self._ca_bundle,
                )
                self._state.server_url = url
                self._state.policy = policy
                self._state.http = SafeHTTP(policy)
                return
        if discovery.canonical_resource(bound) != resource:
            raise _fail(
                "this OAuth provider already serves another MCP server; give each server"
                " its own OAuth",
                FailureClass.AUTH_FAILED,
            )

    def _http(self) -> tuple[SafeHTTP, str]:
        with self._lock:
            http, server = self._state.http, self._state.server_url
        assert http is not None and server is not None, "recover() binds before any I/O"
        return http, server

    def _policy(self) -> URLPolicy:
        with self._lock:
            policy = self._state.policy
        assert policy is not None
        return policy

    def _allow_loopback(self) -> bool:
        return self._policy().allow_loopback


def _call_for_text(fn: Callable[[], Any], what: str) -> str:
    try:
        value = fn()
    except Exception as exc:
        raise _callable_failure(what, exc) from None
    if not isinstance(value, str) or not value:
        raise _fail(f"the {what} callable returned {type(value).__name__}, not a non-empty str")
    return value


def _open(opener: Callable[[str], None], url: str) -> None:
    try:
        opener(url)
    except AuthError:
        raise
    except Exception as exc:
        raise _fail(
            f"could not open a browser for the authorization ({type(exc).__name__})",
            FailureClass.AUTH_REQUIRED,
        ) from None
