"""Token and client-registration values: :class:`TokenSet` and :class:`ClientInfo`.

:class:`TokenSet` is what a token endpoint granted for one (issuer, resource)
pair; :class:`ClientInfo` is the client identity registered with one issuer.
Both hold secrets, so neither shows them in ``repr``/``str`` and neither
pickles or copies through ``pickle``: persisting one takes an explicit
``to_json()``, which only a :class:`~mcpclient.auth.tokens.TokenStore` should
call (the record, versioned, is mapped by :mod:`mcpclient._internal.wire.records`).
Where they are kept is :mod:`mcpclient.auth.tokens` (which re-exports both).
"""

from __future__ import annotations

import math
import time
from typing import Any, NoReturn

import attrs

from mcpclient._core.checks import fail
from mcpclient._core.limits import normalize_message
from mcpclient._internal.wire import records
from mcpclient._internal.wire.oauth import MAX_VALUE_CHARS as MAX_VALUE_CHARS  # noqa: PLC0414

__all__ = ["AUTH_METHODS", "ClientInfo", "TokenSet"]

#: Token endpoint client authentication methods this package speaks.
AUTH_METHODS = frozenset({"client_secret_basic", "client_secret_post", "none", "private_key_jwt"})
#: Token types a :class:`TokenSet` may carry (RFC 6750 and RFC 9449 spellings).
TOKEN_TYPES = ("Bearer", "DPoP")
#: The format version written into stored JSON.
FORMAT_VERSION = records.FORMAT_VERSION


def _text(value: str, limit: int = 120) -> str:
    """Server-chosen text (a scope list, a client id) made safe for a repr."""
    return normalize_message(value, limit)


def _refuse_pickle(kind: str) -> NoReturn:
    # Pickling is a side door around the redacted repr: a pickled value lands
    # in caches, queues and crash dumps. Persisting is an explicit to_json().
    raise TypeError(f"{kind} holds secrets and does not pickle; use to_json() in a token store")


