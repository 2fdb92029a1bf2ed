"""Token and client-registration values, and where they are kept.

:class:`TokenSet` is what a token endpoint granted for one (issuer, resource)
pair; :class:`ClientInfo` is the client identity registered with one issuer.
Both hold secrets, so neither shows them in ``repr``/``str`` and neither
pickles or copies through ``pickle``: persisting one takes an explicit
``to_json()``, which only a :class:`TokenStore` should call.

Stores:

* :class:`MemoryTokenStore` (the default): per process, thread safe.
* :class:`FileTokenStore`: one JSON file per key in a private directory
  (0700, files 0600, written atomically); it refuses a directory or file that
  other users could read, or a symlink in their place.
* Anything else with the :class:`TokenStore` methods (a keyring, a vault).

Registrations are keyed by the authorization server's ``issuer`` alone and
tokens by ``(issuer, resource)``, so a change of authorization server never
reuses another server's client or tokens.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import secrets
import stat
import threading
import time
from collections.abc import Mapping
from typing import Any, NoReturn, Protocol, runtime_checkable

import attrs

from mcpclient._internal import jsonio
from mcpclient._internal.checks import fail
from mcpclient._internal.limits import normalize_message
from mcpclient.errors import AuthError, ConfigError, FailureClass

__all__ = [
    "AUTH_METHODS",
    "ClientInfo",
    "FileTokenStore",
    "MemoryTokenStore",
    "TokenSet",
    "TokenStore",
]

#: Token endpoint client authentication methods this package speaks.
AUTH_METHODS = frozenset({"client_secret_basic", "client_secret_post", "none", "private_key_jwt"})
#: Token types a :class:`TokenSet` may carry (RFC 6750 and RFC 9449 spellings).
TOKEN_TYPES = ("Bearer", "DPoP")
#: Bound on any one stored value (a token, a secret, an URL), in characters.
MAX_VALUE_CHARS = 32 * 1024
#: Bound on a stored file: anything larger is not something this package wrote.
MAX_FILE_BYTES = 256 * 1024
#: The format version written into stored JSON.
FORMAT_VERSION = 1


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
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise fail(inst, attr.name, "must be a finite number of epoch seconds or None")


def _scopes(inst: Any, attr: Any, value: Any) -> None:
    for scope in value:
        if not isinstance(scope, str) or not scope or any(c.isspace() for c in scope):
            raise fail(inst, attr.name, "must hold non-empty scope strings without whitespace")


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
        return {
            "version": FORMAT_VERSION,
            "access_token": self.access_token,
            "token_type": self.token_type,
            "refresh_token": self.refresh_token,
            "expires_at": self.expires_at,
            "scopes": list(self.scopes),
            "issuer": self.issuer,
            "resource": self.resource,
        }

    @classmethod
    def from_json(cls, data: Any) -> TokenSet:
        """Rebuild a token set from :meth:`to_json` output.

        Raises:
            AuthError: ``auth_failed``: the data is not a token set this
                package wrote (the message names the field, never a value).
        """
        fields = _stored_object(data, "token set")
        try:
            return cls(
                fields["access_token"],
                token_type=fields["token_type"],
                refresh_token=fields["refresh_token"],
                expires_at=fields["expires_at"],
                scopes=_stored_list(fields["scopes"], "token set"),
                issuer=fields["issuer"],
                resource=fields["resource"],
            )
        except KeyError as exc:
            raise _malformed("token set", f"misses {exc.args[0]!r}") from None
        except ConfigError as exc:
            raise _malformed("token set", exc.message) from None

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

    Thread safety: immutable.
    """

    client_id: str = attrs.field(validator=_secret_text)  # not secret, but bounded alike
    # Declared before client_secret: the secret's validator reads the method.
    auth_method: str = attrs.field(default="none", kw_only=True, validator=_auth_method)
    client_secret: str | None = attrs.field(default=None, kw_only=True, validator=_client_secret)
    issuer: str = attrs.field(kw_only=True, validator=_plain_text)

    def to_json(self) -> dict[str, Any]:
        """The JSON object a store persists (holds the secret: handle with care)."""
        return {
            "version": FORMAT_VERSION,
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "auth_method": self.auth_method,
            "issuer": self.issuer,
        }

    @classmethod
    def from_json(cls, data: Any) -> ClientInfo:
        """Rebuild a registration from :meth:`to_json` output.

        Raises:
            AuthError: ``auth_failed``: the data is malformed.
        """
        fields = _stored_object(data, "client registration")
        try:
            return cls(
                fields["client_id"],
                client_secret=fields["client_secret"],
                auth_method=fields["auth_method"],
                issuer=fields["issuer"],
            )
        except KeyError as exc:
            raise _malformed("client registration", f"misses {exc.args[0]!r}") from None
        except ConfigError as exc:
            raise _malformed("client registration", exc.message) from None

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


def _malformed(kind: str, problem: str) -> AuthError:
    return AuthError(
        f"stored {kind} is malformed: {problem}", failure_class=FailureClass.AUTH_FAILED
    )


