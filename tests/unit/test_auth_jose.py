"""mcpclient.auth._jose: keys, thumbprints, client assertions and DPoP proofs.

Every token is decoded and verified with PyJWT, independently of how it was
made; thumbprints are checked against the RFCs' published vectors.
"""

from __future__ import annotations

import base64
import copy
import pickle
import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from mcpclient.auth._jose import (
    SigningKey,
    client_assertion,
    dpop_proof,
    jwk_thumbprint,
    token_hash,
)
from mcpclient.errors import ConfigError

# RFC 7638 §3.1: the RSA key and its SHA-256 thumbprint.
RFC7638_JWK = {
    "kty": "RSA",
    "n": (
        "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_B"
        "JECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_F"
        "DW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4"
        "vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
    ),
    "e": "AQAB",
    "alg": "RS256",
    "kid": "2011-04-29",
}
RFC7638_THUMBPRINT = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"

# RFC 8037 Appendix A.1-A.3: an Ed25519 private key, its public x, its thumbprint.
RFC8037_D = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"
RFC8037_X = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
RFC8037_THUMBPRINT = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"

# RFC 9449 §4.1 / §6.1: the example proof key's JWK and its jkt; §7.1: a token and its ath.
RFC9449_JWK = {
    "kty": "EC",
    "x": "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs",
    "y": "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA",
    "crv": "P-256",
}
RFC9449_JKT = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"
RFC9449_TOKEN = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
RFC9449_ATH = "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"


def b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def pem_of(key: Any) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def ec_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def public_pem(key: Any) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


# --- thumbprints and hashes ---


def test_thumbprint_matches_rfc7638_vector() -> None:
    assert jwk_thumbprint(RFC7638_JWK) == RFC7638_THUMBPRINT
    bare = {k: RFC7638_JWK[k] for k in ("kty", "n", "e")}
    assert jwk_thumbprint(bare) == RFC7638_THUMBPRINT  # optional members do not count


def test_thumbprint_matches_rfc9449_ec_vector() -> None:
    assert jwk_thumbprint(RFC9449_JWK) == RFC9449_JKT


def test_thumbprint_refuses_unknown_or_incomplete_keys() -> None:
    with pytest.raises(ValueError, match="unsupported"):
        jwk_thumbprint({"kty": "oct", "k": "c2VjcmV0"})
    with pytest.raises(ValueError, match="'y'"):
        jwk_thumbprint({"kty": "EC", "crv": "P-256", "x": "AA"})


def test_signing_key_thumbprint_end_to_end_rfc8037_vector() -> None:
    private = ed25519.Ed25519PrivateKey.from_private_bytes(b64d(RFC8037_D))
    key = SigningKey.from_pem(pem_of(private))
    assert key.alg == "EdDSA"
    assert key.public_jwk() == {"kty": "OKP", "crv": "Ed25519", "x": RFC8037_X}
    assert key.thumbprint() == RFC8037_THUMBPRINT


def test_ath_matches_rfc9449_vector() -> None:
    assert token_hash(RFC9449_TOKEN) == RFC9449_ATH


# --- keys ---


def test_generate_dpop_is_p256_es256() -> None:
    key = SigningKey.generate_dpop()
    jwk = key.public_jwk()
    assert key.alg == "ES256"
    assert jwk["kty"] == "EC"
    assert jwk["crv"] == "P-256"
    assert len(b64d(jwk["x"])) == 32
    assert len(b64d(jwk["y"])) == 32
    assert "d" not in jwk
    assert key.thumbprint() == jwk_thumbprint(jwk)
    assert SigningKey.generate_dpop().thumbprint() != key.thumbprint()


def test_from_pem_picks_the_algorithm_from_the_key(
    rsa_key: rsa.RSAPrivateKey, ec_key: ec.EllipticCurvePrivateKey
) -> None:
    assert SigningKey.from_pem(pem_of(rsa_key)).alg == "RS256"
    assert SigningKey.from_pem(pem_of(rsa_key).decode(), alg="PS256").alg == "PS256"
    assert SigningKey.from_pem(pem_of(ec_key), key_id="k1").key_id == "k1"
    p384 = ec.generate_private_key(ec.SECP384R1())
    assert SigningKey.from_pem(pem_of(p384)).alg == "ES384"
    jwk = SigningKey.from_pem(pem_of(rsa_key)).public_jwk()
    assert set(jwk) == {"kty", "n", "e"}
    assert jwk["e"] == "AQAB"


def test_from_pem_refuses_what_it_cannot_sign_with(
    rsa_key: rsa.RSAPrivateKey, ec_key: ec.EllipticCurvePrivateKey
) -> None:
    with pytest.raises(ConfigError, match="does not fit"):
        SigningKey.from_pem(pem_of(rsa_key), alg="ES256")
    with pytest.raises(ConfigError, match="does not fit"):
        SigningKey.from_pem(pem_of(ec_key), alg="HS256")
    small = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    with pytest.raises(ConfigError, match="2048"):
        SigningKey.from_pem(pem_of(small))
    with pytest.raises(ConfigError, match="not a supported PEM private key"):
        SigningKey.from_pem(public_pem(ec_key))
    with pytest.raises(ConfigError, match="not a supported PEM private key"):
        SigningKey.from_pem("-----BEGIN PRIVATE KEY-----\nnot base64 at all\n")
    encrypted = ec_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"pw"),
    )
    with pytest.raises(ConfigError, match="encrypted"):
        SigningKey.from_pem(encrypted)


