"""The machinery under :class:`~mcpclient.auth.oauth.OAuth`: discovery, the grants, state.

:class:`~mcpclient.auth.oauth.OAuth` is the provider the transport talks to
and climbs the recovery ladder (nonce, step-up, refresh, authorize); the steps
it climbs with live here, in :class:`_Flow`, its base class: discovering the
authorization server of the bound MCP server, running a grant (authorization
code with PKCE, device authorization (:mod:`mcpclient.auth.device`), client
credentials, JWT bearer, token exchange), obtaining a client registration,
talking to the token endpoint, and reading and writing the provider's state
under its lock.

Thread safety: as the provider's. Every method runs either on the thread of
the one ``recover()`` flow (under ``OAuth._flow_lock``) or is a short read or
write of ``_state`` under ``OAuth._lock``, which is never held across I/O.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import attrs

from mcpclient._core import redaction
from mcpclient._core.checks import is_loopback_host
from mcpclient._core.deadline import now
from mcpclient.auth import authorize, device, discovery, registration
from mcpclient.auth._callables import call_bounded
from mcpclient.auth._net import SafeHTTP, URLPolicy, check_url
from mcpclient.auth._rules import check_pkce, initial_scopes, merge
from mcpclient.auth.grants import (
    AuthorizationCodeGrant,
    ClientCredentialsGrant,
    ClientSettings,
    DeviceCodeGrant,
    Grant,
    JWTBearerGrant,
    TokenExchangeGrant,
)
from mcpclient.auth.tokens import ClientInfo, TokenSet, TokenStore
from mcpclient.errors import AuthError, FailureClass
from mcpclient.transports import AuthChallenge

if TYPE_CHECKING:
    from mcpclient.auth._jose import SigningKey
    from mcpclient.auth.discovery import ProtectedResource, ServerMetadata
    from mcpclient.auth.token_endpoint import TokenEndpoint

# The provider's logger, whichever of its modules logs: hosts filter on it.
_log = logging.getLogger("mcpclient.auth.oauth")

#: RFC 8628 §3.4 (the grant type) and RFC 7591: what a device client registers.
DEVICE_GRANT_TYPES = ("urn:ietf:params:oauth:grant-type:device_code", "refresh_token")

#: The longest one exchange with an OAuth endpoint may take, in seconds.
EXCHANGE_SECONDS = 30.0


def _io(deadline: float) -> float:
    """The deadline of one exchange with an OAuth endpoint: the flow's, at most 30 s away.

    The flow's own deadline may be minutes away (a person is in the loop);
    a server that stalls one exchange must not hold the flow that long.
    """
    return min(deadline, now() + EXCHANGE_SECONDS)


def _fail(message: str, failure_class: FailureClass = FailureClass.AUTH_FAILED) -> AuthError:
    return AuthError(message, failure_class=failure_class, op="authorize")


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
    # The issuer the configured (pre-registered) client belongs to, once known.
    bound_issuer: str | None = None


class _Flow:
    """Discovery, the grants and state access of an OAuth provider (its base class).

    :class:`~mcpclient.auth.oauth.OAuth` sets every attribute below in its
    ``__init__``; nothing else builds a ``_Flow``.
    """

    _grant: Grant
    _anonymous: bool  # a JWT bearer workload without a client identity
    _settings: ClientSettings
    _scopes: tuple[str, ...]
    _store: TokenStore
    _dpop_key: SigningKey | None
    _allow_private: bool
    _ca_bundle: str | None
    _lock: threading.Lock  # guards _state; never held across I/O
    _state: _State

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
            wants_refresh=isinstance(self._grant, AuthorizationCodeGrant | DeviceCodeGrant),
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
        elif isinstance(grant, DeviceCodeGrant):
            started = now()
            with self._endpoint(context, deadline) as endpoint:
                tokens = device.run(
                    grant,
                    endpoint,
                    scopes=scopes,
                    resource=resource,
                    deadline=deadline,
                    cancelled=cancelled,
                    io=_io,
                    allow_loopback_http=self._allow_loopback(),
                )
            person = now() - started
        elif isinstance(grant, ClientCredentialsGrant):
            with self._endpoint(context, deadline) as endpoint:
                tokens = endpoint.client_credentials(
                    scopes=scopes, deadline=_io(deadline), resource=resource
                )
        else:
            if isinstance(grant, JWTBearerGrant):
                assertion = _call_for_text(
                    grant.assertion, "JWTBearerGrant.assertion", deadline, cancelled
                )
            else:
                assertion = self._id_jag(grant, context, scopes, deadline, cancelled)
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
                # Bounded by the flow's deadline: a callable that outlives it is
                # abandoned on its thread (mcpclient.auth._callables).
                redirected = _call_for_text(
                    lambda: redirect(url), "AuthorizationCodeGrant.redirect", deadline, cancelled
                )
                if cancelled.is_set():
                    raise _fail("the authorization was cancelled", FailureClass.AUTH_REQUIRED)
                code = authorize.code_from_redirect(
                    redirected, state=state, issuer=meta.issuer, iss_required=iss_required
                )
            else:
                receiver.arm(state, meta.issuer, iss_required)
                _open(grant.open_browser or authorize.open_system_browser, url, deadline, cancelled)
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
        cancelled: threading.Event,
    ) -> str:
        from mcpclient.auth.token_endpoint import exchange_for_id_jag  # noqa: PLC0415

        http, _ = self._http()
        policy = self._policy()
        check_url(grant.idp_token_endpoint, policy, what="IdP token endpoint")
        id_token = _call_for_text(
            grant.id_token, "TokenExchangeGrant.id_token", deadline, cancelled
        )
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
        if isinstance(self._grant, DeviceCodeGrant):
            # No redirect URIs: the person approves elsewhere (RFC 8628 §3.3).
            settings = attrs.evolve(settings, grant_types=DEVICE_GRANT_TYPES)
        bound = self._bound_issuer()
        client = registration.obtain_client(
            context.meta,
            settings,
            self._store,
            redirect_uris,
            http,
            deadline=_io(deadline),
            scopes=scopes,
            bound_issuer=bound,
        )
        if bound is None and settings.client_id and client.client_id == settings.client_id:
            # First use of the configured client: bind it to this issuer (and
            # record that) before its secret is ever sent.
            self._bind_issuer(settings.client_id, client.issuer)
        return client

    def _bound_issuer(self) -> str | None:
        """The issuer the configured client belongs to: configured, seen, or recorded."""
        settings = self._settings
        if not settings.client_id:
            return None
        if settings.issuer is not None:
            return settings.issuer
        with self._lock:
            bound = self._state.bound_issuer
        if bound is not None:
            return bound
        load = getattr(self._store, "load_issuer_binding", None)
        if not callable(load):
            return None
        recorded = load(settings.client_id)
        if recorded is not None and not (isinstance(recorded, str) and recorded):
            raise _fail("the token store's issuer binding is not an issuer")
        with self._lock:
            self._state.bound_issuer = recorded
        return recorded

    def _bind_issuer(self, client_id: str, issuer: str) -> None:
        with self._lock:
            self._state.bound_issuer = issuer
        save = getattr(self._store, "save_issuer_binding", None)
        if callable(save):
            save(client_id, issuer)
        _log.debug("auth: the configured client is bound to %s", issuer)

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
        if tokens is not None:
            # Redacted from messages should a server quote them back.
            redaction.note(tokens.access_token)
            redaction.note(tokens.refresh_token)
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


def _call_for_text(
    fn: Callable[[], Any], what: str, deadline: float, cancelled: threading.Event
) -> str:
    value = call_bounded(fn, what, deadline=deadline, cancelled=cancelled)
    if not isinstance(value, str) or not value:
        raise _fail(f"the {what} callable returned {type(value).__name__}, not a non-empty str")
    return value


def _open(
    opener: Callable[[str], None], url: str, deadline: float, cancelled: threading.Event
) -> None:
    def raised(exc: Exception) -> AuthError:
        return _fail(
            f"could not open a browser for the authorization ({type(exc).__name__})",
            FailureClass.AUTH_REQUIRED,
        )

    call_bounded(
        lambda: opener(url), "open_browser", deadline=deadline, cancelled=cancelled, raised=raised
    )
