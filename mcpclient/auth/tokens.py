"""Token and client-registration values, and where they are kept.

:class:`TokenSet` is what a token endpoint granted for one (issuer, resource)
pair; :class:`ClientInfo` is the client identity registered with one issuer.
Both hold secrets, so neither shows them in ``repr``/``str`` and neither
pickles or copies through ``pickle``: persisting one takes an explicit
``to_json()``, which only a :class:`TokenStore` should call. Both values are
defined in :mod:`mcpclient.auth.credentials` and re-exported here; this module
is where they are kept.

Stores:

* :class:`MemoryTokenStore` (the default): per process, thread safe.
* :class:`FileTokenStore`: one JSON file per key in a private directory
  (0700, files 0600, written atomically); it refuses a directory or file that
  other users could read, or a symlink in their place.
* :class:`KeyringTokenStore`: the OS keychain (the ``keyring`` extra), one
  entry per key holding the same record a :class:`FileTokenStore` file holds.
* Anything else with the :class:`TokenStore` methods (a vault).

Registrations are keyed by the authorization server's ``issuer`` alone and
tokens by ``(issuer, resource)``, so a change of authorization server never
reuses another server's client or tokens. Both stores here also record which
issuer a pre-registered ``client_id`` was first used with
(``load_issuer_binding``/``save_issuer_binding``, optional for other stores),
so its secret is never sent to another one, in this process or the next.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import secrets
import stat
import threading
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from mcpclient._core import jsonio

# The values live in their own module and are re-exported here, where they
# have always been importable from (the "X as X" form is the explicit
# re-export mypy --strict asks for).
from mcpclient._internal.wire import records as _records
from mcpclient._internal.wire.records import malformed as _malformed
from mcpclient.auth.credentials import AUTH_METHODS, ClientInfo, TokenSet
from mcpclient.auth.credentials import FORMAT_VERSION as FORMAT_VERSION  # noqa: PLC0414
from mcpclient.auth.credentials import MAX_VALUE_CHARS as MAX_VALUE_CHARS  # noqa: PLC0414
from mcpclient.auth.credentials import TOKEN_TYPES as TOKEN_TYPES  # noqa: PLC0414
from mcpclient.errors import AuthError, ConfigError, FailureClass

__all__ = [
    "AUTH_METHODS",
    "ClientInfo",
    "FileTokenStore",
    "KeyringTokenStore",
    "MemoryTokenStore",
    "TokenSet",
    "TokenStore",
]

#: Bound on a stored file: anything larger is not something this package wrote.
MAX_FILE_BYTES = 256 * 1024


@runtime_checkable
class TokenStore(Protocol):
    """Where tokens and client registrations are kept (the host may supply its own).

    Tokens are keyed by ``(issuer, resource)``, registrations by ``issuer``.
    Methods are called from the thread running an authorization flow, and may
    be called from several providers at once: implementations must be thread
    safe. ``load_*`` return None when nothing is stored; any other failure
    raises (an :class:`~mcpclient.errors.AuthError` is reported as is).

    Optional: ``load_issuer_binding(client_id) -> str | None`` and
    ``save_issuer_binding(client_id, issuer)`` record the issuer a
    pre-registered client was first used with (both stores here have them);
    without them the binding lasts as long as the provider.
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
        self._bindings: dict[str, str] = {}

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

    def load_issuer_binding(self, client_id: str) -> str | None:
        """The issuer the pre-registered ``client_id`` is bound to, or None."""
        with self._lock:
            return self._bindings.get(client_id)

    def save_issuer_binding(self, client_id: str, issuer: str) -> None:
        """Record that the pre-registered ``client_id`` belongs to ``issuer``."""
        with self._lock:
            self._bindings[client_id] = issuer

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

    def load_issuer_binding(self, client_id: str) -> str | None:
        """The issuer the pre-registered ``client_id`` is bound to, or None.

        Raises:
            AuthError: ``auth_failed``: the directory or file is unsafe or malformed.
        """
        data = self._read(self._path("binding", client_id))
        if data is None:
            return None
        binding = _records.structure_record(data, _records.IssuerBinding, kind="issuer binding")
        if binding.client_id != client_id:
            raise _malformed("issuer binding", "it belongs to another client")
        return binding.issuer

    def save_issuer_binding(self, client_id: str, issuer: str) -> None:
        """Record that the pre-registered ``client_id`` belongs to ``issuer``.

        Raises:
            AuthError: ``auth_failed``: the directory is unsafe or not writable.
        """
        record = _records.unstructure_record(_records.IssuerBinding(client_id, issuer))
        self._write(self._path("binding", client_id), record)

    def __repr__(self) -> str:
        return f"<FileTokenStore {self._dir!r}>"

    # --- files ---

    def _path(self, kind: str, *key: str) -> str:
        return os.path.join(self._dir, f"{_record_name(kind, *key)}.json")

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
        return _decode_record(raw, "token file")

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


def _record_name(kind: str, *key: str) -> str:
    """The name of one record: its kind and the SHA-256 of its key (both stores use it)."""
    # NUL cannot occur in a URL, so the joined key is unambiguous.
    digest = hashlib.sha256("\0".join((kind, *key)).encode("utf-8", "surrogatepass"))
    return f"{kind}-{digest.hexdigest()}"


def _decode_record(raw: bytes, what: str) -> Any:
    if len(raw) > MAX_FILE_BYTES:
        raise _malformed(what, "it is too large")
    try:
        return jsonio.decode(raw)
    except jsonio.FrameError:
        raise _malformed(what, "it is not JSON") from None


