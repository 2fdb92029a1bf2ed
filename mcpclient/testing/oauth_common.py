"""Token and proof helpers shared by the OAuth test peers.

The in-process authorization server (:mod:`mcpclient.testing.auth_server`) and
the protected mode of the HTTP test server (:mod:`mcpclient.testing.oauth_guard`)
agree on one access-token format: a JWT signed with HS256 under a secret both
know, carrying ``iss``, ``sub``, ``aud`` (the resource), ``client_id``,
``scope``, ``iat``, ``exp`` and, for DPoP-bound tokens, ``cnf.jkt``. HS256 is
done here with the standard library, so a protected server that does not use
DPoP needs nothing else. DPoP proofs (RFC 9449) use asymmetric keys: verifying
one imports PyJWT (and through it ``cryptography``) lazily, at the first proof.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "ASYMMETRIC_ALGS",
    "DPOP_ALGS",
    "PRM_MODES",
    "ProofError",
    "ReplayCache",
    "TokenError",
    "b64url",
    "b64url_decode",
    "decode_hs256",
    "encode_hs256",
    "jwk_thumbprint",
    "normalize_htu",
    "token_hash",
    "verify_dpop_proof",
]

#: Where a protected resource publishes its metadata (``--oauth-prm``); here, not in
#: oauth_guard, so the server's flag parser does not import the HTTP guard in stdio mode.
PRM_MODES = ("challenge", "path", "root", "none")

#: Signature algorithms accepted for client assertions and DPoP proofs (never HS*/none).
ASYMMETRIC_ALGS: tuple[str, ...] = (
    "ES256",
    "ES384",
    "ES512",
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "EdDSA",
)
#: What the peers advertise in ``dpop_signing_alg_values_supported`` / ``algs``.
DPOP_ALGS: tuple[str, ...] = ("ES256", "RS256", "PS256", "EdDSA")
#: A JWT longer than this is refused unparsed.
MAX_JWT_CHARS = 16384
#: How old (seconds) a DPoP proof's ``iat`` may be, and how far in the future.
PROOF_MAX_AGE = 60.0
PROOF_FUTURE_SKEW = 5.0
_PRIVATE_JWK_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
_THUMBPRINT_MEMBERS = {
    "EC": ("crv", "kty", "x", "y"),
    "RSA": ("e", "kty", "n"),
    "OKP": ("crv", "kty", "x"),
}


class TokenError(Exception):
    """An access token that does not verify; the message says why (never the token)."""


class ProofError(Exception):
    """A DPoP proof that does not verify.

    ``use_nonce`` is True when the only problem is a missing or stale server
    nonce: the peer answers ``use_dpop_nonce`` with a fresh ``DPoP-Nonce``.
    """

    def __init__(self, reason: str, *, use_nonce: bool = False) -> None:
        """Keep the reason (safe to show: it never quotes the proof)."""
        super().__init__(reason)
        self.reason = reason
        self.use_nonce = use_nonce


def b64url(data: bytes) -> str:
    """Base64url without padding (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Decode unpadded base64url; raises ValueError on anything else."""
    if not text.isascii() or any(c in text for c in "+/="):
        raise ValueError("not base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except binascii.Error as exc:
        raise ValueError("not base64url") from exc


def _compact_json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode("utf-8")


def encode_hs256(claims: Mapping[str, Any], secret: bytes, *, typ: str = "at+jwt") -> str:
    """A compact JWT over ``claims`` signed with HMAC-SHA256 under ``secret``."""
    header = b64url(_compact_json({"alg": "HS256", "typ": typ}))
    signing_input = f"{header}.{b64url(_compact_json(dict(claims)))}"
    mac = hmac.new(secret, signing_input.encode("ascii"), hashlib.sha256).digest()
    return f"{signing_input}.{b64url(mac)}"


def _json_part(part: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(b64url_decode(part))
    except (ValueError, RecursionError) as exc:
        raise TokenError(f"malformed token {what}") from exc
    if not isinstance(value, dict):
        raise TokenError(f"malformed token {what}")
    return value


def decode_hs256(token: str, secret: bytes) -> dict[str, Any]:
    """The claims of an HS256 JWT whose signature verifies under ``secret``.

    Only the signature and the shape are checked here; the caller checks the
    claims (issuer, audience, expiry...).

    Raises:
        TokenError: the token is malformed, not HS256, or its signature is wrong.
    """
    if len(token) > MAX_JWT_CHARS:
        raise TokenError("token too long")
    parts = token.split(".")
    if len(parts) != 3:
        raise TokenError("not a JWT")
    header = _json_part(parts[0], "header")
    if header.get("alg") != "HS256":
        raise TokenError("unexpected token algorithm")
    try:
        signature = b64url_decode(parts[2])
    except ValueError as exc:
        raise TokenError("malformed token signature") from exc
    signing_input = f"{parts[0]}.{parts[1]}".encode("ascii", "replace")
    expected = hmac.new(secret, signing_input, hashlib.sha256).digest()
    if not hmac.compare_digest(signature, expected):
        raise TokenError("bad token signature")
    return _json_part(parts[1], "claims")


def jwk_thumbprint(jwk: Mapping[str, Any]) -> str:
    """The RFC 7638 SHA-256 thumbprint of a public JWK (EC, RSA or OKP).

    Raises:
        ValueError: an unsupported key type or a missing member.
    """
    members = _THUMBPRINT_MEMBERS.get(str(jwk.get("kty")))
    if members is None:
        raise ValueError("unsupported JWK key type")
    if not all(isinstance(jwk.get(name), str) for name in members):
        raise ValueError("JWK lacks a required member")
    required = {name: jwk[name] for name in members}
    return b64url(hashlib.sha256(_compact_json(required)).digest())


def token_hash(access_token: str) -> str:
    """The DPoP ``ath`` value: base64url(SHA-256(access token))."""
    return b64url(hashlib.sha256(access_token.encode("ascii", "replace")).digest())


def normalize_htu(url: str) -> str:
    """``url`` as DPoP compares it: lowercase scheme and host, default port dropped,
    no query or fragment (RFC 9449 §4.3)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and (scheme, port) not in (("http", 80), ("https", 443)):
        host = f"{host}:{port}"
    return f"{scheme}://{host}{parts.path or '/'}"


class ReplayCache:
    """Remembers ``jti`` values for a while so a replayed JWT can be refused.

    Bounded: at most ``max_entries`` values, each kept ``ttl`` seconds.

    Thread safety: every method may be called from any thread.
    """

    def __init__(self, *, ttl: float = 300.0, max_entries: int = 10000) -> None:
        """Create an empty cache."""
        self._ttl = ttl
        self._max = max_entries
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, jti: str) -> bool:
        """Remember ``jti``; False when it was already seen (a replay)."""
        now = time.monotonic()
        with self._lock:
            while self._seen:
                oldest, when = next(iter(self._seen.items()))
                if now - when <= self._ttl and len(self._seen) < self._max:
                    break
                del self._seen[oldest]
            if jti in self._seen:
                return False
            self._seen[jti] = now
            return True


