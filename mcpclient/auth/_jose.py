"""JOSE pieces: signing keys, RFC 7523 client assertions, RFC 9449 DPoP proofs.

Signing and key handling are delegated to ``cryptography`` and ``PyJWT`` (the
``oauth`` extra); this module only decides what goes into the tokens. Only
asymmetric keys exist here: a DPoP proof or a ``private_key_jwt`` assertion
signed with a shared secret would prove nothing about the client.

Thread safety: :class:`SigningKey` is immutable; the functions are pure apart
from the clock and the random ``jti``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
import urllib.parse
from collections.abc import Mapping
from typing import Any, NoReturn

import jwt
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from mcpclient.errors import ConfigError

__all__ = [
    "SigningKey",
    "b64url",
    "client_assertion",
    "dpop_proof",
    "jwk_thumbprint",
    "token_hash",
]

#: JWS algorithms per key type (asymmetric only).
_EC_ALGS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
_EC_CRV = {"secp256r1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521"}
_EC_SIZE = {"secp256r1": 32, "secp384r1": 48, "secp521r1": 66}
_RSA_ALGS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
#: The smallest RSA modulus accepted, in bits (NIST SP 800-131A).
MIN_RSA_BITS = 2048
#: Members RFC 7638 §3.2 hashes, per key type.
_THUMBPRINT_MEMBERS = {
    "EC": ("crv", "kty", "x", "y"),
    "RSA": ("e", "kty", "n"),
    "OKP": ("crv", "kty", "x"),
}

_PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey


def b64url(data: bytes) -> str:
    """Unpadded base64url (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def token_hash(access_token: str) -> str:
    """The DPoP ``ath`` value: base64url(SHA-256(access token)) (RFC 9449 §4.2)."""
    return b64url(hashlib.sha256(access_token.encode("ascii")).digest())


def jwk_thumbprint(jwk: Mapping[str, str]) -> str:
    """The RFC 7638 SHA-256 thumbprint of a public JWK, base64url.

    Only the required members count, in lexicographic order, with no
    whitespace; optional members (``kid``, ``alg``...) do not change it.

    Raises:
        ValueError: the key type is unknown or a required member is missing.
    """
    members = _THUMBPRINT_MEMBERS.get(jwk.get("kty", ""))
    if members is None:
        raise ValueError("unsupported JWK key type")
    try:
        required = {name: jwk[name] for name in members}
    except KeyError as exc:
        raise ValueError(f"JWK misses required member {exc.args[0]!r}") from None
    canonical = json.dumps(required, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return b64url(hashlib.sha256(canonical.encode("ascii")).digest())


def _int_bytes(value: int, size: int | None = None) -> bytes:
    length = size if size is not None else max(1, (value.bit_length() + 7) // 8)
    return value.to_bytes(length, "big")


class SigningKey:
    """An asymmetric private key for ``private_key_jwt`` or DPoP.

    ``repr`` shows the algorithm, key id and public thumbprint, never key
    material; pickling and copying through pickle are refused.

    Example::

        key = SigningKey.from_pem(pem_text, key_id="client-key-1")
        dpop = SigningKey.generate_dpop()

    Attributes:
        alg: the JWS algorithm (``ES256``, ``RS256``, ``PS256``, ``EdDSA``...).
        key_id: the ``kid`` put in JWS headers, or None.

    Thread safety: immutable; signing may run on any thread.
    """

    __slots__ = ("_jwk", "_key", "alg", "key_id")

    alg: str
    key_id: str | None
    _key: _PrivateKey
    _jwk: dict[str, str]

    def __init__(self, key: _PrivateKey, *, alg: str | None = None, key_id: str | None = None):
        """Wrap a ``cryptography`` private key (see :meth:`from_pem`).

        Raises:
            ConfigError: the key type is not supported or ``alg`` does not fit it.
        """
        if key_id is not None and (not isinstance(key_id, str) or not key_id):
            raise ConfigError("SigningKey.key_id must be a non-empty str or None")
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "alg", _pick_alg(key, alg))
        object.__setattr__(self, "key_id", key_id)
        object.__setattr__(self, "_jwk", _public_jwk(key))

    @classmethod
    def from_pem(
        cls, pem: str | bytes, *, key_id: str | None = None, alg: str | None = None
    ) -> SigningKey:
        """Load an unencrypted PEM private key (PKCS#8, or traditional RSA/EC).

        The algorithm defaults from the key: ES256/ES384/ES512 by curve, RS256
        for RSA, EdDSA for Ed25519. ``alg`` may choose another fitting one
        (PS256 for an RSA key, say).

        Raises:
            ConfigError: not a PEM private key, encrypted, a public key, a
                symmetric or unsupported key type, RSA below 2048 bits, or an
                ``alg`` the key cannot sign with. The message never quotes
                the PEM.
        """
        data = pem.encode("ascii", "replace") if isinstance(pem, str) else pem
        if not isinstance(data, bytes):
            raise ConfigError("the client key must be PEM text (str or bytes)")
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except TypeError:
            raise ConfigError("the client key is encrypted; pass an unencrypted PEM") from None
        except (ValueError, UnsupportedAlgorithm):
            raise ConfigError("the client key is not a supported PEM private key") from None
        if not isinstance(key, _PrivateKey):
            raise ConfigError(f"the client key type {type(key).__name__} is not supported")
        return cls(key, alg=alg, key_id=key_id)

    @classmethod
    def generate_dpop(cls) -> SigningKey:
        """A fresh EC P-256 key for DPoP proofs (ES256), kept in memory only."""
        return cls(ec.generate_private_key(ec.SECP256R1()), alg="ES256")

    def public_jwk(self) -> dict[str, str]:
        """The public key as a JWK holding only the RFC 7638 required members."""
        return dict(self._jwk)

    def thumbprint(self) -> str:
        """The RFC 7638 SHA-256 thumbprint of the public key (DPoP ``jkt``)."""
        return jwk_thumbprint(self._jwk)

    def sign(
        self, claims: Mapping[str, Any], headers: Mapping[str, Any], *, with_kid: bool = True
    ) -> str:
        """A compact JWS of ``claims`` with ``headers`` (``alg``, and ``kid`` if any, added)."""
        extra = dict(headers)
        if with_kid and self.key_id is not None:
            extra.setdefault("kid", self.key_id)
        return jwt.encode(dict(claims), self._key, algorithm=self.alg, headers=extra)

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("SigningKey is immutable")

    def __repr__(self) -> str:
        kid = f" kid={self.key_id!r}" if self.key_id is not None else ""
        return f"<SigningKey {self.alg}{kid} jkt={self.thumbprint()}>"

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError("SigningKey holds a private key and does not pickle")

    def __copy__(self) -> SigningKey:
        return self

    def __deepcopy__(self, memo: Any) -> SigningKey:
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SigningKey):
            return NotImplemented
        return (self.alg, self.key_id, self._jwk) == (other.alg, other.key_id, other._jwk)

    def __hash__(self) -> int:
        return hash((self.alg, self.key_id, self.thumbprint()))


def _pick_alg(key: _PrivateKey, alg: str | None) -> str:
    if isinstance(key, ec.EllipticCurvePrivateKey):
        natural = _EC_ALGS.get(key.curve.name)
        if natural is None:
            raise ConfigError(f"EC curve {key.curve.name} is not supported (P-256/384/521)")
        allowed: tuple[str, ...] = (natural,)
    elif isinstance(key, rsa.RSAPrivateKey):
        if key.key_size < MIN_RSA_BITS:
            raise ConfigError(f"RSA keys must have at least {MIN_RSA_BITS} bits")
        natural, allowed = "RS256", _RSA_ALGS
    elif isinstance(key, ed25519.Ed25519PrivateKey):
        natural, allowed = "EdDSA", ("EdDSA",)
    else:
        raise ConfigError(f"key type {type(key).__name__} is not supported (asymmetric keys only)")
    if alg is None:
        return natural
    if alg not in allowed:
        raise ConfigError(f"algorithm {alg[:20]!r} does not fit this key ({', '.join(allowed)})")
    return alg


def _public_jwk(key: _PrivateKey) -> dict[str, str]:
    if isinstance(key, ec.EllipticCurvePrivateKey):
        numbers = key.public_key().public_numbers()
        size = _EC_SIZE[key.curve.name]
        return {
            "kty": "EC",
            "crv": _EC_CRV[key.curve.name],
            "x": b64url(_int_bytes(numbers.x, size)),
            "y": b64url(_int_bytes(numbers.y, size)),
        }
    if isinstance(key, rsa.RSAPrivateKey):
        rsa_numbers = key.public_key().public_numbers()
        return {
            "kty": "RSA",
            "n": b64url(_int_bytes(rsa_numbers.n)),
            "e": b64url(_int_bytes(rsa_numbers.e)),
        }
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return {"kty": "OKP", "crv": "Ed25519", "x": b64url(raw)}


def _jti() -> str:
    return secrets.token_urlsafe(24)


def client_assertion(
    key: SigningKey, *, client_id: str, audience: str, lifetime: float = 60
) -> str:
    """A ``private_key_jwt`` client assertion (RFC 7523 §2.2, RFC 7521 §4.2).

    Claims: ``iss`` = ``sub`` = ``client_id``, ``aud`` = ``audience`` (the
    authorization server's issuer), ``iat``, ``exp`` = ``iat + lifetime``,
    and a random single-use ``jti``. The header is ``typ: JWT`` with ``kid``
    when the key has one.
    """
    issued = int(time.time())
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": issued,
        "exp": issued + max(1, int(lifetime)),
        "jti": _jti(),
    }
    return key.sign(claims, {"typ": "JWT"})