_KEYRING_HINT = (
    "KeyringTokenStore needs the optional keyring package: "
    "install it with pip install 'mcpclient[keyring]'"
)


class KeyringTokenStore:
    """A :class:`TokenStore` in the OS keychain, through the ``keyring`` package.

    Needs the ``keyring`` extra (``pip install 'mcpclient[keyring]'``). Each
    record is one password entry of ``service``, named like a
    :class:`FileTokenStore` file (the kind and the SHA-256 of its key, so
    tokens stay keyed by ``(issuer, resource)`` and registrations by
    ``issuer``), and holds exactly what that file would hold (the same JSON,
    at most :data:`MAX_FILE_BYTES`).

    Example::

        OAuth(store=KeyringTokenStore(service="my-app"))

    Raises:
        ConfigError: ``keyring`` is not installed (the message names the extra).

    Thread safety: every method may be called from any thread (the keychain
    serializes access; this store keeps no state of its own).
    """

    def __init__(self, service: str = "mcpclient") -> None:
        if not isinstance(service, str) or not service:
            raise ConfigError("KeyringTokenStore.service must be a non-empty str")
        try:
            self._keyring: Any = importlib.import_module("keyring")
        except ImportError:
            raise ConfigError(_KEYRING_HINT) from None
        self._service = service

    @property
    def service(self) -> str:
        """The keychain service the records are kept under."""
        return self._service

    def load_tokens(self, issuer: str, resource: str) -> TokenSet | None:
        """The tokens stored for ``(issuer, resource)``, or None.

        Raises:
            AuthError: ``auth_failed``: the keychain failed or the record is malformed.
        """
        data = self._read(_record_name("tokens", issuer, resource))
        if data is None:
            return None
        tokens = TokenSet.from_json(data)
        if (tokens.issuer, tokens.resource) != (issuer, resource):
            raise _malformed("token set", "it belongs to another issuer or resource")
        return tokens

    def save_tokens(self, tokens: TokenSet) -> None:
        """Store ``tokens`` under ``(tokens.issuer, tokens.resource)``.

        Raises:
            AuthError: ``auth_failed``: the keychain refused the record.
        """
        if not isinstance(tokens, TokenSet):
            raise TypeError("save_tokens takes a TokenSet")
        self._write(_record_name("tokens", tokens.issuer, tokens.resource), tokens.to_json())

    def delete_tokens(self, issuer: str, resource: str) -> None:
        """Forget the tokens for ``(issuer, resource)`` (no error when absent)."""
        name = _record_name("tokens", issuer, resource)
        errors = importlib.import_module("keyring.errors")
        try:
            self._keyring.delete_password(self._service, name)
        except errors.PasswordDeleteError:
            pass
        except Exception as exc:  # a backend's own failure: classified, never raw
            raise self._failure("cannot delete a record", exc) from None

    def load_client(self, issuer: str) -> ClientInfo | None:
        """The client registered with ``issuer``, or None.

        Raises:
            AuthError: ``auth_failed``: the keychain failed or the record is malformed.
        """
        data = self._read(_record_name("client", issuer))
        if data is None:
            return None
        client = ClientInfo.from_json(data)
        if client.issuer != issuer:
            raise _malformed("client registration", "it belongs to another issuer")
        return client

    def save_client(self, client: ClientInfo) -> None:
        """Store ``client`` under ``client.issuer``.

        Raises:
            AuthError: ``auth_failed``: the keychain refused the record.
        """
        if not isinstance(client, ClientInfo):
            raise TypeError("save_client takes a ClientInfo")
        self._write(_record_name("client", client.issuer), client.to_json())

    def load_issuer_binding(self, client_id: str) -> str | None:
        """The issuer the pre-registered ``client_id`` is bound to, or None."""
        data = self._read(_record_name("binding", client_id))
        if data is None:
            return None
        binding = _records.structure_record(data, _records.IssuerBinding, kind="issuer binding")
        if binding.client_id != client_id:
            raise _malformed("issuer binding", "it belongs to another client")
        return binding.issuer

    def save_issuer_binding(self, client_id: str, issuer: str) -> None:
        """Record that the pre-registered ``client_id`` belongs to ``issuer``."""
        record = _records.unstructure_record(_records.IssuerBinding(client_id, issuer))
        self._write(_record_name("binding", client_id), record)

    def __repr__(self) -> str:
        return f"<KeyringTokenStore {self._service!r}>"

    def _read(self, name: str) -> Any:
        try:
            raw = self._keyring.get_password(self._service, name)
        except Exception as exc:  # a backend's own failure: classified, never raw
            raise self._failure("cannot read a record", exc) from None
        if raw is None:
            return None
        if not isinstance(raw, str):
            raise _malformed("keychain record", "it is not text")
        return _decode_record(raw.encode("utf-8", "surrogatepass"), "keychain record")

    def _write(self, name: str, data: Mapping[str, Any]) -> None:
        raw = jsonio.encode(data)
        if len(raw) > MAX_FILE_BYTES:
            raise _malformed("keychain record", "it is too large")
        try:
            self._keyring.set_password(self._service, name, raw.decode("utf-8"))
        except Exception as exc:  # a backend's own failure: classified, never raw
            raise self._failure("cannot write a record", exc) from None

    def _failure(self, what: str, exc: Exception) -> AuthError:
        return AuthError(
            f"keychain token store {self._service!r}: {what} ({type(exc).__name__})",
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
