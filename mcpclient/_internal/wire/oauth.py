"""The OAuth documents: what authorization servers and protected resources send.

Each document maps through a cattrs converter to an attrs value, and the
leniency of every field is written once, in its hook:

* RFC 9728 protected resource metadata -> :class:`ProtectedResource`: a
  ``resource`` that is not a string becomes ``""`` (it then covers nothing);
  lists keep their non-empty strings of at most 256 characters, the first 64.
* RFC 8414 / OpenID Connect Discovery metadata -> :class:`ServerMetadata`:
  lists as above (``code_challenge_methods_supported`` absent stays None, a
  distinct case for the PKCE rule); flags are true only when ``true``;
  endpoints must be strings and pass the caller's URL check;
  ``token_endpoint`` is required.
* An RFC 7591 registration response -> :class:`Registration`: ``client_id``
  required, printable, at most 2048 characters; an empty or non-string
  ``client_secret`` or ``token_endpoint_auth_method`` is absent.
* An RFC 6749 §5.1 token response -> :class:`TokenReply` (RFC 8693 exchange:
  :class:`ExchangeReply`): tokens bounded and header-safe, ``expires_in`` a
  non-negative number (a digit string accepted) cut to a year, ``scope`` a
  string split into a tuple.
* An RFC 6749 §5.2 / RFC 7591 §3.2.2 error response -> :class:`ErrorReply`,
  never refused (anything unusable is absent).

A refused document raises :class:`~mcpclient.errors.AuthError`
(``auth_failed``) naming the document and the field, never a value (tokens
and secrets are values): cattrs' own exceptions are translated by
:func:`~mcpclient._internal.wire.errors.auth_error` and never escape.
The decisions that need the request (the resource a document must cover,
the issuer it must name, the token types acceptable) stay with the callers
in :mod:`mcpclient.auth`.

Thread safety: converters are built once (cached) and never changed; the
values are immutable.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import cattrs
from cattrs.errors import BaseValidationError
from cattrs.gen import make_dict_structure_fn, override

from mcpclient._internal.wire.errors import FieldError, Messages, structure

__all__ = [
    "MAX_CLIENT_ID",
    "MAX_EXPIRES_IN",
    "MAX_ITEM_CHARS",
    "MAX_LIST_ITEMS",
    "MAX_VALUE_CHARS",
    "TOKEN_TYPE_ID_JAG",
    "ErrorReply",
    "ExchangeReply",
    "ProtectedResource",
    "Registration",
    "ServerMetadata",
    "TokenReply",
    "URLCheck",
    "document_issuer",
    "error_reply",
    "exchange_reply",
    "protected_resource",
    "registration",
    "server_metadata",
    "token_reply",
]

#: Most entries kept from a list in a metadata document.
MAX_LIST_ITEMS = 64
#: Longest string kept from a list in a metadata document.
MAX_ITEM_CHARS = 256
#: Longest client_id accepted from a registration (a CIMD URL may be this long).
MAX_CLIENT_ID = 2048
#: Bound on any one token, secret or URL, in characters.
MAX_VALUE_CHARS = 32 * 1024
#: ``expires_in`` above this (one year, seconds) is cut to it.
MAX_EXPIRES_IN = 365 * 24 * 3600
#: Server text (an error code or description) kept for the caller, which
#: scrubs what it sent out of it before cutting it to a message's length.
_MAX_SERVER_TEXT = 64 * 1024
_MAX_TOKEN_TYPE = 256
TOKEN_TYPE_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"

#: Checks one URL a document names: ``check(url, what)`` raises AuthError to
#: refuse it (``what`` names it: "token endpoint"). Hashable: converters are
#: cached per check.
URLCheck = Callable[[str, str], None]


# --- the values ---


@attrs.frozen
class ProtectedResource:
    """RFC 9728 protected resource metadata, as far as the client uses it.

    Attributes:
        resource: the resource identifier the document claims, verbatim (the
            MCP server URL, or a same-origin path prefix of it): the RFC 8707
            ``resource`` of every authorization and token request.
        authorization_servers: issuer URLs, at least one (not yet checked).
        scopes_supported: the scopes the resource knows (may be empty).
        url: where the document was fetched.
    """

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...]
    url: str


@attrs.frozen
class ServerMetadata:
    """Authorization server metadata (RFC 8414 / OpenID Connect Discovery).

    Absent list fields are ``()``, absent endpoints None; every endpoint kept
    passed :func:`~mcpclient.auth._net.check_url`.

    Attributes:
        issuer: the issuer identifier (exactly the one the document was
            fetched for).
        code_challenge_methods_supported: None when the field is absent (a
            distinct case for the PKCE rule), else the listed methods.
        legacy_defaults: True when built from the 2025-03-26 default
            endpoints (no metadata document).
    """

    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str
    # Everything else may be absent from a document: keyword-only, absent by default.
    registration_endpoint: str | None = attrs.field(default=None, kw_only=True)
    # RFC 8628 §4: where a device authorization grant starts (None: not offered).
    device_authorization_endpoint: str | None = attrs.field(default=None, kw_only=True)
    scopes_supported: tuple[str, ...] = attrs.field(default=(), kw_only=True)
    code_challenge_methods_supported: tuple[str, ...] | None = attrs.field(
        default=None, kw_only=True
    )
    token_endpoint_auth_methods_supported: tuple[str, ...] = attrs.field(default=(), kw_only=True)
    token_endpoint_auth_signing_alg_values_supported: tuple[str, ...] = attrs.field(
        default=(), kw_only=True
    )
    grant_types_supported: tuple[str, ...] = attrs.field(default=(), kw_only=True)
    authorization_response_iss_parameter_supported: bool = attrs.field(default=False, kw_only=True)
    client_id_metadata_document_supported: bool = attrs.field(default=False, kw_only=True)
    dpop_signing_alg_values_supported: tuple[str, ...] = attrs.field(default=(), kw_only=True)
    authorization_grant_profiles_supported: tuple[str, ...] = attrs.field(default=(), kw_only=True)
    legacy_defaults: bool = attrs.field(default=False, kw_only=True)


@attrs.frozen(repr=False)
class Registration:
    """What an RFC 7591 registration response granted (``repr`` hides the secret).

    Attributes:
        client_id: the ``client_id`` (printable, at most 2048 characters).
        client_secret: the ``client_secret``, or None (absent or empty).
        token_endpoint_auth_method: the method the server registered, or None
            (absent or not a string); not yet checked against the methods
            this client implements.
        grant_types: the grant types the server registered (RFC 7591 §3.2.1),
            None when absent, ``()`` when not a list (its non-strings are dropped).
    """

    client_id: str
    client_secret: str | None = None
    token_endpoint_auth_method: str | None = None
    grant_types: tuple[str, ...] | None = None

    def __repr__(self) -> str:
        return f"<Registration method={self.token_endpoint_auth_method!r}>"


@attrs.frozen(repr=False)
class TokenReply:
    """A successful token response (RFC 6749 §5.1); ``repr`` hides the tokens.

    Attributes:
        access_token: visible ASCII, no space, at most 32 KiB.
        refresh_token: printable ASCII, at most 32 KiB, or None (absent or empty).
        token_type: as the server spelled it (``"Bearer"`` when absent); the
            caller decides which types it accepts.
        expires_in: seconds, at most a year, or None (absent: no known expiry).
        scope: the granted scopes, or None (absent: the scopes requested).
    """

    access_token: str
    refresh_token: str | None = None
    token_type: str = "Bearer"
    expires_in: float | None = None
    scope: tuple[str, ...] | None = None

    def __repr__(self) -> str:
        return f"<TokenReply {self.token_type[:32]!r} expires_in={self.expires_in}>"


@attrs.frozen(repr=False)
class ExchangeReply:
    """An RFC 8693 token exchange reply that issued an ID-JAG (``repr`` hides it).

    Attributes:
        issued_token_type: always :data:`TOKEN_TYPE_ID_JAG` (anything else is refused).
        access_token: the ID-JAG.
    """

    # First: a reply of another token type is refused as such, whatever its token.
    issued_token_type: str
    access_token: str

    def __repr__(self) -> str:
        return "<ExchangeReply id-jag>"


@attrs.frozen
class ErrorReply:
    """An OAuth error response (RFC 6749 §5.2, RFC 7591 §3.2.2).

    Attributes:
        error: the error code (a non-empty string), or None.
        error_description: the description, or None; server text, at most
            64 KiB: scrub and bound it before showing it.
    """

    error: str | None = None
    error_description: str | None = None


# --- hooks ---


def _strings(value: object, _: object = None) -> tuple[str, ...]:
    """The strings of a JSON list (others dropped, bounded); () when not a list."""
    if not isinstance(value, list):
        return ()
    kept = (v for v in value if isinstance(v, str) and 0 < len(v) <= MAX_ITEM_CHARS)
    return tuple(itertools.islice(kept, MAX_LIST_ITEMS))


def _optional_strings(value: object, _: object) -> tuple[str, ...] | None:
    return None if value is None else _strings(value)


def _flag(value: object, _: object) -> bool:
    return value is True


def _resource(value: object, _: object) -> str:
    # Not a string (or absurdly long): it covers no server URL, so the
    # caller's coverage check refuses it with its own message.
    return value if isinstance(value, str) and len(value) <= MAX_VALUE_CHARS else ""


def _own_text(value: object, _: object) -> str:
    """A string this client supplied (the URL it fetched)."""
    if not isinstance(value, str):
        raise FieldError("the {kind}'s {field} is not a string")
    return value


def _issuer(value: object, _: object) -> str:
    if not isinstance(value, str) or not value:
        raise FieldError("the authorization server metadata of {who} names no issuer")
    return value


def _endpoint(check: URLCheck, name: str, *, required: bool) -> Callable[[object, object], Any]:
    what = name.replace("_", " ")
    kind = "authorization server metadata"

    def hook(value: object, _: object) -> str | None:
        if value is None:
            if required:
                raise FieldError("the authorization server metadata of {who} has no " + name)
            return None
        if not isinstance(value, str):
            raise FieldError(f"the {kind} has a {name} that is not a string")
        check(value, what)
        return value

    return hook


def _client_id(value: object, _: object) -> str:
    if not isinstance(value, str) or not value:
        raise FieldError("client registration at {who} returned no client_id")
    if len(value) > MAX_CLIENT_ID or not value.isprintable():
        raise FieldError("the registration at {who} is unusable: a malformed client_id")
    return value


def _some_text(value: object, _: object) -> str | None:
    """A non-empty string, else absent."""
    return value if isinstance(value, str) and value else None


def _server_text(value: object, _: object) -> str | None:
    """A non-empty string cut to 64 KiB (a message shows far less), else absent."""
    return value[:_MAX_SERVER_TEXT] if isinstance(value, str) and value else None


def _visible_ascii(value: str, *, space: bool) -> bool:
    low = 0x20 if space else 0x21
    return all(low <= ord(c) <= 0x7E for c in value)


def _token(name: str, *, required: bool) -> Callable[[object, object], Any]:
    # An access token goes into a header: a space, CR or LF would split or
    # smuggle one. A refresh token only goes into a form (RFC 6749 A.17: VSCHAR).
    space = name == "refresh_token"
    reply = "the {what} reply"

    def hook(value: object, _: object) -> str | None:
        if value is None or (value == "" and not required):
            if required:
                raise FieldError(f"{reply} has no {name}")
            return None
        if not isinstance(value, str) or not value:
            raise FieldError(f"{reply}'s {name} is not a non-empty string")
        if len(value) > MAX_VALUE_CHARS:
            raise FieldError(f"{reply}'s {name} is longer than {MAX_VALUE_CHARS} characters")
        if not _visible_ascii(value, space=space):
            raise FieldError(f"{reply}'s {name} holds characters a token may not hold")
        return value

    return hook


def _token_type(value: object, _: object) -> str:
    if isinstance(value, str):
        return value[:_MAX_TOKEN_TYPE]
    raise FieldError(
        "the {what} issued an unsupported token type {kind!r}", kind=type(value).__name__
    )


def _expires_in(value: object, _: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):
        digits = value.strip()
        if digits.isascii() and digits.isdigit():  # some servers send the number as a string
            value = int(digits) if len(digits) <= 18 else MAX_EXPIRES_IN
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (isinstance(value, float) and not math.isfinite(value))
    ):
        raise FieldError("the {what} reply's expires_in is not a number")
    if value < 0:
        raise FieldError("the {what} reply's expires_in is negative")
    # Compared before converting: an integer too large for a float is a year too.
    return float(min(value, MAX_EXPIRES_IN))


def _scope(value: object, _: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise FieldError("the {what} reply's scope is not a string")
    return tuple(value.split())


def _id_jag(value: object, _: object) -> str:
    if value != TOKEN_TYPE_ID_JAG:
        raise FieldError("the {what} did not issue an ID-JAG (issued_token_type differs)")
    return TOKEN_TYPE_ID_JAG


# --- converters ---


def _converter() -> cattrs.Converter:
    # Extra fields are ignored (every RFC here allows them); detailed
    # validation names the field of every problem.
    return cattrs.Converter(detailed_validation=True, forbid_extra_keys=False)


def _register(
    converter: cattrs.Converter,
    cls: type[Any],
    *,
    absent: Mapping[str, object] | None = None,
    **hooks: Any,
) -> None:
    """Structure ``cls`` with a hook per field (None: never read from a document).

    ``absent`` gives what a missing field of ``cls`` without a default means.
    """
    fields = {
        name: override(omit=True) if hook is None else override(struct_hook=hook)
        for name, hook in hooks.items()
    }
    # cattrs types **kwargs as the union of its flags and overrides: mypy sees a flag.
    inner = make_dict_structure_fn(cls, converter, **fields)  # type: ignore[arg-type]
    if not absent:
        converter.register_structure_hook(cls, inner)
        return
    defaults = dict(absent)

    def hook(doc: Mapping[str, Any], kind: Any) -> Any:
        return inner({**defaults, **doc}, kind)

    converter.register_structure_hook(cls, hook)


@functools.cache
def _documents() -> cattrs.Converter:
    """The converter of every document but the authorization server metadata."""
    converter = _converter()
    _register(
        converter,
        ProtectedResource,
        absent={"resource": "", "authorization_servers": (), "scopes_supported": ()},
        resource=_resource,
        authorization_servers=_strings,
        scopes_supported=_strings,
        url=_own_text,
    )
    _register(
        converter,
        Registration,
        client_id=_client_id,
        client_secret=_some_text,
        token_endpoint_auth_method=_some_text,
        grant_types=_optional_strings,
    )
    _register(
        converter,
        TokenReply,
        access_token=_token("access_token", required=True),
        refresh_token=_token("refresh_token", required=False),
        token_type=_token_type,
        expires_in=_expires_in,
        scope=_scope,
    )
    _register(
        converter,
        ExchangeReply,
        issued_token_type=_id_jag,
        access_token=_token("access_token", required=True),
    )
    _register(converter, ErrorReply, error=_server_text, error_description=_server_text)
    return converter


@functools.lru_cache(maxsize=16)
def _metadata(check: URLCheck) -> cattrs.Converter:
    """The metadata converter for one URL check (in practice one per URL policy)."""
    converter = _converter()
    lists = {
        name: _strings
        for name in (
            "scopes_supported",
            "token_endpoint_auth_methods_supported",
            "token_endpoint_auth_signing_alg_values_supported",
            "grant_types_supported",
            "dpop_signing_alg_values_supported",
            "authorization_grant_profiles_supported",
        )
    }
    _register(
        converter,
        ServerMetadata,
        absent={"authorization_endpoint": None},
        issuer=_issuer,
        token_endpoint=_endpoint(check, "token_endpoint", required=True),
        authorization_endpoint=_endpoint(check, "authorization_endpoint", required=False),
        registration_endpoint=_endpoint(check, "registration_endpoint", required=False),
        device_authorization_endpoint=_endpoint(
            check, "device_authorization_endpoint", required=False
        ),
        code_challenge_methods_supported=_optional_strings,
        authorization_response_iss_parameter_supported=_flag,
        client_id_metadata_document_supported=_flag,
        legacy_defaults=None,  # never read from a document
        **lists,
    )
    return converter


# --- the documents ---


def document_issuer(doc: object) -> str | None:
    """The ``issuer`` a metadata document names (None when absent or not a string).

    Compared with the issuer fetched before the document is structured: the
    document of another issuer is discarded unread (mix-up defense).
    """
    issuer = doc.get("issuer") if isinstance(doc, Mapping) else None
    return issuer if isinstance(issuer, str) else None


_KIND_PRM = "protected resource metadata"
_PRM = Messages("the {kind} is not a JSON object", "the {kind}'s {field} is malformed")
_METADATA = Messages(
    "the {kind} of {who} is not a JSON object",
    "the {kind} of {who} has a malformed {field}",
    {"issuer": "the {kind} of {who} names no issuer", "*": "the {kind} of {who} has no {field}"},
)
_REGISTRATION = Messages(
    "client registration at {who} returned no client_id",
    "the registration at {who} is unusable: a malformed {field}",
    {"*": "client registration at {who} returned no {field}"},
)
_TOKEN = Messages(
    "the {what} answered HTTP 200 without a JSON object",
    "the {what} reply's {field} is malformed",
    {"*": "the {what} reply has no {field}"},
)
_EXCHANGE = attrs.evolve(
    _TOKEN,
    missing={
        "issued_token_type": "the {what} did not issue an ID-JAG (issued_token_type differs)",
        "*": "the {what} reply has no {field}",
    },
)


def protected_resource(doc: object, *, url: str) -> ProtectedResource:
    """RFC 9728 metadata fetched from ``url``; never refused for a field.

    Raises:
        AuthError: ``auth_failed`` when ``doc`` is not a JSON object.
    """
    if isinstance(doc, Mapping):
        doc = {**doc, "url": url}  # where the document was found, not one of its fields
    return structure(_documents(), doc, ProtectedResource, _PRM, kind=_KIND_PRM)


def server_metadata(doc: object, *, check_url: URLCheck, who: str) -> ServerMetadata:
    """RFC 8414 / OIDC metadata, each endpoint passed through ``check_url``.

    ``who`` is the issuer as shown in messages (bounded).

    Raises:
        AuthError: ``auth_failed``: not a JSON object, no issuer, no
            ``token_endpoint``, an endpoint that is not a string or that
            ``check_url`` refuses.
    """
    kind = "authorization server metadata"
    return structure(_metadata(check_url), doc, ServerMetadata, _METADATA, kind=kind, who=who)


def registration(doc: object, *, who: str) -> Registration:
    """An RFC 7591 registration response from the server ``who`` (shown bounded).

    Raises:
        AuthError: ``auth_failed``: "returned no client_id" (absent, empty,
            not a string, or ``doc`` not an object); "unusable: a malformed
            client_id" (too long, or not printable).
    """
    return structure(_documents(), doc, Registration, _REGISTRATION, who=who)


def error_reply(body: object) -> ErrorReply:
    """The ``error`` and ``error_description`` of any reply body; never raises."""
    if not isinstance(body, Mapping):
        return ErrorReply()
    try:
        return _documents().structure(body, ErrorReply)
    except (BaseValidationError, FieldError):  # pragma: no cover - every hook accepts all
        return ErrorReply()


def token_reply(body: object, *, what: str) -> TokenReply:
    """A successful token response from the ``what`` ("token endpoint").

    Raises:
        AuthError: ``auth_failed``: not a JSON object, no or a malformed
            ``access_token`` or ``refresh_token``, a ``token_type`` that is
            not a string, a malformed ``expires_in`` or ``scope``.
    """
    return structure(_documents(), body, TokenReply, _TOKEN, what=what)


def exchange_reply(body: object, *, what: str) -> ExchangeReply:
    """An RFC 8693 exchange reply from the ``what``, which must have issued an ID-JAG.

    Raises:
        AuthError: ``auth_failed``: not a JSON object, another (or no)
            ``issued_token_type``, no or a malformed ``access_token``.
    """
    return structure(_documents(), body, ExchangeReply, _EXCHANGE, what=what)
