"""Mapping failures to our errors, in one place: requests, urllib3, http.client, ssl, socket.

Nothing from below escapes an exchange: :func:`send_failure` (before headers)
and :func:`read_failure` (the body) translate whatever was raised, by looking
through the whole chain of causes, and :func:`status_error` turns an HTTP
error status into its typed failure. Messages name the origin only, never
quote the exception (it may hold a path, query or header), and the original is
never chained as the visible cause.
"""

from __future__ import annotations

import email.utils
import errno
import http
import http.client
import socket
import ssl
import time
from collections.abc import Iterator, Mapping

import requests
import requests.exceptions
import urllib3.exceptions

from mcpclient._core.deadline import for_people, now
from mcpclient._internal.transport.http_errors import HTTPAuthError, HTTPSendError, HTTPStatusError
from mcpclient._internal.transport.http_exchange import Exchange, ExchangeCutError
from mcpclient._internal.transport.http_origins import AddressRefusedError
from mcpclient.errors import ConfigError, DeadlineExceededError, Error, FailureClass, error_for
from mcpclient.transports import AuthChallenge

__all__ = ["cut_error", "deadline_error", "read_failure", "send_failure", "status_error"]

_MAX_WWW_AUTHENTICATE = 8 * 1024
_MAX_DPOP_NONCE = 1024
_MAX_RETRY_AFTER = 7 * 24 * 3600.0


def status_error(
    response: requests.Response,
    *,
    shown: str,
    binding: str,
    op: str,
    request: tuple[str, str, Mapping[str, str]] | None = None,
) -> Error:
    """The typed error for an HTTP error status (a 401/403 carries its challenge)."""
    status = response.status_code
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    text = f"HTTP {status} {phrase}".rstrip() + f" from {shown}"
    headers = response.headers
    if status in (401, 403):
        header = headers.get("WWW-Authenticate")
        www_authenticate = header[:_MAX_WWW_AUTHENTICATE] if header else None
        challenge = None
        if request is not None:
            method, url, sent = request
            nonce = headers.get("DPoP-Nonce")
            challenge = AuthChallenge(
                status=status,
                www_authenticate=www_authenticate,
                dpop_nonce=nonce[:_MAX_DPOP_NONCE] if nonce else None,
                method=method,
                url=url,
                protocol_version=sent.get("MCP-Protocol-Version"),
                sent_authorization=sent.get("Authorization"),
            )
        return HTTPAuthError(
            text,
            status=status,
            www_authenticate=www_authenticate,
            challenge=challenge,
            binding=binding,
            op=op,
        )
    return HTTPStatusError(
        text,
        status=status,
        retry_after=_retry_after(headers.get("Retry-After")),
        binding=binding,
        op=op,
    )