def verify_dpop_proof(
    proof: str,
    *,
    method: str,
    url: str,
    replay: ReplayCache,
    nonce: str | None = None,
    access_token: str | None = None,
) -> str:
    """Check a DPoP proof JWT (RFC 9449 §4.3) and return its key's JWK thumbprint.

    Checks: ``typ`` ``dpop+jwt``, an asymmetric ``alg``, a public ``jwk`` header
    whose key verifies the signature, ``htm`` == ``method``, ``htu`` == ``url``
    (compared by :func:`normalize_htu`), a fresh ``iat``, an unused ``jti``,
    ``nonce`` when the server requires one, and ``ath`` when ``access_token``
    is given (resource requests).

    Raises:
        ProofError: what is wrong (``use_nonce`` set for a missing/stale nonce).
    """
    import jwt  # noqa: PLC0415 - PyJWT is needed only by peers that check DPoP

    if len(proof) > MAX_JWT_CHARS:
        raise ProofError("DPoP proof too long")
    try:
        header = jwt.get_unverified_header(proof)
    except jwt.PyJWTError as exc:
        raise ProofError("malformed DPoP proof") from exc
    if header.get("typ") != "dpop+jwt":
        raise ProofError("DPoP proof typ must be dpop+jwt")
    alg = header.get("alg")
    if alg not in ASYMMETRIC_ALGS:
        raise ProofError("DPoP proof must use an asymmetric algorithm")
    jwk = header.get("jwk")
    if not isinstance(jwk, dict) or _PRIVATE_JWK_MEMBERS & set(jwk):
        raise ProofError("DPoP proof needs a public jwk header")
    try:
        key = jwt.PyJWK(jwk, algorithm=alg)
        thumbprint = jwk_thumbprint(jwk)
        claims = jwt.decode(
            proof,
            key,
            algorithms=[alg],
            options={"verify_aud": False, "verify_exp": False, "verify_iat": False},
        )
    except (jwt.PyJWTError, ValueError, TypeError) as exc:
        raise ProofError("DPoP proof signature does not verify") from exc
    _check_proof_claims(claims, method=method, url=url, nonce=nonce, access_token=access_token)
    if not replay.add(str(claims["jti"])):
        raise ProofError("DPoP proof replayed (jti seen before)")
    return thumbprint


def _check_proof_claims(
    claims: Mapping[str, Any],
    *,
    method: str,
    url: str,
    nonce: str | None,
    access_token: str | None,
) -> None:
    for name in ("jti", "htm", "htu"):
        if not isinstance(claims.get(name), str) or not claims[name]:
            raise ProofError(f"DPoP proof lacks {name}")
    iat = claims.get("iat")
    if not isinstance(iat, int | float) or isinstance(iat, bool):
        raise ProofError("DPoP proof lacks iat")
    now = time.time()
    if iat > now + PROOF_FUTURE_SKEW or iat < now - PROOF_MAX_AGE:
        raise ProofError("DPoP proof iat is not recent")
    if claims["htm"] != method:
        raise ProofError("DPoP proof htm does not match the request method")
    if normalize_htu(claims["htu"]) != normalize_htu(url):
        raise ProofError("DPoP proof htu does not match the request URL")
    if access_token is not None:
        ath = claims.get("ath")
        if not isinstance(ath, str) or not hmac.compare_digest(ath, token_hash(access_token)):
            raise ProofError("DPoP proof ath does not match the access token")
    if nonce is not None and claims.get("nonce") != nonce:
        raise ProofError("DPoP proof needs the server's current nonce", use_nonce=True)
