"""Configured secrets, redacted wherever text a server sent is quoted.

A server may echo back what it was sent: a debugging error message that
quotes the request's headers, its URL with the API key in the path or query,
the bearer token. Every message the library builds from such text goes
through :func:`mcpclient._core.limits.normalize_message` (an error's
message, server text in events, the span status built from an error), and
that is where :func:`redact` replaces each known secret by ``[redacted]``.

Known secrets are the union of:

* the secrets of every live :class:`Redactor` (registered with
  :func:`register`; the registry holds them weakly, so a secret is known for
  as long as the object that registered it keeps its redactor: a binding
  registers its definition's header values, URL credentials and secret
  environment values, an OAuth provider its client secret);
* the last :data:`MAX_NOTED` credentials :func:`note` was told about as they
  were sent (bearer tokens an ``auth`` callable or provider produced).

A secret shorter than :data:`MIN_SECRET_CHARS` is not redacted (``1`` or
``true`` would blank out every message). Each secret is also matched in its
URL-encoded and whitespace-normalized forms.

Threads: none.

Locks: ``_lock`` guards the registry and the noted credentials; held only to
copy them, never while replacing.

Shutdown: nothing to stop.
"""

from __future__ import annotations

import collections
import re
import threading
import weakref
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

__all__ = ["MARK", "MAX_NOTED", "MIN_SECRET_CHARS", "Redactor", "note", "redact", "register"]

#: What a secret is replaced by.
MARK = "[redacted]"
#: Secrets shorter than this are left alone.
MIN_SECRET_CHARS = 6
#: How many credentials noted as sent are remembered (the most recent).
MAX_NOTED = 256

_SPACES = re.compile(r"\s+")

_lock = threading.Lock()
_live: weakref.WeakSet[Redactor] = weakref.WeakSet()
_noted: collections.OrderedDict[str, None] = collections.OrderedDict()
# The sorted union, rebuilt when the registry changes (None: stale).
_cache: tuple[str, ...] | None = ()


def _forms(secret: str) -> set[str]:
    """``secret`` as a server may quote it: verbatim, URL-encoded, whitespace collapsed."""
    forms = {secret, quote(secret, safe=""), quote_plus(secret, safe=""), quote(secret)}
    forms.add(_SPACES.sub(" ", secret).strip())
    return {form for form in forms if len(form) >= MIN_SECRET_CHARS}


class Redactor:
    """A set of secrets to redact, known to :func:`redact` while registered and alive.

    Thread safety: immutable once built.
    """

    __slots__ = ("__weakref__", "secrets")

    def __init__(self, secrets: Iterable[str | None]) -> None:
        found: set[str] = set()
        for secret in secrets:
            if isinstance(secret, str):
                found |= _forms(secret)
        self.secrets = frozenset(found)

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def __repr__(self) -> str:
        return f"<Redactor secrets={len(self.secrets)}>"


def register(redactor: Redactor) -> Redactor:
    """Make ``redactor``'s secrets known for as long as it is alive; returns it."""
    global _cache
    if redactor:
        with _lock:
            _live.add(redactor)
            _cache = None
            weakref.finalize(redactor, _stale)
    return redactor


def note(credential: str | None) -> None:
    """Remember a credential as it is sent (a bearer token), among the last :data:`MAX_NOTED`."""
    global _cache
    if not isinstance(credential, str) or len(credential) < MIN_SECRET_CHARS:
        return
    with _lock:
        if credential in _noted:
            _noted.move_to_end(credential)
            return
        _noted[credential] = None
        while len(_noted) > MAX_NOTED:
            _noted.popitem(last=False)
        _cache = None


def _stale() -> None:
    global _cache
    with _lock:
        _cache = None


def _secrets() -> tuple[str, ...]:
    global _cache
    with _lock:
        cached = _cache
        if cached is not None:
            return cached
        found: set[str] = set()
        for redactor in list(_live):
            found |= redactor.secrets
        for credential in _noted:
            found |= _forms(credential)
        # Longest first: a secret that contains another is replaced whole.
        cached = _cache = tuple(sorted(found, key=len, reverse=True))
    return cached


def redact(text: str) -> str:
    """``text`` with every known secret replaced by :data:`MARK`."""
    secrets = _secrets()
    if not secrets:
        return text
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MARK)
    return text
