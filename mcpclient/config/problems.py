"""Collecting what is wrong with a configuration file, and where.

A load never stops at the first problem: every error and warning is gathered
with its location, ``"<file>:<json pointer>"`` (RFC 6901, so
``/mcpServers/github/env/TOKEN``), and the errors are raised together as one
:class:`~mcpclient.ConfigFileError`. A message names keys and types, never a
value read from the file: any value may be a secret.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Sequence

from mcpclient.errors import ConfigFileError

__all__ = ["ConfigWarning", "Problems", "dotted", "pointer"]

log = logging.getLogger("mcpclient.config")
#: The problems named in an error's one-line message; ``problems`` has all.
_IN_MESSAGE = 5


class ConfigWarning(UserWarning):
    """Something in a configuration file was ignored or may not do what it says.

    Issued through :func:`warnings.warn` by :func:`~mcpclient.config.load`
    (an unknown key, an unset variable with ``strict=False``, a URL server in
    a stdio-only host...). Its text starts with the location.
    """


def pointer(path: Sequence[str | int]) -> str:
    """The JSON pointer of ``path`` (``["a", 0, "b/c"]`` → ``/a/0/b~1c``)."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def dotted(path: Sequence[str | int]) -> str:
    """The TOML dotted key of ``path`` (``["mcp_servers", "my srv"]`` → ``mcp_servers."my srv"``).

    A TOML file has no JSON pointer; its own spelling of a location is the
    dotted key (an array index is written ``[0]``).
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        key = part if _BARE_KEY.fullmatch(part) else '"' + part.replace('"', '\\"') + '"'
        out += ("." if out else "") + key
    return out


class Problems:
    """The errors and warnings found in one source.

    ``toml=True`` names locations by their dotted key (``mcp_servers.github``)
    instead of a JSON pointer.

    Thread safety: not thread safe; one per load.
    """

    def __init__(self, source: str, *, toml: bool = False) -> None:
        self.source = source
        self.toml = toml
        self.errors: list[str] = []
        self.warnings: list[str] = []

    def where(self, path: Sequence[str | int]) -> str:
        """``"<source>:<pointer>"`` (or ``"<source>:<dotted key>"``) for ``path``."""
        if self.toml:
            return f"{self.source}:{dotted(path) or '(top level)'}"
        return f"{self.source}:{pointer(path) or '/'}"

    def error(self, path: Sequence[str | int], message: str) -> None:
        """Record an error at ``path``."""
        self.errors.append(f"{self.where(path)}: {message}")

    def error_at(self, location: str, message: str) -> None:
        """Record an error at a location already formatted (``file:line:col``)."""
        self.errors.append(f"{location}: {message}")

    def warn(self, path: Sequence[str | int], message: str) -> None:
        """Record a warning at ``path``."""
        self.warnings.append(f"{self.where(path)}: {message}")

    def unknown_keys(
        self, entry: dict[str, object], known: frozenset[str], path: Sequence[str | int]
    ) -> None:
        """Warn about every key of ``entry`` outside ``known``."""
        for key in entry:
            if key not in known:
                self.warn([*path, key], "unknown key, ignored")

    def ignored(self, path: Sequence[str | int], what: str) -> None:
        """Warn that a known key is not supported by mcpclient and is ignored."""
        self.warn(path, f"{what}; not supported by mcpclient, ignored")

    def finish(self, stacklevel: int = 2) -> tuple[str, ...]:
        """Raise the errors as one ConfigFileError, else issue the warnings and return them.

        Raises:
            ConfigFileError: at least one error was recorded.
        """
        if self.errors:
            count = len(self.errors)
            shown = "; ".join(self.errors[:_IN_MESSAGE])
            more = f"; and {count - _IN_MESSAGE} more" if count > _IN_MESSAGE else ""
            noun = "problem" if count == 1 else "problems"
            raise ConfigFileError(
                f"{count} {noun} in {self.source}: {shown}{more}",
                problems=tuple(self.errors),
                op="load_config",
            )
        for text in self.warnings:
            log.debug("config warning: %s", text)
            warnings.warn(text, ConfigWarning, stacklevel=stacklevel + 1)
        return tuple(self.warnings)
