"""OAuth protection for the HTTP test server (the ``--oauth-*`` flags).

A :class:`ResourceGuard` sits in front of the MCP endpoints of
:mod:`mcpclient.testing.http_server`: it serves the protected resource
metadata (RFC 9728), checks the access token of every request to ``/mcp``,
``/sse`` and ``/messages`` (401/403 with ``WWW-Authenticate`` challenges),
verifies DPoP proofs, answers the ``/oauth-control`` endpoint tests use to
change it at run time, and can forward the 2025-03-26 default OAuth endpoints
to an authorization server. The behavior is documented in
``docs/testing-server.md`` ("OAuth protection"). Standard library only,
except that checking a DPoP proof imports PyJWT (see
:mod:`mcpclient.testing.oauth_common`).
"""

from __future__ import annotations

import collections
import dataclasses
import http.client
import json
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from .oauth_common import (
    DPOP_ALGS,
    PRM_MODES,
    ProofError,
    ReplayCache,
    TokenError,
    decode_hs256,
    verify_dpop_proof,
)

__all__ = ["CONTROL_PATH", "PRM_MODES", "GuardAnswer", "GuardConfig", "ResourceGuard"]

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
#: Where the metadata lives in ``challenge`` mode: only the challenge names it.
PRM_CHALLENGE_PATH = "/custom/oauth-protected-resource"
CONTROL_PATH = "/oauth-control"
PROTECTED_PATHS = ("/mcp", "/sse", "/messages")
LEGACY_AS_PATHS = ("/.well-known/oauth-authorization-server", "/authorize", "/token", "/register")
#: Response headers the legacy proxy passes back.
PROXIED_HEADERS = ("content-type", "location", "dpop-nonce", "www-authenticate", "cache-control")
PROXY_TIMEOUT = 10.0
PROXY_MAX_BYTES = 1 << 20
LOG_ENTRIES = 500


@dataclasses.dataclass(frozen=True)
class GuardConfig:
    """The protection knobs (one per ``--oauth-*`` flag; see ``docs/testing-server.md``).

    Attributes:
        issuer: The authorization server trusted (listed in the metadata; the
            tokens' ``iss``).
        secret: The HS256 key its access tokens are signed with.
        prm: Where the resource metadata is served: ``"challenge"`` (at
            :data:`PRM_CHALLENGE_PATH`, named by ``resource_metadata`` in every
            challenge), ``"path"`` (``/.well-known/oauth-protected-resource/mcp``),
            ``"root"`` (``/.well-known/oauth-protected-resource``) or ``"none"``.
        prm_resource: The ``resource`` the metadata claims (default: the
            server's own ``http://HOST:PORT/mcp``). Tokens' ``aud`` must be
            that resource identifier or this claimed value (a client that
            sent the claimed ``resource`` verbatim, as RFC 8707 asks).
        prm_scopes: The metadata's ``scopes_supported`` (None: omitted).
        scopes: Scopes every request's token needs (else 403).
        challenge_scope: The ``scope`` of 401 challenges (None: ``scopes``;
            empty: no ``scope`` parameter).
        tool_scopes: Extra scopes a ``tools/call`` of a tool needs (else 403).
        dpop: Require DPoP-bound tokens (``Authorization: DPoP`` + a proof).
        dpop_nonce: DPoP proofs need the server nonce (401 ``use_dpop_nonce``).
        legacy_as: Forward ``/.well-known/oauth-authorization-server``,
            ``/authorize``, ``/token`` and ``/register`` to this base URL (an
            authorization server at the MCP server's origin, as 2025-03-26
            clients expect).
    """

    issuer: str
    secret: bytes = dataclasses.field(repr=False)
    prm: str = "path"
    prm_resource: str | None = None
    prm_scopes: tuple[str, ...] | None = None
    scopes: tuple[str, ...] = ()
    challenge_scope: tuple[str, ...] | None = None
    tool_scopes: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    dpop: bool = False
    dpop_nonce: bool = False
    legacy_as: str | None = None

    def __post_init__(self) -> None:
        """Reject values the guard could not act on."""
        if not self.issuer:
            raise ValueError("issuer must not be empty")
        if not self.secret:
            raise ValueError("secret must not be empty")
        if self.prm not in PRM_MODES:
            raise ValueError(f"prm must be one of {PRM_MODES}")
        if self.legacy_as is not None and urlsplit(self.legacy_as).scheme != "http":
            raise ValueError("legacy_as must be an http:// URL")


@dataclasses.dataclass(frozen=True)
class GuardAnswer:
    """An answer the guard gives instead of the MCP server."""

    status: int
    body: bytes
    content_type: str | None
    headers: tuple[tuple[str, str], ...] = ()