def _retry_after(value: str | None) -> float | None:
    if not value or len(value) > 64:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return min(float(int(value)), _MAX_RETRY_AFTER)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    try:
        seconds = when.timestamp() - time.time()
    except (OverflowError, OSError, ValueError):
        return None
    return min(max(0.0, seconds), _MAX_RETRY_AFTER)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and what it wraps (causes, contexts, args, urllib3 ``reason``)."""
    seen: set[int] = set()
    todo = [exc]
    while todo and len(seen) < 32:
        item = todo.pop(0)
        if id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        nested: list[object] = [item.__cause__, item.__context__, getattr(item, "reason", None)]
        nested.extend(item.args)
        todo.extend(n for n in nested if isinstance(n, BaseException))


def _find(
    exc: BaseException, kinds: type[BaseException] | tuple[type[BaseException], ...]
) -> BaseException | None:
    for item in _chain(exc):
        if isinstance(item, kinds):
            return item
    return None


_CONNECT_PHASE: tuple[type[BaseException], ...] = (
    urllib3.exceptions.NewConnectionError,
    urllib3.exceptions.NameResolutionError,
    urllib3.exceptions.ConnectTimeoutError,
    socket.gaierror,
    ConnectionRefusedError,
    ssl.SSLError,
    requests.exceptions.ConnectTimeout,
    requests.exceptions.SSLError,
    requests.exceptions.ProxyError,
)


def _sent(exchange: Exchange, exc: BaseException) -> bool:
    if exchange.request_started:
        return exchange.written
    # Our hooks never saw the request start: it failed while connecting, or a
    # pool without hooks (SOCKS) was used, where only the kind of error tells.
    return _find(exc, _CONNECT_PHASE) is None


def cut_error(exchange: Exchange, op: str, *, before_headers: bool) -> Error:
    """The error for a cut exchange: the deadline, or an abort."""
    if exchange.cut_reason == "deadline":
        return deadline_error(exchange, op, before_headers=before_headers)
    return HTTPSendError(
        f"the request to {exchange.shown} was aborted",
        sent=exchange.written or not before_headers,
        aborted=True,
        binding=exchange.binding,
        op=op,
    )


def deadline_error(exchange: Exchange, op: str, *, before_headers: bool) -> Error:
    """The deadline passed before headers, or before the body ended."""
    what = "no response headers" if before_headers else "the response body did not end"
    return DeadlineExceededError(
        f"{what} from {exchange.shown} within the deadline",
        failure_class=FailureClass.DEADLINE,
        binding=exchange.binding,
        op=op,
    )


def send_failure(exc: BaseException, exchange: Exchange, deadline: float, op: str) -> Error:
    """Translate what ``session.request`` raised; never quotes the exception."""
    shown, binding = exchange.shown, exchange.binding
    if isinstance(exc, Error):
        return exc
    if exchange.cut_reason is not None or isinstance(exc, ExchangeCutError):
        return cut_error(exchange, op, before_headers=True)
    refused = _find(exc, AddressRefusedError)
    if isinstance(refused, AddressRefusedError):
        return HTTPSendError(
            f"not connecting to {shown}: {refused.reason}", sent=False, binding=binding, op=op
        )
    sent = _sent(exchange, exc)

    def lost(text: str, *, was_sent: bool = sent) -> HTTPSendError:
        return HTTPSendError(text, sent=was_sent, binding=binding, op=op)

    tls = _find(exc, (ssl.SSLError, ssl.CertificateError))
    if tls is not None or isinstance(exc, requests.exceptions.SSLError):
        return lost(f"TLS with {shown} failed: {_tls_detail(tls)}", was_sent=exchange.written)
    if isinstance(exc, requests.exceptions.ProxyError):
        return lost(f"the proxy for {shown} failed", was_sent=exchange.written)
    if isinstance(
        exc,
        (
            requests.exceptions.InvalidURL,
            requests.exceptions.InvalidSchema,
            requests.exceptions.MissingSchema,
            requests.exceptions.InvalidProxyURL,
        ),
    ):
        return ConfigError(
            f"cannot send to {shown}: the URL or proxy is not usable ({type(exc).__name__})",
            binding=binding,
            op=op,
        )
    if _find(exc, (urllib3.exceptions.NameResolutionError, socket.gaierror)) is not None:
        return lost(f"cannot resolve the host of {shown}", was_sent=False)
    refused = _find(exc, ConnectionRefusedError)
    if refused is not None:
        return lost(f"connection to {shown} refused", was_sent=False)
    if _timed_out(exc):
        if now() >= deadline - 0.05:
            return deadline_error(exchange, op, before_headers=True)
        return lost(f"the connection to {shown} timed out")
    if isinstance(exc, requests.exceptions.InvalidHeader) or _find(
        exc, urllib3.exceptions.HeaderParsingError
    ):
        if exchange.written:
            return error_for(
                FailureClass.SERVER_PROTOCOL,
                f"{shown} sent invalid response headers",
                binding=binding,
                op=op,
            )
        return ConfigError(f"a request header for {shown} is invalid", binding=binding, op=op)
    malformed = _find(exc, http.client.HTTPException)
    if malformed is not None and not isinstance(
        malformed, http.client.RemoteDisconnected | http.client.IncompleteRead
    ):
        return error_for(
            FailureClass.SERVER_PROTOCOL,
            f"{shown} sent a malformed HTTP response ({type(malformed).__name__})",
            binding=binding,
            op=op,
        )
    if _find(exc, http.client.RemoteDisconnected) is not None:
        return lost(f"{shown} closed the connection without a response")
    for item in _chain(exc):
        if isinstance(item, OSError) and isinstance(item.errno, int):
            name = errno.errorcode.get(item.errno, str(item.errno))
            return lost(f"the connection to {shown} failed ({name})")
    return lost(f"the HTTP request to {shown} failed ({type(exc).__name__})")


def _timed_out(exc: BaseException) -> bool:
    # urllib3's NewConnectionError subclasses ConnectTimeoutError: not a timeout.
    return any(
        isinstance(
            item,
            requests.exceptions.Timeout | urllib3.exceptions.TimeoutError | TimeoutError,
        )
        and not isinstance(item, urllib3.exceptions.NewConnectionError)
        for item in _chain(exc)
    )


def _tls_detail(tls: BaseException | None) -> str:
    if isinstance(tls, ssl.SSLCertVerificationError):
        detail = tls.verify_message or "certificate verify failed"
        return f"certificate verify failed ({detail})"
    if isinstance(tls, ssl.CertificateError):
        return "the certificate does not match the host"
    if isinstance(tls, ssl.SSLError):
        reason = tls.reason if isinstance(tls.reason, str) else None
        return f"handshake failed ({reason})" if reason else "handshake failed"
    return "handshake failed"


def read_failure(exc: BaseException, exchange: Exchange, deadline: float, op: str) -> Error:
    """Translate what reading the body raised; never quotes the exception."""
    shown, binding = exchange.shown, exchange.binding
    if isinstance(exc, Error):
        return exc
    if exchange.cut_reason is not None:
        return cut_error(exchange, op, before_headers=False)
    if _timed_out(exc):
        if now() >= deadline:
            return deadline_error(exchange, op, before_headers=False)
        if exchange.idle_timeout is not None:
            return HTTPSendError(
                f"no data from {shown} for {for_people(exchange.idle_timeout)}",
                sent=True,
                binding=binding,
                op=op,
            )
        return HTTPSendError(f"reading from {shown} timed out", sent=True, binding=binding, op=op)
    if _find(exc, urllib3.exceptions.DecodeError) is not None:
        return error_for(
            FailureClass.SERVER_PROTOCOL,
            f"the response body from {shown} cannot be decoded (Content-Encoding)",
            binding=binding,
            op=op,
        )
    if _find(exc, (ssl.SSLError,)) is not None:
        return HTTPSendError(
            f"TLS with {shown} failed mid-response", sent=True, binding=binding, op=op
        )
    return HTTPSendError(
        f"the connection to {shown} broke while reading the response",
        sent=True,
        binding=binding,
        op=op,
    )
