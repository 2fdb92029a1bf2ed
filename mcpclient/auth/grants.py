"""How :class:`~mcpclient.auth.OAuth` obtains tokens: the grant values and the client settings.

These are plain values (frozen, comparable, safe to log): a grant says *which*
OAuth flow gets an access token, :class:`ClientSettings` says what the host
told the provider about its own client identity. Nothing here does I/O or
imports a cryptography library, so ``import mcpclient.auth`` stays cheap.

Every field that can hold a secret (a client secret, an IdP secret, a signing
key) is left out of ``repr`` and ``str``; callables are shown by name only.
:func:`check_arguments` refuses unusable ``OAuth(...)`` arguments up front.

Thread safety: the values are immutable; the callables they hold are called
from the thread running an authorization flow, one flow at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import attrs

from mcpclient._core.checks import fail, is_loopback_host
from mcpclient._core.limits import normalize_message
from mcpclient.errors import ConfigError

if TYPE_CHECKING:
    from mcpclient.auth._jose import SigningKey

__all__ = [
    "AuthorizationCodeGrant",
    "ClientCredentialsGrant",
    "ClientSettings",
    "DeviceCode",
    "DeviceCodeGrant",
    "Grant",
    "JWTBearerGrant",
    "TokenExchangeGrant",
]

#: The redirect URI a headless ``redirect`` callable registers by default.
DEFAULT_HEADLESS_REDIRECT_URI = "http://127.0.0.1/callback"


def _callable_name(value: object) -> str:
    # Show what kind of callable was given, never what it closes over.
    return getattr(value, "__qualname__", None) or type(value).__name__


def _optional_callable(inst: Any, attr: Any, value: Any) -> None:
    if value is not None and not callable(value):
        raise fail(inst, attr.name, f"must be a callable or None, got {type(value).__name__}")


def _required_callable(inst: Any, attr: Any, value: Any) -> None:
    if not callable(value):
        raise fail(inst, attr.name, f"must be a callable, got {type(value).__name__}")


def _optional_str(inst: Any, attr: Any, value: Any) -> None:
    if value is not None and (not isinstance(value, str) or not value):
        raise fail(inst, attr.name, "must be a non-empty str or None")


def _required_str(inst: Any, attr: Any, value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise fail(inst, attr.name, "must be a non-empty str")


def _str_tuple(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@attrs.frozen(repr=False)
class AuthorizationCodeGrant:
    """Authorization code with PKCE: a person signs in through a browser (the default).

    By default the system browser opens the authorization URL and a one-shot
    listener on ``127.0.0.1`` receives the redirect. A headless host passes
    ``redirect``: a callable that takes the authorization URL, gets a person
    (or a test) through it, and returns the URL the authorization server
    redirected to.

    Example::

        OAuth(grant=AuthorizationCodeGrant(redirect=my_device_flow_bridge))

    Attributes:
        redirect: headless mode: ``authorization URL -> redirect URL``. None
            uses the loopback listener.
        redirect_uri: with ``redirect``, the redirect URI registered for the
            client (default ``http://127.0.0.1/callback``). Ignored otherwise
            (the listener's own URI is used).
        open_browser: how the loopback mode shows the URL to a person
            (default: the system browser, scheme checked first).
    """

    redirect: Callable[[str], str] | None = attrs.field(
        default=None, kw_only=True, validator=_optional_callable
    )
    redirect_uri: str | None = attrs.field(default=None, kw_only=True, validator=_optional_str)
    open_browser: Callable[[str], None] | None = attrs.field(
        default=None, kw_only=True, validator=_optional_callable
    )

    @property
    def headless_redirect_uri(self) -> str:
        """The redirect URI used with ``redirect`` (the default when none was given)."""
        return self.redirect_uri or DEFAULT_HEADLESS_REDIRECT_URI

    def __repr__(self) -> str:
        mode = "headless" if self.redirect is not None else "loopback"
        return f"AuthorizationCodeGrant({mode})"


@attrs.frozen(repr=False)
class ClientCredentialsGrant:
    """Client credentials (RFC 6749 §4.4): the client acts on its own behalf, no person.

    The client authenticates with ``OAuth(client_secret=...)`` or, for
    ``private_key_jwt``, ``OAuth(client_key=...)``; ``client_id`` is required.
    """

    def __repr__(self) -> str:
        return "ClientCredentialsGrant()"


@attrs.frozen(repr=False)
class JWTBearerGrant:
    """JWT bearer (RFC 7523 §2.1): workload identity, the host supplies a signed assertion.

    With ``OAuth(client_id=...)`` (or ``client_metadata_url``) the request
    carries that client's authentication as usual. Without either, the client
    is anonymous (workload identity federation, SEP-1933; client
    authentication is optional for this grant, RFC 7523 §3.1): the request
    carries the assertion and no client authentication at all, and no client
    is registered. A refused assertion (``invalid_grant``, ``invalid_scope``)
    is never retried and never followed by another grant.

    Example::

        OAuth(grant=JWTBearerGrant(assertion=read_projected_service_account_token))

    Attributes:
        assertion: returns a fresh JWT for the authorization server each time
            a token is needed (e.g. read from a projected service-account file).
            Its value is never logged.
    """

    assertion: Callable[[], str] = attrs.field(validator=_required_callable)

    def __repr__(self) -> str:
        return f"JWTBearerGrant(assertion={_callable_name(self.assertion)})"


@attrs.frozen(repr=False)
class TokenExchangeGrant:
    """Enterprise-managed authorization: ID token -> ID-JAG -> access token.

    The provider exchanges the person's ID token at the enterprise IdP
    (RFC 8693) for an identity assertion authorization grant (ID-JAG) whose
    audience is the MCP server's authorization server, then presents it there
    as a JWT bearer grant.

    Attributes:
        idp_token_endpoint: the enterprise IdP's token endpoint (https, or
            http to loopback when the MCP server is on loopback).
        id_token: returns the person's current OpenID Connect ID token.
        idp_client_id: the client's identity at the IdP, if it needs one.
        idp_client_secret: its secret at the IdP (never shown).
    """

    idp_token_endpoint: str = attrs.field(validator=_required_str)
    id_token: Callable[[], str] = attrs.field(validator=_required_callable)
    idp_client_id: str | None = attrs.field(default=None, kw_only=True, validator=_optional_str)
    idp_client_secret: str | None = attrs.field(default=None, kw_only=True, validator=_optional_str)

    def __repr__(self) -> str:
        return (
            f"TokenExchangeGrant(idp_token_endpoint={self.idp_token_endpoint!r}, "
            f"idp_client_id={self.idp_client_id!r})"
        )


@attrs.frozen
class DeviceCode:
    """What a person needs to approve a device authorization (RFC 8628 §3.2).

    Show ``user_code`` and ``verification_uri`` (or render
    ``verification_uri_complete``, when given, as a QR code); no secret is here.

    Attributes:
        user_code: the code the person types at the verification page.
        verification_uri: the page where they type it.
        verification_uri_complete: the page with the code already in it, or None.
        expires_at: when the code stops working (``time.time()`` seconds).
    """

    user_code: str
    verification_uri: str
    verification_uri_complete: str | None
    expires_at: float


@attrs.frozen(repr=False)
class DeviceCodeGrant:
    """Device authorization (RFC 8628): a person approves on another device; no browser here.

    The provider asks the authorization server's
    ``device_authorization_endpoint`` for a user code, hands it to
    ``on_code``, then polls the token endpoint at the server's interval until
    the person approves, denies, or the code or ``Timeouts.auth`` runs out.

    Example::

        OAuth(grant=DeviceCodeGrant(on_code=lambda c: print(
            f"Visit {c.verification_uri} and enter {c.user_code}")))

    Attributes:
        on_code: called once per authorization with the :class:`DeviceCode`
            to show; it should return promptly (it runs within the flow's
            deadline; its return value is ignored).
    """

    on_code: Callable[[DeviceCode], object] = attrs.field(validator=_required_callable)

    def __repr__(self) -> str:
        return f"DeviceCodeGrant(on_code={_callable_name(self.on_code)})"


#: Any of the grants :class:`~mcpclient.auth.OAuth` accepts.
Grant = (
    AuthorizationCodeGrant
    | ClientCredentialsGrant
    | DeviceCodeGrant
    | JWTBearerGrant
    | TokenExchangeGrant
)

#: The grant types a client registers for the authorization code grant.
CODE_GRANT_TYPES = ("authorization_code", "refresh_token")


@attrs.frozen(repr=False)
class ClientSettings:
    """What the host told :class:`~mcpclient.auth.OAuth` about its OAuth client.

    Registration (``mcpclient.auth.registration``) reads it to decide between a
    pre-registered client, a client ID metadata document and dynamic
    registration.

    Attributes:
        client_id: a pre-registered client ID, or None.
        client_secret: its secret, or None (never shown).
        issuer: the authorization server the pre-registered client belongs
            to, or None (then it is bound to the first one it is used with).
        client_key: the private key for ``private_key_jwt``, or None (never shown).
        token_endpoint_auth_method: the method to use or register
            (``client_secret_basic``, ``client_secret_post``, ``none``,
            ``private_key_jwt``); None lets the provider choose.
        client_metadata_url: an https URL of a client ID metadata document,
            used as the client ID where the authorization server supports it.
        client_name: the name shown to a person by the authorization server.
        application_type: ``native`` or ``web`` for dynamic registration
            (loopback redirect URIs always register as ``native``).
        redirect_uris: the redirect URIs of the client (filled in by the
            provider for each flow).
        grant_types: the grant types dynamic registration asks for (set by
            the provider per grant).
    """

    client_id: str | None = attrs.field(default=None, kw_only=True)
    client_secret: str | None = attrs.field(default=None, kw_only=True)
    issuer: str | None = attrs.field(default=None, kw_only=True)
    client_key: SigningKey | None = attrs.field(default=None, kw_only=True)
    token_endpoint_auth_method: str | None = attrs.field(default=None, kw_only=True)
    client_metadata_url: str | None = attrs.field(default=None, kw_only=True)
    client_name: str = attrs.field(default="mcpclient", kw_only=True)
    application_type: str = attrs.field(default="native", kw_only=True)
    redirect_uris: tuple[str, ...] = attrs.field(default=(), kw_only=True, converter=_str_tuple)
    grant_types: tuple[str, ...] = attrs.field(
        default=CODE_GRANT_TYPES, kw_only=True, converter=_str_tuple
    )

    def __repr__(self) -> str:
        return (
            f"ClientSettings(client_id={self.client_id!r}, "
            f"client_secret={'<set>' if self.client_secret else None}, "
            f"issuer={self.issuer!r}, "
            f"client_key={'<set>' if self.client_key is not None else None}, "
            f"token_endpoint_auth_method={self.token_endpoint_auth_method!r}, "
            f"client_metadata_url={self.client_metadata_url!r}, "
            f"client_name={self.client_name!r}, application_type={self.application_type!r})"
        )


#: The token endpoint authentication methods a host may ask for.
AUTH_METHODS = frozenset({"client_secret_basic", "client_secret_post", "none", "private_key_jwt"})
#: The ``application_type`` values of dynamic registration.
APPLICATION_TYPES = frozenset({"native", "web"})


def check_arguments(
    grant: object,
    *,
    client_id: str | None,
    client_secret: str | None,
    client_key: str | bytes | None,
    token_endpoint_auth_method: str | None,
    client_metadata_url: str | None,
    client_name: str,
    application_type: str,
    scopes: Sequence[str] | None,
    issuer: str | None = None,
) -> None:
    """Refuse what :class:`~mcpclient.auth.OAuth` was given, before any I/O.

    Raises:
        ConfigError: naming the argument (``OAuth.<name> ...``), never its value.
    """

    def bad(field: str, problem: str) -> ConfigError:
        return ConfigError(f"OAuth.{field} {problem}", op="OAuth")

    if not isinstance(
        grant,
        AuthorizationCodeGrant
        | ClientCredentialsGrant
        | DeviceCodeGrant
        | JWTBearerGrant
        | TokenExchangeGrant,
    ):
        raise bad("grant", f"must be one of the mcpclient.auth grants, got {type(grant).__name__}")
    for field, value in (
        ("client_id", client_id),
        ("client_secret", client_secret),
        ("client_metadata_url", client_metadata_url),
    ):
        if value is not None and (not isinstance(value, str) or not value):
            raise bad(field, "must be a non-empty str or None")
    if client_key is not None and not isinstance(client_key, str | bytes):
        raise bad("client_key", "must be a PEM private key (str or bytes) or None")
    if (client_secret is not None or client_key is not None) and client_id is None:
        raise bad("client_id", "is required with client_secret or client_key")
    if issuer is not None:
        if client_id is None:
            raise bad("issuer", "binds a pre-registered client: it needs a client_id")
        parts = urlsplit(issuer) if isinstance(issuer, str) else None
        if parts is None or parts.scheme not in ("https", "http") or not parts.hostname:
            raise bad("issuer", "must be the authorization server's issuer URL")
    if token_endpoint_auth_method is not None and token_endpoint_auth_method not in AUTH_METHODS:
        raise bad("token_endpoint_auth_method", f"must be one of {', '.join(sorted(AUTH_METHODS))}")
    if token_endpoint_auth_method == "private_key_jwt" and client_key is None:
        raise bad("client_key", "is required for private_key_jwt")
    if client_metadata_url is not None:
        parts = urlsplit(client_metadata_url)
        # http only to this machine, like every other OAuth URL (a test or dev set-up).
        secure = parts.scheme == "https" or (
            parts.scheme == "http" and is_loopback_host(parts.hostname or "")
        )
        if not secure or not parts.hostname or parts.path in ("", "/"):
            raise bad("client_metadata_url", "must be an https URL with a path")
    if not isinstance(client_name, str) or not client_name:
        raise bad("client_name", "must be a non-empty one-line str")
    if normalize_message(client_name) != client_name:
        raise bad("client_name", "must be a non-empty one-line str")
    if application_type not in APPLICATION_TYPES:
        raise bad("application_type", "must be 'native' or 'web'")
    if isinstance(scopes, str):
        raise bad("scopes", "must be a sequence of scope names, not one str")
    for scope in scopes or ():
        if not isinstance(scope, str) or not scope or any(c.isspace() for c in scope):
            raise bad("scopes", "must hold non-empty scope names without whitespace")
    anonymous = client_id is None and client_metadata_url is None
    if isinstance(grant, TokenExchangeGrant) and anonymous:
        # The authorization server must know which client presents the ID-JAG.
        raise bad("client_id", "(or client_metadata_url) is required for TokenExchangeGrant")
    if isinstance(grant, JWTBearerGrant) and anonymous and token_endpoint_auth_method:
        # An anonymous workload sends no client authentication, so none to choose.
        raise bad(
            "token_endpoint_auth_method", "applies only with a client_id (or client_metadata_url)"
        )
    if isinstance(grant, ClientCredentialsGrant) and (
        client_id is None or (client_secret is None and client_key is None)
    ):
        raise bad(
            "client_id", "and a client_secret or client_key are required for client credentials"
        )
