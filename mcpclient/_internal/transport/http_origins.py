"""What may be sent where: origins and header validity.

An origin is ``(scheme, host, port)`` with the default port filled in; it is
also the only form of a URL that messages, logs and reprs ever show (never a
path, query or userinfo). A header is sent only with a token name and a value
free of CR, LF, NUL and other controls, so no caller or server-supplied value
can split a request.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from mcpclient.errors import ConfigError

__all__ = ["check_header", "origin_key", "origin_of", "show_origin"]

_DEFAULT_PORTS = {"http": 80, "https": 443}
_TOKEN_CHARS = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)


def origin_key(url: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` with the default port filled in; None if unusable."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    return scheme, host, port if port is not None else _DEFAULT_PORTS[scheme]


def show_origin(key: tuple[str, str, int]) -> str:
    """``scheme://host[:port]`` of an :func:`origin_key`, the default port left out."""
    scheme, host, port = key
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}" if port == _DEFAULT_PORTS[scheme] else f"{scheme}://{host}:{port}"


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``: the only form of a URL we ever show."""
    key = origin_key(url)
    return show_origin(key) if key is not None else "<invalid URL>"


def _bad_header_value(value: str) -> bool:
    return any(ch != "\t" and (ch < " " or ch == "\x7f" or ch > "\xff") for ch in value)


def check_header(name: object, value: object, *, binding: str, op: str) -> None:
    """Refuse a header that could break the request's framing (the value is never shown).

    Raises:
        ConfigError: the name is not an HTTP token, or the value is not a str
            free of CR, LF, NUL and other controls.
    """
    if not isinstance(name, str) or not name or not set(name) <= _TOKEN_CHARS:
        raise ConfigError("a header name is not a valid HTTP token", binding=binding, op=op)
    if not isinstance(value, str):
        raise ConfigError(f"header {name} must have a str value", binding=binding, op=op)
    if _bad_header_value(value):
        raise ConfigError(
            f"header {name} has a value with CR, LF, NUL or another control character;"
            " the request was not sent",
            binding=binding,
            op=op,
        )