def test_errors_never_quote_the_pem(ec_key: ec.EllipticCurvePrivateKey) -> None:
    pem = pem_of(ec_key).decode()
    body = pem.splitlines()[1]
    with pytest.raises(ConfigError) as caught:
        SigningKey.from_pem(pem, alg="RS256")
    assert body not in str(caught.value)
    assert body not in repr(caught.value)


def test_signing_key_repr_and_pickle_hide_the_private_key(
    ec_key: ec.EllipticCurvePrivateKey,
) -> None:
    key = SigningKey.from_pem(pem_of(ec_key), key_id="kid-1")
    private_value = ec_key.private_numbers().private_value
    d = base64.urlsafe_b64encode(private_value.to_bytes(32, "big")).rstrip(b"=").decode()
    for text in (repr(key), str(key)):
        assert d not in text
        assert "PRIVATE" not in text
        assert "ES256" in text
        assert "kid-1" in text
    with pytest.raises(TypeError, match="does not pickle"):
        pickle.dumps(key)
    assert copy.deepcopy(key) is key
    with pytest.raises(AttributeError):
        key.alg = "RS256"  # type: ignore[misc]


# --- client assertions (RFC 7523) ---


def test_client_assertion_claims_verify_with_pyjwt(rsa_key: rsa.RSAPrivateKey) -> None:
    key = SigningKey.from_pem(pem_of(rsa_key), key_id="client-key")
    before = int(time.time())
    token = client_assertion(key, client_id="cid", audience="https://as.example", lifetime=90)
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "RS256"
    assert header["kid"] == "client-key"
    assert header["typ"] == "JWT"
    claims = jwt.decode(
        token,
        rsa_key.public_key(),
        algorithms=["RS256"],
        audience="https://as.example",
        issuer="cid",
        options={"require": ["iss", "sub", "aud", "iat", "exp", "jti"]},
    )
    assert claims["sub"] == "cid"
    assert before <= claims["iat"] <= int(time.time())
    assert claims["exp"] - claims["iat"] == 90
    again = jwt.decode(
        client_assertion(key, client_id="cid", audience="https://as.example"),
        rsa_key.public_key(),
        algorithms=["RS256"],
        audience="https://as.example",
    )
    assert again["jti"] != claims["jti"]
    assert again["exp"] - again["iat"] == 60


def test_client_assertion_with_a_wrong_audience_fails_verification(
    ec_key: ec.EllipticCurvePrivateKey,
) -> None:
    token = client_assertion(
        SigningKey.from_pem(pem_of(ec_key)), client_id="cid", audience="https://as.example"
    )
    with pytest.raises(jwt.InvalidAudienceError):
        jwt.decode(token, ec_key.public_key(), algorithms=["ES256"], audience="https://other")


# --- DPoP proofs (RFC 9449) ---


def decode_proof(proof: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Verify a proof with the key in its own header, as a server does."""
    header = jwt.get_unverified_header(proof)
    public = jwt.PyJWK(header["jwk"]).key
    claims = jwt.decode(proof, public, algorithms=[header["alg"]])
    return header, claims


def test_dpop_proof_header_and_claims() -> None:
    key = SigningKey.generate_dpop()
    before = int(time.time())
    proof = dpop_proof(key, method="POST", url="https://as.example/token?x=1#frag")
    header, claims = decode_proof(proof)
    assert header["typ"] == "dpop+jwt"
    assert header["alg"] == "ES256"
    assert header["jwk"] == key.public_jwk()
    assert "d" not in header["jwk"]
    assert "kid" not in header
    assert jwk_thumbprint(header["jwk"]) == key.thumbprint()
    assert claims["htm"] == "POST"
    assert claims["htu"] == "https://as.example/token"
    assert before <= claims["iat"] <= int(time.time())
    assert isinstance(claims["jti"], str)
    assert len(claims["jti"]) >= 22
    assert "nonce" not in claims
    assert "ath" not in claims


def test_dpop_proof_carries_nonce_and_ath() -> None:
    key = SigningKey.generate_dpop()
    proof = dpop_proof(
        key,
        method="GET",
        url="https://mcp.example/mcp",
        nonce="server-nonce-1",
        access_token=RFC9449_TOKEN,
    )
    _, claims = decode_proof(proof)
    assert claims["nonce"] == "server-nonce-1"
    assert claims["ath"] == RFC9449_ATH
    assert claims["htm"] == "GET"


def test_dpop_proofs_have_fresh_jtis_and_work_with_other_key_types(
    rsa_key: rsa.RSAPrivateKey,
) -> None:
    key = SigningKey.from_pem(pem_of(rsa_key), key_id="ignored-in-dpop")
    first = decode_proof(dpop_proof(key, method="POST", url="https://as.example/token"))
    second = decode_proof(dpop_proof(key, method="POST", url="https://as.example/token"))
    assert first[1]["jti"] != second[1]["jti"]
    assert first[0]["alg"] == "RS256"
    assert "kid" not in first[0]
    assert set(first[0]["jwk"]) == {"kty", "n", "e"}