def dpop_htu(url: str) -> str:
    """The DPoP ``htu`` for ``url``: the URL without its query and fragment (RFC 9449 §4.2)."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def dpop_proof(
    key: SigningKey,
    *,
    method: str,
    url: str,
    nonce: str | None = None,
    access_token: str | None = None,
) -> str:
    """A DPoP proof JWT (RFC 9449 §4.2) for one HTTP request.

    Header: ``typ: dpop+jwt``, ``alg``, and the public ``jwk`` (no ``kid``: the
    server identifies the key by the JWK itself). Claims: a fresh ``jti``,
    ``htm`` (the HTTP method), ``htu`` (no query or fragment), ``iat``,
    ``nonce`` when the server supplied one, and ``ath`` (the access token's
    hash) when the proof accompanies an access token on a resource request.
    """
    claims: dict[str, Any] = {
        "jti": _jti(),
        "htm": method,
        "htu": dpop_htu(url),
        "iat": int(time.time()),
    }
    if nonce is not None:
        claims["nonce"] = nonce
    if access_token is not None:
        claims["ath"] = token_hash(access_token)
    # No kid: the embedded jwk is the key the server binds the token to.
    return key.sign(claims, {"typ": "dpop+jwt", "jwk": key.public_jwk()}, with_kid=False)
