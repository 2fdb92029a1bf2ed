"""Consent before a project's own servers run: per directory and file digest, remembered.

A checkout's ``.mcp.json``, ``.cursor/mcp.json``, ``.vscode/mcp.json``,
``.gemini/settings.json``, ``.codex/config.toml`` or ``.zed/settings.json``
(the ``project`` and ``workspace`` scopes of :func:`mcpclient.config.discover`)
was written by whoever wrote the checkout: each server in it is a command
that runs as you. The hosts those files belong to ask before starting one
(Claude Code's project approval, VS Code's workspace trust), and so does
``mcpclient``: a project file's servers start only once its file is trusted,

* by a ``y`` on the terminal (stdin is a tty: the prompt shows the file and
  what each server runs), or
* by ``--trust-project`` (anywhere else, a script or CI),

and that consent is remembered for that directory and that file's SHA-256
in ``trusted-projects.json`` of the user's state directory
(``$XDG_STATE_HOME/mcpclient``, default ``~/.local/state/mcpclient``;
``~/Library/Application Support/mcpclient`` on macOS,
``%LOCALAPPDATA%\\mcpclient`` on Windows), written atomically (a private
temporary file, then ``os.replace``). A changed file has another digest and
needs consent again. ``--config FILE`` is the user's own choice, never a
project file; a project file that is also one of the user's own (the
project directory is the home) needs no consent.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import secrets
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from mcpclient._core.statedir import state_dir

_fcntl: Any
try:
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - Windows
    _fcntl = None

__all__ = [
    "PROJECT_SCOPES",
    "STORE_NAME",
    "Consent",
    "TrustStore",
    "file_digest",
    "state_dir",
    "terminal_consent",
]

#: The scopes of :func:`mcpclient.config.discover` that are files of the project directory.
PROJECT_SCOPES = frozenset({"project", "workspace"})
#: The file of the state directory that holds the consents.
STORE_NAME = "trusted-projects.json"
_FORMAT = 1
#: Bound on the store (it holds a digest per trusted file: kilobytes).
_MAX_STORE_BYTES = 4 * 1024 * 1024
#: Bound on a project file hashed (config.load refuses a larger one anyway).
_MAX_FILE_BYTES = 4 * 1024 * 1024

#: Asks a person whether to trust a project file: (path, description lines) → yes/no.
Consent = Callable[[str, list[str]], bool]


def _read(path: str | os.PathLike[str], limit: int) -> bytes:
    """A regular file's bytes, to ``limit`` (OSError or ValueError otherwise).

    ``mcpclient.config`` is imported here, on first use, as the commands
    that read configurations do (:mod:`mcpclient.cli.optional`).
    """
    files = importlib.import_module("mcpclient.config.files")
    data: bytes = files.read_regular(path, limit)
    return data


def file_digest(path: str | os.PathLike[str]) -> str | None:
    """The SHA-256 of the file's bytes (hex), or None when it cannot be read."""
    try:
        return hashlib.sha256(_read(path, _MAX_FILE_BYTES)).hexdigest()
    except (OSError, ValueError):  # FileReadError is a ValueError
        return None


class TrustStore:
    """The remembered consents: project directory → file → digest.

    A missing, unreadable or malformed store trusts nothing (and is replaced
    on the next consent). Writes re-read the store under an advisory lock
    (where the platform has ``fcntl``) so two commands consenting at once
    both keep theirs.

    Thread safety: one per command; not shared between threads.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / STORE_NAME

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            document: Any = json.loads(_read(self.path, _MAX_STORE_BYTES))
        except (OSError, ValueError, RecursionError):
            return {}
        projects = document.get("projects") if isinstance(document, dict) else None
        if not isinstance(projects, dict):
            return {}
        out: dict[str, dict[str, str]] = {}
        for directory, files in projects.items():
            if isinstance(directory, str) and isinstance(files, dict):
                out[directory] = {
                    f: d for f, d in files.items() if isinstance(f, str) and isinstance(d, str)
                }
        return out

    def trusted(self, project: str, file: str, digest: str | None) -> bool:
        """Whether ``file`` of ``project`` was trusted with exactly this ``digest``."""
        if digest is None:
            return False
        return self._read().get(project, {}).get(file) == digest

    def remember(self, project: str, file: str, digest: str) -> None:
        """Record consent for ``file`` of ``project`` at ``digest``.

        Raises:
            OSError: the state directory or the store cannot be written.
        """
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        with self._locked():
            projects = self._read()
            projects.setdefault(project, {})[file] = digest
            raw = json.dumps({"version": _FORMAT, "projects": projects}, indent=1, sort_keys=True)
            temp = self.directory / f".{STORE_NAME}.{secrets.token_hex(8)}.tmp"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
            fd = os.open(temp, flags, 0o600)
            try:
                try:
                    os.write(fd, raw.encode("utf-8"))
                    os.fsync(fd)
                finally:
                    os.close(fd)
                os.replace(temp, self.path)
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if _fcntl is None:  # Windows: the replace is still atomic, only a race may lose one
            yield
            return
        fd = os.open(self.directory / f".{STORE_NAME}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            _fcntl.flock(fd, _fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def terminal_consent() -> Consent | None:
    """A y/N question on the terminal, or None when stdin is not one (nobody to ask)."""
    if not sys.stdin.isatty():
        return None

    def ask(path: str, lines: list[str]) -> bool:
        sys.stderr.write(
            f"mcpclient: the project file {path} defines servers that run as you:\n"
            + "".join(f"  {line}\n" for line in lines)
            + "Trust this file's servers (remembered until the file changes)? [y/N] "
        )
        sys.stderr.flush()
        answer = sys.stdin.readline()
        return answer.strip().lower() in ("y", "yes")

    return ask


def own_paths(entries: list[Any]) -> set[str]:
    """The resolved paths of the discovered files that are the user's own (not a project's)."""
    return {str(Path(e.path).resolve()) for e in entries if e.scope not in PROJECT_SCOPES}


class ProjectTrust:
    """This command's rule for project files: what is trusted, and how consent is got.

    Thread safety: one per command, used from its thread.
    """

    def __init__(
        self,
        environ: Mapping[str, str],
        *,
        flag: bool = False,
        consent: Consent | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> None:
        self.store = TrustStore(state_dir(environ))
        #: ``--trust-project`` was given.
        self.flag = flag
        self.consent = consent
        self.project = str(Path(cwd if cwd is not None else os.getcwd()).resolve())

    def is_project(self, entry: Any, own: set[str]) -> bool:
        """Whether discovered ``entry`` is a project file (one the user did not write)."""
        if entry.scope not in PROJECT_SCOPES:
            return False
        return str(Path(entry.path).resolve()) not in own

    def stored(self, path: str | os.PathLike[str]) -> bool:
        """Whether consent for the file at ``path``, as it is now, was remembered."""
        resolved = Path(path).resolve()
        return self.store.trusted(self.project, str(resolved), file_digest(resolved))

    def grant(self, path: str | os.PathLike[str], lines: list[str]) -> bool:
        """Consent for the file at ``path`` now: ``--trust-project`` or a yes on the terminal.

        The consent is remembered for the file's current digest; a store that
        cannot be written does not undo it for this command.
        """
        resolved = Path(path).resolve()
        if self.stored(resolved):
            return True
        if not self.flag and (self.consent is None or not self.consent(str(path), lines)):
            return False
        digest = file_digest(resolved)
        if digest is not None:
            with contextlib.suppress(OSError):
                self.store.remember(self.project, str(resolved), digest)
        return True
