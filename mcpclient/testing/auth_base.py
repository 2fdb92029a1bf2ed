"""The building blocks every part of the test authorization server shares.

Replies and OAuth error answers, the registered-client record, the grant
constants, two URL and key helpers, and the protocols through which the
endpoint modules (:mod:`.auth_grants`, :mod:`.auth_clients`,
:mod:`.auth_client_auth`, :mod:`.auth_idp`) see their
:class:`~mcpclient.testing.auth_server.AuthServer`. Nothing here is meant to
be used directly.
"""

from __future__ import annotations

import dataclasses
import hmac
import ipaddress
import json
from collections.abc import Mapping
from typing import Any, Protocol
from urllib.parse import urlsplit

import jwt
from cryptography.hazmat.primitives import serialization

GRANT_CODE = "authorization_code"
GRANT_REFRESH = "refresh_token"
GRANT_CLIENT_CREDENTIALS = "client_credentials"
GRANT_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
GRANT_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG_PROFILE = "urn:ietf:params:oauth:grant-profile:id-jag"
ID_JAG_TYP = "oauth-id-jag+jwt"
NO_STORE = (("Cache-Control", "no-store"),)


@dataclasses.dataclass(frozen=True)
class Reply:
    """One HTTP answer of the authorization server."""

    status: int
    body: bytes
    content_type: str | None
    headers: tuple[tuple[str, str], ...] = ()
    error: str | None = None  # the OAuth error code, for the record

    @classmethod
    def text(cls, status: int, text: str, *, error: str | None = None) -> Reply:
        """A plain-text page."""
        return cls(status, text.encode("utf-8"), "text/plain; charset=utf-8", (), error)

    @classmethod
    def redirect(cls, location: str, *, error: str | None = None) -> Reply:
        """A 302 to ``location``."""
        return cls(302, b"", None, (("Location", location),), error)

    def with_headers(self, headers: tuple[tuple[str, str], ...]) -> Reply:
        """This reply with ``headers`` added."""
        return dataclasses.replace(self, headers=self.headers + headers)


def json_reply(status: int, document: Any, *, headers: tuple[tuple[str, str], ...] = ()) -> Reply:
    """A JSON answer (``error`` recorded from the document)."""
    error = document.get("error") if isinstance(document, dict) else None
    body = json.dumps(document).encode("utf-8")
    return Reply(status, body, "application/json", headers, error)


class OAuthError(Exception):
    """An RFC 6749 §5.2 error answer (``invalid_client`` 401, others 400 unless given)."""

    def __init__(
        self,
        error: str,
        description: str,
        *,
        status: int | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> None:
        """Keep the answer's parts."""
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description
        self.status = status if status is not None else 401 if error == "invalid_client" else 400
        self.headers = headers

    def reply(self) -> Reply:
        """The JSON error answer."""
        document = {"error": self.error, "error_description": self.description}
        return json_reply(self.status, document, headers=NO_STORE + self.headers)


@dataclasses.dataclass(frozen=True)
class RegisteredClient:
    """A client the server knows.

    Attributes:
        client_id: Its id (a URL for a client ID metadata document).
        secret: Its secret (the two ``client_secret_*`` methods), else None.
        auth_method: The token endpoint auth method it must use.
        public_key: The key that verifies its ``private_key_jwt`` assertions.
        redirect_uris: Registered redirect URIs; None accepts any loopback or https one.
        grant_types: Allowed grants; None allows every grant.
        source: ``"preregistered"``, ``"dcr"`` or ``"cimd"``.
        application_type: What its registration said (DCR/CIMD), if anything.
        metadata: The registration request or metadata document as received.
    """

    client_id: str
    secret: str | None = dataclasses.field(repr=False)
    auth_method: str
    public_key: Any = dataclasses.field(repr=False)
    redirect_uris: tuple[str, ...] | None
    grant_types: tuple[str, ...] | None
    source: str
    application_type: str | None = None
    metadata: Mapping[str, Any] = dataclasses.field(default_factory=dict, repr=False)


def is_loopback_http(url: str) -> bool:
    """True for an ``http`` URL whose host is a loopback address or ``localhost``."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return False
    if parts.scheme != "http":
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_public_key(value: Any) -> Any:
    """A verification key from PEM (public or private), a JWK dict, or a key object."""
    if isinstance(value, Mapping):
        key: Any = jwt.PyJWK(dict(value)).key
    elif isinstance(value, str | bytes):
        data = value.encode("ascii") if isinstance(value, str) else value
        if b"PRIVATE KEY" in data:
            key = serialization.load_pem_private_key(data, password=None)
        else:
            key = serialization.load_pem_public_key(data)
    else:
        key = value
    # A private key verifies through its public half; never keep the private one.
    return key.public_key() if hasattr(key, "private_bytes") else key


def constant_equal(a: str, b: str) -> bool:
    """``a == b`` in constant time (secrets, PKCE verifiers)."""
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


def header_values(headers: list[tuple[str, str]], name: str) -> list[str]:
    """Every value of header ``name`` (case-insensitive), in order."""
    return [value for key, value in headers if key.lower() == name.lower()]


class ServerKnobs(Protocol):
    """The knobs of :class:`~mcpclient.testing.auth_server.AuthServerConfig` the endpoints read."""

    @property
    def anonymous_jwt_bearer(self) -> bool: ...
    @property
    def cimd(self) -> bool: ...
    @property
    def dcr_application_type(self) -> str | None: ...
    @property
    def default_audience(self) -> str | None: ...
    @property
    def device(self) -> bool: ...
    @property
    def device_interval(self) -> float | None: ...
    @property
    def device_lifetime(self) -> float: ...
    @property
    def dpop(self) -> str: ...
    @property
    def dpop_nonce(self) -> bool: ...
    @property
    def idp(self) -> bool: ...
    @property
    def jag_client_id(self) -> str | None: ...
    @property
    def refresh_rotation(self) -> bool: ...
    @property
    def refresh_tokens(self) -> str: ...
    @property
    def require_resource(self) -> bool: ...
    @property
    def subject(self) -> str: ...
    @property
    def token_error(self) -> str | None: ...
    @property
    def token_lifetime(self) -> float | None: ...
    @property
    def withheld_scopes(self) -> tuple[str, ...]: ...


class IssuingServer(Protocol):
    """What the endpoints need of their :class:`~mcpclient.testing.auth_server.AuthServer`.

    A protocol, so that the endpoint modules need not import the server
    module that imports them.
    """

    @property
    def config(self) -> ServerKnobs: ...
    @property
    def issuer(self) -> str: ...
    @property
    def token_endpoint(self) -> str: ...
    @property
    def token_secret(self) -> bytes: ...
    @property
    def public_jwk(self) -> dict[str, str]: ...
    def sign(self, claims: Mapping[str, Any], *, typ: str) -> str: ...