def _stored_object(data: Any, kind: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise _malformed(kind, "not a JSON object")
    if data.get("version") != FORMAT_VERSION:
        raise _malformed(kind, "unknown format version")
    return data


def _stored_list(value: Any, kind: str) -> tuple[Any, ...]:
    if not isinstance(value, list | tuple):
        raise _malformed(kind, "scopes is not a list")
    return tuple(value)


@runtime_checkable
class TokenStore(Protocol):
    """Where tokens and client registrations are kept (the host may supply its own).

    Tokens are keyed by ``(issuer, resource)``, registrations by ``issuer``.
    Methods are called from the thread running an authorization flow, and may
    be called from several providers at once: implementations must be thread
    safe. ``load_*`` return None when nothing is stored; any other failure
    raises (an :class:`~mcpclient.errors.AuthError` is reported as is).
    """

    def load_tokens(self, issuer: str, resource: str) -> TokenSet | None:
        """The tokens stored for ``(issuer, resource)``, or None."""

    def save_tokens(self, tokens: TokenSet) -> None:
        """Store ``tokens`` under ``(tokens.issuer, tokens.resource)``, replacing any."""

    def delete_tokens(self, issuer: str, resource: str) -> None:
        """Forget the tokens for ``(issuer, resource)`` (no error when absent)."""

    def load_client(self, issuer: str) -> ClientInfo | None:
        """The client registered with ``issuer``, or None."""

    def save_client(self, client: ClientInfo) -> None:
        """Store ``client`` under ``client.issuer``, replacing any."""


class MemoryTokenStore:
    """A :class:`TokenStore` in this process's memory (the default store).

    Thread safety: every method may be called from any thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[tuple[str, str], TokenSet] = {}
        self._clients: dict[str, ClientInfo] = {}

    def load_tokens(self, issuer: str, resource: str) -> TokenSet | None:
        """The tokens stored for ``(issuer, resource)``, or None."""
        with self._lock:
            return self._tokens.get((issuer, resource))

    def save_tokens(self, tokens: TokenSet) -> None:
        """Store ``tokens`` under ``(tokens.issuer, tokens.resource)``."""
        if not isinstance(tokens, TokenSet):
            raise TypeError("save_tokens takes a TokenSet")
        with self._lock:
            self._tokens[(tokens.issuer, tokens.resource)] = tokens

    def delete_tokens(self, issuer: str, resource: str) -> None:
        """Forget the tokens for ``(issuer, resource)``."""
        with self._lock:
            self._tokens.pop((issuer, resource), None)

    def load_client(self, issuer: str) -> ClientInfo | None:
        """The client registered with ``issuer``, or None."""
        with self._lock:
            return self._clients.get(issuer)

    def save_client(self, client: ClientInfo) -> None:
        """Store ``client`` under ``client.issuer``."""
        if not isinstance(client, ClientInfo):
            raise TypeError("save_client takes a ClientInfo")
        with self._lock:
            self._clients[client.issuer] = client

    def __repr__(self) -> str:
        with self._lock:
            return f"<MemoryTokenStore tokens={len(self._tokens)} clients={len(self._clients)}>"


class FileTokenStore:
    """A :class:`TokenStore` of JSON files in a private directory.

    The directory is created (mode 0700) when missing. Each key is one file
    named by the SHA-256 of the key, mode 0600, replaced atomically (a new
    file created exclusively, then ``os.replace``), so a reader never sees a
    half-written file and concurrent writers never interleave. Files are
    opened without following symlinks.

    The store refuses (``ConfigError`` at construction, ``AuthError``
    ``auth_failed`` later) a directory or file that is a symlink, is not owned
    by this user, or grants any permission to group or others: tokens must
    not be readable by anyone else, and a directory others can write to lets
    them plant a token of their choosing.

    Example::

        OAuth(store=FileTokenStore(Path.home() / ".config" / "myapp" / "tokens"))

    Thread safety: every method may be called from any thread (and from other
    processes sharing the directory).
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self._dir = os.path.abspath(os.fspath(directory))
        self._lock = threading.Lock()
        try:
            parent = os.path.dirname(self._dir)
            os.makedirs(parent, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                os.mkdir(self._dir, 0o700)
            self._check_directory()
        except AuthError as exc:
            raise ConfigError(f"FileTokenStore: {exc.message}") from None
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise ConfigError(f"FileTokenStore: cannot create {self._dir!r} ({reason})") from None

    @property
    def directory(self) -> str:
        """The absolute path of the store's directory."""
        return self._dir

    def load_tokens(self, issuer: str, resource: str) -> TokenSet | None:
        """The tokens stored for ``(issuer, resource)``, or None.

        Raises:
            AuthError: ``auth_failed``: the directory or file is unsafe or malformed.
        """
        data = self._read(self._path("tokens", issuer, resource))
        if data is None:
            return None
        tokens = TokenSet.from_json(data)
        if (tokens.issuer, tokens.resource) != (issuer, resource):
            raise _malformed("token set", "it belongs to another issuer or resource")
        return tokens

    def save_tokens(self, tokens: TokenSet) -> None:
        """Store ``tokens`` under ``(tokens.issuer, tokens.resource)``.

        Raises:
            AuthError: ``auth_failed``: the directory is unsafe or not writable.
        """
        if not isinstance(tokens, TokenSet):
            raise TypeError("save_tokens takes a TokenSet")
        self._write(self._path("tokens", tokens.issuer, tokens.resource), tokens.to_json())

    def delete_tokens(self, issuer: str, resource: str) -> None:
        """Forget the tokens for ``(issuer, resource)``."""
        path = self._path("tokens", issuer, resource)
        with self._lock:
            self._check_directory()
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise self._failure("cannot delete a token file", exc) from None

    def load_client(self, issuer: str) -> ClientInfo | None:
        """The client registered with ``issuer``, or None.

        Raises:
            AuthError: ``auth_failed``: the directory or file is unsafe or malformed.
        """
        data = self._read(self._path("client", issuer))
        if data is None:
            return None
        client = ClientInfo.from_json(data)
        if client.issuer != issuer:
            raise _malformed("client registration", "it belongs to another issuer")
        return client

    def save_client(self, client: ClientInfo) -> None:
        """Store ``client`` under ``client.issuer``.

        Raises:
            AuthError: ``auth_failed``: the directory is unsafe or not writable.
        """
        if not isinstance(client, ClientInfo):
            raise TypeError("save_client takes a ClientInfo")
        self._write(self._path("client", client.issuer), client.to_json())

    def __repr__(self) -> str:
        return f"<FileTokenStore {self._dir!r}>"

    # --- files ---

    def _path(self, kind: str, *key: str) -> str:
        # NUL cannot occur in a URL, so the joined key is unambiguous.
        digest = hashlib.sha256("\0".join((kind, *key)).encode("utf-8", "surrogatepass"))
        return os.path.join(self._dir, f"{kind}-{digest.hexdigest()}.json")

    def _check_directory(self) -> None:
        try:
            info = os.lstat(self._dir)
        except OSError as exc:
            raise self._failure("cannot read the token directory", exc) from None
        if stat.S_ISLNK(info.st_mode):
            raise _unsafe(f"token directory {self._dir!r} is a symlink")
        if not stat.S_ISDIR(info.st_mode):
            raise _unsafe(f"token directory {self._dir!r} is not a directory")
        _check_private(info, f"token directory {self._dir!r}")

    def _read(self, path: str) -> Any:
        with self._lock:
            self._check_directory()
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            except FileNotFoundError:
                return None
            except OSError as exc:
                # ELOOP: the name is a symlink, which this store never creates.
                raise self._failure("cannot open a token file", exc) from None
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode):
                    raise _unsafe(f"{os.path.basename(path)!r} is not a regular file")
                _check_private(info, f"token file {os.path.basename(path)!r}")
                if info.st_size > MAX_FILE_BYTES:
                    raise _malformed("token file", "it is too large")
                raw = _read_all(fd, MAX_FILE_BYTES + 1)
            except AuthError:
                raise  # an AuthError is a PermissionError, hence an OSError: keep it as is
            except OSError as exc:
                raise self._failure("cannot read a token file", exc) from None
            finally:
                os.close(fd)
        if len(raw) > MAX_FILE_BYTES:
            raise _malformed("token file", "it is too large")
        try:
            return jsonio.decode(raw)
        except jsonio.FrameError:
            raise _malformed("token file", "it is not JSON") from None

    def _write(self, path: str, data: Mapping[str, Any]) -> None:
        raw = jsonio.encode(data)
        temp = f"{path}.{secrets.token_hex(8)}.tmp"
        with self._lock:
            self._check_directory()
            try:
                fd = os.open(
                    temp,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                    0o600,
                )
            except OSError as exc:
                raise self._failure("cannot create a token file", exc) from None
            try:
                try:
                    view = memoryview(raw)
                    while view:
                        view = view[os.write(fd, view) :]
                    os.fsync(fd)
                finally:
                    os.close(fd)
                os.replace(temp, path)
            except OSError as exc:
                _unlink_quietly(temp)
                raise self._failure("cannot write a token file", exc) from None

    def _failure(self, what: str, exc: OSError) -> AuthError:
        reason = exc.strerror or type(exc).__name__
        return AuthError(
            f"token store {self._dir!r}: {what} ({reason})",
            failure_class=FailureClass.AUTH_FAILED,
        )


def _unsafe(problem: str) -> AuthError:
    return AuthError(f"token store refused: {problem}", failure_class=FailureClass.AUTH_FAILED)


def _check_private(info: os.stat_result, what: str) -> None:
    if info.st_uid != os.getuid():
        raise _unsafe(f"{what} is owned by another user")
    if info.st_mode & 0o077:
        raise _unsafe(
            f"{what} is accessible to group or others (mode {stat.S_IMODE(info.st_mode):04o})"
        )


def _read_all(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = os.read(fd, min(65536, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