def _secret_text(inst: Any, attr: Any, value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise fail(inst, attr.name, "must be a non-empty str")
    if len(value) > MAX_VALUE_CHARS:
        raise fail(inst, attr.name, f"must be at most {MAX_VALUE_CHARS} characters")


def _optional_secret_text(inst: Any, attr: Any, value: Any) -> None:
    if value is not None:
        _secret_text(inst, attr, value)


def _header_token(inst: Any, attr: Any, value: Any) -> None:
    _secret_text(inst, attr, value)
    # It is sent as "Authorization: Bearer <token>": a space, CR or LF (or any
    # non-ASCII) would split the header or smuggle another one (RFC 6750 §2.1).
    if not all(0x21 <= ord(c) <= 0x7E for c in value):
        raise fail(inst, attr.name, "must be visible ASCII without spaces")


def _form_token(inst: Any, attr: Any, value: Any) -> None:
    if value is None:
        return
    _secret_text(inst, attr, value)
    if not all(0x20 <= ord(c) <= 0x7E for c in value):  # RFC 6749 A.17: VSCHAR
        raise fail(inst, attr.name, "must be printable ASCII")


def _plain_text(inst: Any, attr: Any, value: Any) -> None:
    if not isinstance(value, str):
        raise fail(inst, attr.name, f"must be a str, got {type(value).__name__}")
    if len(value) > MAX_VALUE_CHARS:
        raise fail(inst, attr.name, f"must be at most {MAX_VALUE_CHARS} characters")


def _token_type(inst: Any, attr: Any, value: Any) -> None:
    if value not in TOKEN_TYPES:
        raise fail(inst, attr.name, "must be 'Bearer' or 'DPoP'")


def _expires_at(inst: Any, attr: Any, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not _finite(value):
        raise fail(inst, attr.name, "must be a finite number of epoch seconds or None")


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond any float (10**400): no epoch time either
        return False


def _scopes(inst: Any, attr: Any, value: Any) -> None:
    for scope in value:
        if not isinstance(scope, str) or not scope or any(c.isspace() for c in scope):
            raise fail(inst, attr.name, "must hold non-empty scope strings without whitespace")


def _grant_types(inst: Any, attr: Any, value: Any) -> None:
    if not isinstance(value, tuple) or not all(
        isinstance(grant, str) and 0 < len(grant) <= MAX_VALUE_CHARS for grant in value
    ):
        raise fail(inst, attr.name, "must hold non-empty grant type strings")


def _auth_method(inst: Any, attr: Any, value: Any) -> None:
    if value not in AUTH_METHODS:
        raise fail(inst, attr.name, f"must be one of {', '.join(sorted(AUTH_METHODS))}")


def _to_tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list | tuple) else value


@attrs.frozen(repr=False)
class TokenSet:
    """The tokens a token endpoint granted for one (issuer, resource) pair.

    ``repr`` and ``str`` show the token type, scopes and time to expiry, never
    a token. Pickling is refused; a store calls :meth:`to_json` explicitly.

    Example::

        if tokens.expired():
            tokens = endpoint.refresh(tokens, deadline=deadline)

    Attributes:
        access_token: the access token (secret).
        token_type: ``"Bearer"`` or ``"DPoP"`` (bound to a DPoP key).
        refresh_token: the refresh token (secret), or None.
        expires_at: when the access token expires, ``time.time()`` epoch
            seconds; None when the server gave no lifetime.
        scopes: the scopes granted (or requested, when the server did not say).
        issuer: the authorization server that issued the tokens.
        resource: the protected resource (RFC 8707) they are for; ``""`` when
            no resource was named (2025-03-26 servers).

    Thread safety: immutable.
    """

    access_token: str = attrs.field(validator=_header_token)
    token_type: str = attrs.field(default="Bearer", kw_only=True, validator=_token_type)
    refresh_token: str | None = attrs.field(default=None, kw_only=True, validator=_form_token)
    expires_at: float | None = attrs.field(default=None, kw_only=True, validator=_expires_at)
    scopes: tuple[str, ...] = attrs.field(
        default=(), kw_only=True, converter=_to_tuple, validator=_scopes
    )
    issuer: str = attrs.field(kw_only=True, validator=_plain_text)
    resource: str = attrs.field(default="", kw_only=True, validator=_plain_text)

    def expired(self, *, skew: float = 30.0, at: float | None = None) -> bool:
        """Whether the access token is expired, or will be within ``skew`` seconds.

        Args:
            skew: seconds of margin (clock drift, request time).
            at: the epoch time to judge at; default now (``time.time()``).
        """
        if self.expires_at is None:
            return False
        when = time.time() if at is None else at
        return when >= self.expires_at - skew

    def to_json(self) -> dict[str, Any]:
        """The JSON object a store persists (holds the secrets: handle with care)."""
        return records.unstructure_record(self)

    @classmethod
    def from_json(cls, data: Any) -> TokenSet:
        """Rebuild a token set from :meth:`to_json` output.

        Raises:
            AuthError: ``auth_failed``: the data is not a token set this
                package wrote (the message names the field, never a value).
        """
        return records.structure_record(data, cls, kind="token set")

    def __repr__(self) -> str:
        if self.expires_at is None:
            expiry = "never"
        else:
            expiry = f"{max(0, round(self.expires_at - time.time()))}s"
        refresh = "yes" if self.refresh_token else "no"
        scopes = _text(" ".join(self.scopes))
        return (
            f"<TokenSet {self.token_type} scopes={scopes!r} expires_in={expiry} refresh={refresh}>"
        )

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        _refuse_pickle("TokenSet")

    def __copy__(self) -> TokenSet:
        return self

    def __deepcopy__(self, memo: Any) -> TokenSet:
        return self


def _client_secret(inst: Any, attr: Any, value: Any) -> None:
    _optional_secret_text(inst, attr, value)
    method = inst.auth_method
    if method in ("client_secret_basic", "client_secret_post") and value is None:
        raise fail(inst, attr.name, f"is required by token endpoint auth method {method}")


@attrs.frozen(repr=False)
class ClientInfo:
    """A client identity registered with one authorization server.

    ``repr`` shows the client id and method, never the secret; pickling is
    refused (persist with :meth:`to_json`).

    Attributes:
        client_id: the OAuth ``client_id``.
        client_secret: the client secret (secret), or None (public clients,
            ``private_key_jwt``).
        auth_method: how the token endpoint authenticates this client:
            ``client_secret_basic``, ``client_secret_post``, ``none`` or
            ``private_key_jwt``.
        issuer: the authorization server this identity belongs to.
        grant_types: the grant types it was registered for (dynamic
            registration: what the server answered, else what was asked);
            ``()`` when unknown (a configured client, a client ID metadata
            document, a registration stored before this field existed).

    Thread safety: immutable.
    """

    client_id: str = attrs.field(validator=_secret_text)  # not secret, but bounded alike
    # Declared before client_secret: the secret's validator reads the method.
    auth_method: str = attrs.field(default="none", kw_only=True, validator=_auth_method)
    client_secret: str | None = attrs.field(default=None, kw_only=True, validator=_client_secret)
    issuer: str = attrs.field(kw_only=True, validator=_plain_text)
    grant_types: tuple[str, ...] = attrs.field(
        default=(),
        kw_only=True,
        converter=_to_tuple,
        validator=_grant_types,
        metadata={records.ADDED: True},
    )

    def to_json(self) -> dict[str, Any]:
        """The JSON object a store persists (holds the secret: handle with care)."""
        return records.unstructure_record(self)

    @classmethod
    def from_json(cls, data: Any) -> ClientInfo:
        """Rebuild a registration from :meth:`to_json` output.

        Raises:
            AuthError: ``auth_failed``: the data is malformed.
        """
        return records.structure_record(data, cls, kind="client registration")

    def __repr__(self) -> str:
        secret = "yes" if self.client_secret else "no"
        return (
            f"<ClientInfo client_id={_text(self.client_id)!r} auth_method={self.auth_method}"
            f" issuer={_text(self.issuer)!r} secret={secret}>"
        )

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        _refuse_pickle("ClientInfo")

    def __copy__(self) -> ClientInfo:
        return self

    def __deepcopy__(self, memo: Any) -> ClientInfo:
        return self