def _json_answer(
    status: int, document: Any, headers: tuple[tuple[str, str], ...] = ()
) -> GuardAnswer:
    return GuardAnswer(status, json.dumps(document).encode("utf-8"), "application/json", headers)


def _header_values(headers: Sequence[tuple[str, str]], name: str) -> list[str]:
    return [value for key, value in headers if key.lower() == name.lower()]


def _tool_name(method: str, body: bytes) -> str | None:
    """The tool a POSTed ``tools/call`` names, else None."""
    if method != "POST" or not body:
        return None
    try:
        message = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return name if isinstance(name, str) else None


@dataclasses.dataclass(frozen=True)
class _Request:
    """What the token check looks at in one request."""

    method: str
    path: str
    headers: Sequence[tuple[str, str]]
    tool: str | None


class _RejectedError(Exception):
    """A request the guard refuses: the challenge to answer and why."""

    def __init__(
        self,
        status: int,
        reason: str,
        *,
        error: str | None = None,
        scope: Sequence[str] | None = None,
        nonce: bool = False,
    ) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.error = error
        self.scope = scope
        self.nonce = nonce


class ResourceGuard:
    """The protected-resource side of the HTTP test server.

    Thread safety: every method may be called from any thread.
    """

    def __init__(self, config: GuardConfig) -> None:
        """Start with ``config``; call :meth:`bind` once the port is known."""
        self._config = config
        self._lock = threading.Lock()
        self._base = "http://127.0.0.1"
        self._revoked_before = 0.0
        self._nonce = secrets.token_urlsafe(16)
        self._replay = ReplayCache()
        self._log: collections.deque[dict[str, Any]] = collections.deque(maxlen=LOG_ENTRIES)

    def bind(self, base_url: str) -> None:
        """Set the server's own origin, ``http://HOST:PORT``."""
        with self._lock:
            self._base = base_url

    @property
    def resource(self) -> str:
        """The resource identifier tokens must name in ``aud``: ``<origin>/mcp``."""
        with self._lock:
            return self._base + "/mcp"

    def _prm_path(self, config: GuardConfig) -> str | None:
        return {
            "challenge": PRM_CHALLENGE_PATH,
            "path": PRM_WELL_KNOWN + "/mcp",
            "root": PRM_WELL_KNOWN,
        }.get(config.prm)

    def metadata(self) -> dict[str, Any]:
        """The protected resource metadata document (RFC 9728)."""
        cfg = self.config
        doc: dict[str, Any] = {
            "resource": cfg.prm_resource if cfg.prm_resource is not None else self.resource,
            "authorization_servers": [cfg.issuer],
            "bearer_methods_supported": ["header"],
        }
        if cfg.prm_scopes is not None:
            doc["scopes_supported"] = list(cfg.prm_scopes)
        if cfg.dpop:
            doc["dpop_signing_alg_values_supported"] = list(DPOP_ALGS)
            doc["dpop_bound_access_tokens_required"] = True
        return doc

    @property
    def config(self) -> GuardConfig:
        """The knobs in force."""
        with self._lock:
            return self._config

    # -- requests

    def handle(
        self, method: str, target: str, headers: Sequence[tuple[str, str]], body: bytes
    ) -> GuardAnswer | None:
        """The guard's answer to a request, or None to let the MCP server answer it."""
        cfg = self.config
        path = urlsplit(target).path
        if path == CONTROL_PATH:
            return self._control(method, body)
        if path == self._prm_path(cfg) and method == "GET":
            return _json_answer(200, self.metadata())
        if cfg.legacy_as is not None and path in LEGACY_AS_PATHS:
            return _proxy(cfg.legacy_as, method, target, headers, body)
        if path not in PROTECTED_PATHS:
            return None
        request = _Request(method, path, headers, _tool_name(method, body))
        entry: dict[str, Any] = {"method": method, "path": path, "tool": request.tool}
        try:
            self._check(cfg, request, entry)
        except _RejectedError as rejection:
            entry.update(status=rejection.status, reason=rejection.reason)
            self._append_log(entry)
            return self._challenge(cfg, rejection, entry.get("scheme"))
        entry.update(status=None, reason="accepted")
        self._append_log(entry)
        return None

    def _append_log(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self._log.append(entry)

    def _check(self, cfg: GuardConfig, request: _Request, entry: dict[str, Any]) -> None:
        values = _header_values(request.headers, "Authorization")
        if not values:
            raise _RejectedError(401, "no Authorization header")
        if len(values) > 1:
            raise _RejectedError(401, "several Authorization headers", error="invalid_request")
        scheme, _, token = values[0].partition(" ")
        scheme, token = scheme.lower(), token.strip()
        entry["scheme"] = scheme
        if scheme not in ("bearer", "dpop") or not token:
            raise _RejectedError(401, "not a Bearer or DPoP credential", error="invalid_token")
        claims = self._claims(cfg, token)
        entry.update(client_id=claims.get("client_id"), jti=claims.get("jti"))
        cnf = claims.get("cnf")
        jkt = cnf.get("jkt") if isinstance(cnf, dict) else None
        if scheme == "bearer":
            if cfg.dpop:
                raise _RejectedError(401, "DPoP is required", error="invalid_token")
            if jkt is not None:
                reason = "a DPoP-bound token sent as Bearer"
                raise _RejectedError(401, reason, error="invalid_token")
        else:
            self._check_proof(cfg, request, token, jkt)
        granted = str(claims.get("scope", "")).split()
        entry["scope"] = " ".join(granted)
        needed = list(cfg.scopes)
        needed += [s for s in cfg.tool_scopes.get(request.tool or "", ()) if s not in needed]
        if not set(needed) <= set(granted):
            error = "insufficient_scope"
            raise _RejectedError(403, "insufficient scope", error=error, scope=needed)

    def _claims(self, cfg: GuardConfig, token: str) -> dict[str, Any]:
        try:
            claims = decode_hs256(token, cfg.secret)
        except TokenError as exc:
            raise _RejectedError(401, str(exc), error="invalid_token") from exc
        with self._lock:
            revoked_before = self._revoked_before
        iat, exp = claims.get("iat"), claims.get("exp")
        if claims.get("iss") != cfg.issuer:
            raise _RejectedError(401, "token issuer is not trusted", error="invalid_token")
        audiences = {self.resource, cfg.prm_resource}
        if claims.get("aud") not in audiences - {None}:
            raise _RejectedError(401, "token audience is not this resource", error="invalid_token")
        if isinstance(exp, int | float) and exp <= time.time():
            raise _RejectedError(401, "token expired", error="invalid_token")
        if not isinstance(iat, int | float) or iat <= revoked_before:
            raise _RejectedError(401, "token revoked", error="invalid_token")
        return claims

    def _check_proof(self, cfg: GuardConfig, request: _Request, token: str, jkt: Any) -> None:
        if not isinstance(jkt, str):
            raise _RejectedError(401, "a DPoP credential without cnf.jkt", error="invalid_token")
        proofs = _header_values(request.headers, "DPoP")
        if len(proofs) != 1:
            raise _RejectedError(401, "exactly one DPoP proof needed", error="invalid_dpop_proof")
        hosts = _header_values(request.headers, "Host")
        url = f"http://{hosts[0]}{request.path}" if hosts else self.resource
        with self._lock:
            nonce = self._nonce if cfg.dpop_nonce else None
        try:
            thumbprint = verify_dpop_proof(
                proofs[0],
                method=request.method,
                url=url,
                replay=self._replay,
                nonce=nonce,
                access_token=token,
            )
        except ProofError as exc:
            if exc.use_nonce:
                raise _RejectedError(401, exc.reason, error="use_dpop_nonce", nonce=True) from exc
            raise _RejectedError(401, exc.reason, error="invalid_dpop_proof") from exc
        if thumbprint != jkt:
            raise _RejectedError(401, "proof key is not the token's", error="invalid_dpop_proof")

    def _challenge(
        self, cfg: GuardConfig, rejection: _RejectedError, used_scheme: str | None
    ) -> GuardAnswer:
        """The 401/403 answer with its ``WWW-Authenticate`` (and ``DPoP-Nonce``)."""
        dpop = cfg.dpop or used_scheme == "dpop"
        params: list[tuple[str, str]] = []
        if rejection.error is not None:
            params += [("error", rejection.error), ("error_description", rejection.reason)]
        scope = rejection.scope
        if scope is None:
            scope = cfg.challenge_scope if cfg.challenge_scope is not None else cfg.scopes
        if scope:
            params.append(("scope", " ".join(scope)))
        if cfg.prm == "challenge":
            with self._lock:
                params.append(("resource_metadata", self._base + PRM_CHALLENGE_PATH))
        if dpop:
            params.append(("algs", " ".join(DPOP_ALGS)))
        rendered = ", ".join(f'{name}="{value}"' for name, value in params)
        scheme = "DPoP" if dpop else "Bearer"
        headers = [("WWW-Authenticate", f"{scheme} {rendered}" if rendered else scheme)]
        if rejection.nonce or (dpop and cfg.dpop_nonce):
            with self._lock:
                headers.append(("DPoP-Nonce", self._nonce))
        document = {
            "error": rejection.error or "unauthorized",
            "error_description": rejection.reason,
        }
        return _json_answer(rejection.status, document, tuple(headers))

    # -- the control endpoint

    def state(self) -> dict[str, Any]:
        """What ``GET /oauth-control`` answers: the knobs (no secret), counters and log."""
        cfg = self.config
        with self._lock:
            return {
                "issuer": cfg.issuer,
                "resource": self._base + "/mcp",
                "prm": cfg.prm,
                "prm_resource": cfg.prm_resource,
                "prm_scopes": None if cfg.prm_scopes is None else list(cfg.prm_scopes),
                "scopes": list(cfg.scopes),
                "challenge_scope": (
                    None if cfg.challenge_scope is None else list(cfg.challenge_scope)
                ),
                "tool_scopes": {name: list(s) for name, s in cfg.tool_scopes.items()},
                "dpop": cfg.dpop,
                "dpop_nonce": cfg.dpop_nonce,
                "current_dpop_nonce": self._nonce,
                "legacy_as": cfg.legacy_as,
                "revoked_before": self._revoked_before,
                "log": list(self._log),
            }

    def _control(self, method: str, body: bytes) -> GuardAnswer:
        if method == "GET":
            return _json_answer(200, self.state())
        if method != "POST":
            return _json_answer(405, {"error": "GET or POST"}, (("Allow", "GET, POST"),))
        try:
            request = json.loads(body.decode("utf-8") or "{}")
            if not isinstance(request, dict):
                raise ValueError("the body must be a JSON object")
            self.control(request)
        except (ValueError, TypeError, UnicodeDecodeError, RecursionError) as exc:
            return _json_answer(400, {"error": str(exc)[:200]})
        return _json_answer(200, self.state())

    def control(self, request: Mapping[str, Any]) -> None:
        """Apply a control request (the keys are documented with ``/oauth-control``).

        Raises:
            ValueError: an unknown key or a bad value (nothing is changed).
        """
        changes: dict[str, Any] = {}
        actions = {"revoke", "rotate_dpop_nonce", "clear_log"}
        for key, value in request.items():
            if key in actions:
                if value is not True:
                    raise ValueError(f"{key} must be true")
            elif key in _CONVERTERS:
                changes[key] = _CONVERTERS[key](value)
            else:
                raise ValueError(f"unknown control key {key!r}")
        with self._lock:
            config = dataclasses.replace(self._config, **changes)
            self._config = config
            if request.get("revoke"):
                self._revoked_before = time.time()
            if request.get("rotate_dpop_nonce"):
                self._nonce = secrets.token_urlsafe(16)
            if request.get("clear_log"):
                self._log.clear()


def _strings(value: Any) -> tuple[str, ...]:
    """A scope list from a JSON list or a space-separated string."""
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError("expected a list of strings or a space-separated string")


def _optional(convert: Any) -> Any:
    return lambda value: None if value is None else convert(value)


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("expected a non-empty string")
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return value


def _tool_scopes(value: Any) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise ValueError("tool_scopes must map tool names to scopes")
    return {str(name): _strings(scopes) for name, scopes in value.items()}


_CONVERTERS: dict[str, Any] = {
    "issuer": _text,
    "secret": lambda value: bytes.fromhex(_text(value)),
    "prm": _text,
    "prm_resource": _optional(_text),
    "prm_scopes": _optional(_strings),
    "scopes": _strings,
    "challenge_scope": _optional(_strings),
    "tool_scopes": _tool_scopes,
    "dpop": _flag,
    "dpop_nonce": _flag,
    "legacy_as": _optional(_text),
}


def _proxy(
    base: str, method: str, target: str, headers: Sequence[tuple[str, str]], body: bytes
) -> GuardAnswer:
    """Forward one request to the authorization server at ``base`` (http only)."""
    parts = urlsplit(base)
    skip = {"host", "connection", "content-length", "transfer-encoding", "keep-alive"}
    forwarded = {k: v for k, v in headers if k.lower() not in skip}
    connection = http.client.HTTPConnection(
        parts.hostname or "127.0.0.1", parts.port or 80, timeout=PROXY_TIMEOUT
    )
    try:
        connection.request(method, parts.path.rstrip("/") + target, body or None, forwarded)
        response = connection.getresponse()
        data = response.read(PROXY_MAX_BYTES)
        kept = tuple((k, v) for k, v in response.getheaders() if k.lower() in PROXIED_HEADERS)
        content_type = next((v for k, v in kept if k.lower() == "content-type"), None)
        kept = tuple((k, v) for k, v in kept if k.lower() != "content-type")
        return GuardAnswer(response.status, data, content_type, kept)
    except (OSError, http.client.HTTPException):
        return _json_answer(502, {"error": "the authorization server did not answer"})
    finally:
        connection.close()
