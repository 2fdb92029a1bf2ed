"""The browser step of the authorization code flow: PKCE, state, the redirect.

* :func:`new_pkce` / :func:`new_state`: fresh secrets (PKCE S256 only).
* :func:`authorization_url` builds the URL; :func:`check_browser_url` refuses
  anything but ``https`` (``http`` only to a loopback host) before any browser
  sees it; :func:`open_system_browser` opens it through :mod:`webbrowser`,
  never a shell.
* :class:`LoopbackReceiver` receives the redirect once on ``127.0.0.1``;
  :func:`code_from_redirect` checks a redirect URL a headless host returns.

Callback checks (both paths): ``state`` compared in constant time; RFC 9207
``iss`` compared by plain string equality when present, and required when the
authorization server advertises it; ``error=access_denied`` is
``auth_denied``, any other error or a missing code ``auth_failed``. On the
listener a wrong ``state`` is answered 400 and ignored, so a forged callback
can neither inject a code nor end the flow.

Nothing here needs the ``oauth`` extra.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import http.server
import io
import ipaddress
import secrets
import selectors
import socket
import threading
import urllib.parse
import webbrowser
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import attrs

from mcpclient._core.deadline import now
from mcpclient._core.limits import normalize_message
from mcpclient.errors import AuthError, FailureClass

__all__ = [
    "CALLBACK_PATH",
    "LoopbackReceiver",
    "authorization_url",
    "check_browser_url",
    "code_from_redirect",
    "new_pkce",
    "new_state",
    "open_system_browser",
    "s256_challenge",
]

#: The path the loopback listener answers on.
CALLBACK_PATH = "/callback"
#: Bound on an authorization URL handed to a browser (characters).
MAX_BROWSER_URL = 8192
#: Bound on one callback request's request line and headers (bytes).
MAX_REQUEST_BYTES = 64 * 1024
#: Socket timeout for one callback connection (seconds).
SOCKET_TIMEOUT = 5.0
#: How often a waiting flow looks at the caller's cancellation event (seconds).
CANCEL_CHECK_INTERVAL = 0.1
#: Bound on server text (an error code or description) kept in a message.
MAX_SERVER_TEXT = 200

_SUCCESS_PAGE = (
    b"<!doctype html><html><head><meta charset='utf-8'><title>Signed in</title></head>"
    b"<body><p>Authorization complete. You can close this window.</p></body></html>"
)
_FAILURE_PAGE = (
    b"<!doctype html><html><head><meta charset='utf-8'><title>Not signed in</title></head>"
    b"<body><p>Authorization did not complete. Return to the application.</p></body></html>"
)
_PLAIN = {400: b"Bad request\n", 404: b"Not found\n", 405: b"Method not allowed\n"}


def _fail(message: str, failure_class: FailureClass = FailureClass.AUTH_FAILED) -> AuthError:
    return AuthError(message, failure_class=failure_class)


def _server_text(text: str) -> str:
    return normalize_message(text, MAX_SERVER_TEXT)


# --- PKCE and state ----------------------------------------------------------


def s256_challenge(verifier: str) -> str:
    """The PKCE S256 code challenge of ``verifier`` (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def new_pkce() -> tuple[str, str]:
    """A fresh PKCE pair: (verifier of 43 characters, its S256 challenge)."""
    verifier = secrets.token_urlsafe(32)  # 32 random bytes -> 43 base64url characters
    return verifier, s256_challenge(verifier)


def new_state() -> str:
    """A fresh, unguessable ``state`` value (32 random bytes, base64url)."""
    return secrets.token_urlsafe(32)


# --- the authorization URL ---------------------------------------------------


def authorization_url(endpoint: str, params: Mapping[str, str]) -> str:
    """The authorization request URL: ``endpoint`` with ``params`` added.

    The endpoint's own query parameters are kept, except those ``params``
    sets (ours win: a duplicate ``client_id`` or ``redirect_uri`` would be
    ambiguous); a fragment is dropped.
    """
    parts = urllib.parse.urlsplit(endpoint)
    kept = [
        (name, value)
        for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        if name not in params
    ]
    query = urllib.parse.urlencode([*kept, *params.items()])
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_browser_url(url: str, *, allow_loopback_http: bool) -> None:
    """Refuse a URL no browser should be sent to.

    Allowed: ``https`` with a host, or ``http`` to a loopback host when
    ``allow_loopback_http``. Refused: every other scheme (``javascript:``,
    ``data:``, ``file:``, ``vbscript:``...), user info, control characters or
    whitespace, and URLs over 8 KiB. The message never quotes the URL (it
    carries the ``state``).

    Raises:
        AuthError: ``auth_failed``.
    """
    if not isinstance(url, str) or not url:
        raise _fail("the authorization URL is empty")
    if len(url) > MAX_BROWSER_URL:
        raise _fail(f"the authorization URL is longer than {MAX_BROWSER_URL} characters")
    if any(ord(c) <= 0x20 or 0x7F <= ord(c) <= 0x9F for c in url):
        raise _fail("the authorization URL contains whitespace or control characters")
    try:
        parts = urllib.parse.urlsplit(url)
        host = (parts.hostname or "").lower()
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        raise _fail("the authorization URL is malformed") from None
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        raise _fail(f"the authorization URL scheme {_server_text(scheme)[:32]!r} is not allowed")
    if not host:
        raise _fail("the authorization URL has no host")
    if "@" in parts.netloc:
        raise _fail("the authorization URL carries user info")
    if scheme == "http" and not (allow_loopback_http and _is_loopback(host)):
        raise _fail("the authorization URL must be https (http only to a loopback host)")


def open_system_browser(url: str) -> None:
    """Open ``url`` in the system browser (the default ``open_browser``).

    The URL is checked first (:func:`check_browser_url`, ``http`` allowed to
    loopback only) and handed to :func:`webbrowser.open`, which starts a
    browser with an argument list, never through a shell.

    Raises:
        AuthError: ``auth_failed`` for a refused URL; ``auth_required`` when
            no browser could be opened (a headless host should pass
            ``AuthorizationCodeGrant(redirect=...)``).
    """
    check_browser_url(url, allow_loopback_http=True)
    try:
        opened = webbrowser.open(url, new=1, autoraise=True)
    except webbrowser.Error:
        opened = False
    if not opened:
        raise _fail(
            "no web browser could be opened for the authorization step",
            FailureClass.AUTH_REQUIRED,
        )


# --- callback checks ---------------------------------------------------------


@attrs.frozen(repr=False)
class _Expected:
    state: str
    issuer: str
    iss_required: bool


def _single(params: Mapping[str, list[str]], name: str) -> str | None:
    values = params.get(name)
    if not values:
        return None
    if len(values) > 1:
        raise _fail(f"the authorization response repeats the {name!r} parameter")
    return values[0]


def _state_matches(params: Mapping[str, list[str]], state: str) -> bool:
    values = params.get("state") or []
    if len(values) != 1:
        return False
    # Constant time: a timing oracle on state would let a forger guess it byte by byte.
    return hmac.compare_digest(values[0].encode("utf-8"), state.encode("utf-8"))


def _parse_query(query: str) -> dict[str, list[str]]:
    try:
        return urllib.parse.parse_qs(query, keep_blank_values=True, max_num_fields=64)
    except ValueError:
        raise _fail("the authorization response has too many parameters") from None


def _code_from_params(params: Mapping[str, list[str]], expected: _Expected) -> str:
    """Check an authorization response whose ``state`` already matched."""
    iss = _single(params, "iss")
    if iss is not None and iss != expected.issuer:
        # RFC 9207 §2.4: a mix-up attempt; its error fields are not to be shown.
        raise _fail("the authorization response came from another issuer (iss mismatch)")
    if iss is None and expected.iss_required:
        raise _fail("the authorization response lacks the iss parameter its server advertises")
    error = _single(params, "error")
    if error is not None:
        described = _single(params, "error_description")
        detail = f": {_server_text(described)}" if described else ""
        failure = FailureClass.AUTH_DENIED if error == "access_denied" else FailureClass.AUTH_FAILED
        raise _fail(f"the authorization server answered {_server_text(error)!r}{detail}", failure)
    code = _single(params, "code")
    if not code:
        raise _fail("the authorization response carries no code")
    return code


def code_from_redirect(redirect_url: str, *, state: str, issuer: str, iss_required: bool) -> str:
    """The authorization code from a redirect URL a headless host returned.

    Same checks as the loopback listener, except that a wrong ``state`` fails
    the flow (there is no one else to wait for).

    Raises:
        AuthError: ``auth_denied`` for ``error=access_denied``; ``auth_failed``
            for a wrong or missing state, an ``iss`` mismatch, a missing
            ``iss`` the server advertises, another error, or no code.
    """
    if not isinstance(redirect_url, str):
        raise _fail("the redirect callable must return the redirect URL as a str")
    try:
        query = urllib.parse.urlsplit(redirect_url).query
    except ValueError:
        raise _fail("the redirect URL is malformed") from None
    params = _parse_query(query)
    if not _state_matches(params, state):
        raise _fail("the redirect URL's state does not match this authorization request")
    return _code_from_params(params, _Expected(state, issuer, iss_required))


# --- the loopback listener ---------------------------------------------------


class _BoundedReader:
    """Wraps a connection's reader: at most ``limit`` bytes for the request head."""

    def __init__(self, raw: io.BufferedIOBase, limit: int) -> None:
        self._raw = raw
        self._left = limit
        self.overflow = False

    def readline(self, size: int = -1) -> bytes:
        if self._left <= 0:
            self.overflow = True
            return b""
        want = self._left if size < 0 else min(size, self._left)
        line = self._raw.readline(want)
        self._left -= len(line)
        if self._left <= 0 and not line.endswith(b"\n"):
            self.overflow = True
        return line

    def read(self, size: int = -1) -> bytes:
        return b""  # a GET callback has no body worth reading

    def close(self) -> None:
        self._raw.close()


class _Handler(http.server.BaseHTTPRequestHandler):
    """Answers one callback request with a fixed response; reflects nothing."""

    server: _CallbackServer
    timeout = SOCKET_TIMEOUT
    server_version = "mcpclient"
    sys_version = ""

    def setup(self) -> None:
        super().setup()
        self._bounded = _BoundedReader(self.rfile, MAX_REQUEST_BYTES)
        self.rfile = self._bounded  # type: ignore[assignment]

    def do_GET(self) -> None:
        if self._bounded.overflow:
            self._answer(431, b"Request too large\n")
            return
        parts = urllib.parse.urlsplit(self.path)
        if parts.path != CALLBACK_PATH:
            self._answer(404, _PLAIN[404])
            return
        status, outcome = self.server.receiver._offer(parts.query)
        self._answer(status, _SUCCESS_PAGE if status == 200 else _FAILURE_PAGE, html=True)
        if outcome is not None:
            # The page is flushed first, so the browser shows it before the flow moves on.
            self.server.receiver._resolve(outcome)

    def do_POST(self) -> None:
        self._answer(405, _PLAIN[405])

    def do_PUT(self) -> None:
        self._answer(405, _PLAIN[405])

    def do_DELETE(self) -> None:
        self._answer(405, _PLAIN[405])

    def do_HEAD(self) -> None:
        self._answer(405, _PLAIN[405])

    def _answer(self, status: int, body: bytes, *, html: bool = False) -> None:
        self.close_connection = True
        self.send_response_only(status)
        ctype = "text/html; charset=utf-8" if html else "text/plain; charset=utf-8"
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # The stock error page quotes the request line or method back: never.
        self._answer(code, _PLAIN.get(code, b"Error\n"))

    def log_message(self, format: str, *args: Any) -> None:
        # The request line carries the code and state: it must not reach stderr.
        return


class _CallbackServer(http.server.HTTPServer):
    """The listening socket; connections are served one at a time by our thread."""

    def __init__(self, receiver: LoopbackReceiver) -> None:
        self.receiver = receiver
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A peer that hangs up or times out is not worth a traceback on stderr.
        return


class LoopbackReceiver:
    """A one-shot redirect listener on ``127.0.0.1`` (RFC 8252 §7.3).

    Bound on entry (port chosen by the OS), so :attr:`redirect_uri` is known
    before client registration; :meth:`arm` records what to expect before
    the browser opens; :meth:`wait` returns the code. Only ``GET /callback``
    is served (other paths 404, other methods 405); every answer is a fixed
    page that reflects nothing from the request; request heads are bounded to
    64 KiB and each connection to 5 s. A callback with a wrong ``state`` is
    answered 400 and ignored; the first one with the right ``state`` ends the
    flow (success or failure) and the listener stops accepting.

    Example::

        with LoopbackReceiver() as receiver:
            ...register receiver.redirect_uri, build the URL...
            receiver.arm(state, issuer, iss_required)
            open_system_browser(url)
            code = receiver.wait(deadline=deadline, cancelled=cancelled)

    Thread safety: one flow uses one receiver; :meth:`close` may be called
    from any thread. Its thread is named ``mcpclient-auth-callback``.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._expected: _Expected | None = None
        self._outcome: str | AuthError | None = None
        self._closed = False
        self._server = _CallbackServer(self)
        self._wake_r, self._wake_w = socket.socketpair()
        port = self._server.server_address[1]
        self.redirect_uri = f"http://127.0.0.1:{port}{CALLBACK_PATH}"
        self._thread = threading.Thread(
            target=self._serve, name="mcpclient-auth-callback", daemon=True
        )
        self._thread.start()

    def __enter__(self) -> LoopbackReceiver:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "done" if self._done.is_set() else "listening"
        return f"<LoopbackReceiver {self.redirect_uri} {state}>"

    def arm(self, state: str, issuer: str, iss_required: bool) -> None:
        """Record the expected ``state`` and ``issuer``; call before the browser opens."""
        with self._lock:
            self._expected = _Expected(state, issuer, iss_required)

    def wait(self, *, deadline: float, cancelled: threading.Event) -> str:
        """Block until the redirect arrives; return the authorization code.

        Raises:
            AuthError: ``auth_denied`` / ``auth_failed`` per the callback
                checks; ``auth_required`` when ``deadline`` (monotonic) passes
                or ``cancelled`` is set first.
        """
        # threading.Event cannot be waited on jointly with the caller's event:
        # wait on ours in short slices and look at theirs between them.
        while not self._done.is_set():
            left = deadline - now()
            if cancelled.is_set():
                raise _fail("the authorization was cancelled", FailureClass.AUTH_REQUIRED)
            if left <= 0:
                raise _fail(
                    "the authorization was not completed in time", FailureClass.AUTH_REQUIRED
                )
            self._done.wait(min(left, CANCEL_CHECK_INTERVAL))
        outcome = self._outcome
        if isinstance(outcome, AuthError):
            raise outcome
        assert isinstance(outcome, str)
        return outcome

    def close(self) -> None:
        """Stop listening and release the port (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        if self._thread is not threading.current_thread():
            self._thread.join(SOCKET_TIMEOUT + 1.0)
        self._server.server_close()
        self._wake_r.close()
        self._wake_w.close()

    # -- the serving thread -------------------------------------------------------

    def _serve(self) -> None:
        listener = self._server.socket
        with selectors.DefaultSelector() as selector:
            selector.register(listener, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            while not self._closed and not self._done.is_set():
                ready = {key.fileobj for key, _ in selector.select()}
                if self._wake_r in ready or self._closed:
                    return
                try:
                    conn, address = listener.accept()
                except OSError:
                    continue
                self._handle(conn, address)

    def _handle(self, conn: socket.socket, address: Any) -> None:
        try:
            conn.settimeout(SOCKET_TIMEOUT)
            self._server.finish_request(conn, address)
        except Exception:
            pass  # a broken peer must not end the listener
        finally:
            self._server.shutdown_request(conn)

    def _offer(self, query: str) -> tuple[int, str | AuthError | None]:
        """Judge one callback: (HTTP status, the flow's outcome or None to keep waiting)."""
        with self._lock:
            expected = self._expected
            if expected is None or self._done.is_set():
                return 400, None
        try:
            params = _parse_query(query)
        except AuthError:
            return 400, None
        if not _state_matches(params, expected.state):
            return 400, None  # forged or stale: ignored, the flow keeps waiting
        try:
            return 200, _code_from_params(params, expected)
        except AuthError as exc:
            return 400, exc

    def _resolve(self, outcome: str | AuthError) -> None:
        """Record the flow's outcome (on the serving thread) and stop listening."""
        with self._lock:
            if self._done.is_set():
                return
            self._outcome = outcome
            # One-shot: close the port before the waiter wakes, so any later
            # connection is refused at once rather than left unanswered.
            self._server.server_close()
            self._done.set()
