"""The secrets of a definition, for redaction (:mod:`mcpclient._core.redaction`).

A server may quote back what it was sent; these are the configured values it
could quote that must never reach a message:

* HTTP: every configured header value (the whole value and, for
  ``Scheme credentials`` values, the credentials), the URL's user and
  password, every query value, path segments that look like keys (long, or
  letters mixed with digits), the proxy's user and password; a static bearer
  token or an auth provider's tokens are noted as they are sent (by the HTTP
  layer), an OAuth provider registers its own client secret;
* stdio: the values of environment variables whose names say they hold a
  secret (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ...).

Threads, locks: none (pure functions of an immutable definition).
Shutdown: nothing to stop.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qsl, unquote, urlsplit

from mcpclient._core.redaction import MIN_SECRET_CHARS, Redactor
from mcpclient.definition import Definition
from mcpclient.transports import LegacySSETransport, StdioTransport, StreamableHTTPTransport

__all__ = ["redactor_for", "url_secrets"]

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|AUTH|SESSION|COOKIE", re.I)
# A header value in an HTTP authentication scheme's form: its credentials.
_AUTH_SCHEME = re.compile(r"(?:Bearer|Basic|Token|Digest|DPoP|ApiKey|Key)\s+(\S+)", re.I)
# A path segment that looks like a key: long, or letters mixed with digits.
_LONG_SEGMENT = 16


def redactor_for(definition: Definition) -> Redactor:
    """A :class:`Redactor` of ``definition``'s configured secrets (register it to use it)."""
    return Redactor(_secrets(definition))


def _secrets(definition: Definition) -> Iterator[str]:
    transport = definition.transport
    if isinstance(transport, StreamableHTTPTransport | LegacySSETransport):
        for name, value in transport.headers or ():
            # Only what is a credential: a header named like one (Authorization,
            # X-Api-Key, ...) or a value in an auth scheme's form. An ordinary
            # header value ("X-Request-Source: skills") is no secret, and
            # blanking it out would garble every message that names the word.
            scheme = _AUTH_SCHEME.match(value)
            if _SECRET_NAME.search(name) or scheme:
                yield value
            if scheme:
                yield scheme.group(1)
        yield from url_secrets(transport.url)
        if transport.proxy:
            yield from url_secrets(transport.proxy)
    elif isinstance(transport, StdioTransport):
        for name, value in transport.env_mapping.items():
            if _SECRET_NAME.search(name):
                yield value


def url_secrets(url: str) -> Iterator[str]:
    """What in ``url`` may be a credential: userinfo, query values, key-like path segments."""
    try:
        parts = urlsplit(url)
        username, password = parts.username, parts.password
    except ValueError:
        return
    for value in (username, password):
        if value:
            yield value
            yield unquote(value)
    for _name, value in parse_qsl(parts.query, keep_blank_values=False):
        yield value
    for raw in parts.path.split("/"):
        segment = unquote(raw)
        if len(segment) >= _LONG_SEGMENT or (
            len(segment) >= MIN_SECRET_CHARS
            and any(c.isdigit() for c in segment)
            and any(c.isalpha() for c in segment)
        ):
            yield segment
