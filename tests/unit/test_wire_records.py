"""mcpclient._internal.wire.records: the token store's records, versioned, through cattrs.

Round trips, records in the format written before the converter (they must
keep loading), refusals that name the field and never a secret, another
format version refused, and a hypothesis fuzz (at most 50 examples,
DESIGN.md §7): only an AuthError, or a value whose validators passed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mcpclient._core import jsonio
from mcpclient._internal.wire import records
from mcpclient.auth.tokens import ClientInfo, FileTokenStore, TokenSet
from mcpclient.errors import AuthError, ConfigError, FailureClass

ACCESS = "access-SECRET-aaaa"
REFRESH = "refresh-SECRET-rrrr"
CLIENT_SECRET = "client-SECRET-ssss"
ISSUER = "https://as.example"
RESOURCE = "https://mcp.example/mcp"

# Byte for byte what FileTokenStore wrote before the records went through
# cattrs (mcpclient at 066dcc2: TokenSet.to_json / ClientInfo.to_json, jsonio.encode).
TODAY_TOKENS = (
    b'{"version":1,"access_token":"access-SECRET-aaaa","token_type":"DPoP",'
    b'"refresh_token":"refresh-SECRET-rrrr","expires_at":2000000000.5,'
    b'"scopes":["read","write"],"issuer":"https://as.example",'
    b'"resource":"https://mcp.example/mcp"}'
)
TODAY_BARE_TOKENS = (
    b'{"version":1,"access_token":"a","token_type":"Bearer","refresh_token":null,'
    b'"expires_at":null,"scopes":[],"issuer":"i","resource":""}'
)
TODAY_CLIENT = (
    b'{"version":1,"client_id":"client-1","client_secret":"client-SECRET-ssss",'
    b'"auth_method":"client_secret_post","issuer":"https://as.example"}'
)

PROPERTY = settings(
    max_examples=50,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def tokens(**changes: Any) -> TokenSet:
    base = TokenSet(
        ACCESS,
        token_type="DPoP",
        refresh_token=REFRESH,
        expires_at=2_000_000_000.5,
        scopes=("read", "write"),
        issuer=ISSUER,
        resource=RESOURCE,
    )
    return attrs.evolve(base, **changes)


def client(**changes: Any) -> ClientInfo:
    base = ClientInfo(
        "client-1", client_secret=CLIENT_SECRET, auth_method="client_secret_post", issuer=ISSUER
    )
    return attrs.evolve(base, **changes)


def refused(data: object, cls: type[Any] = TokenSet) -> str:
    with pytest.raises(AuthError) as caught:
        cls.from_json(data)
    error = caught.value
    assert error.failure_class is FailureClass.AUTH_FAILED
    for secret in (ACCESS, REFRESH, CLIENT_SECRET):
        assert secret not in f"{error} {error!r}"
    return error.message


# --- today's records keep loading, and are still what is written ---


def test_records_in_todays_format_load() -> None:
    assert TokenSet.from_json(jsonio.decode(TODAY_TOKENS)) == tokens()
    bare = TokenSet.from_json(jsonio.decode(TODAY_BARE_TOKENS))
    assert bare == TokenSet("a", issuer="i")
    assert ClientInfo.from_json(jsonio.decode(TODAY_CLIENT)) == client()


def test_records_are_written_in_todays_format() -> None:
    assert tokens().to_json() == json.loads(TODAY_TOKENS)
    assert TokenSet("a", issuer="i").to_json() == json.loads(TODAY_BARE_TOKENS)
    # One field has been added since: the registered grant types (none known here).
    assert client().to_json() == {**json.loads(TODAY_CLIENT), "grant_types": []}
    assert tokens().to_json()[records.VERSION_KEY] == records.FORMAT_VERSION == 1


def test_a_client_record_from_before_grant_types_reads_as_unknown_grants() -> None:
    # Added later (records.ADDED): absent in every registration stored before it.
    assert "grant_types" not in json.loads(TODAY_CLIENT)
    assert ClientInfo.from_json(jsonio.decode(TODAY_CLIENT)).grant_types == ()
    with_grants = client(grant_types=("authorization_code", "refresh_token"))
    assert with_grants.to_json()["grant_types"] == ["authorization_code", "refresh_token"]
    # Every field written from the start stays required.
    data = client().to_json()
    del data["issuer"]
    assert refused(data, ClientInfo) == "stored client registration is malformed: misses 'issuer'"


def test_a_file_written_by_the_previous_store_loads(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "tokens")
    store.save_tokens(TokenSet("placeholder", issuer=ISSUER, resource=RESOURCE))
    store.save_client(client(client_id="placeholder"))
    for name in os.listdir(store.directory):
        path = os.path.join(store.directory, name)
        with open(path, "wb") as file:  # the same name, mode kept: as the old store wrote it
            file.write(TODAY_TOKENS if name.startswith("tokens-") else TODAY_CLIENT)
    assert store.load_tokens(ISSUER, RESOURCE) == tokens()
    assert store.load_client(ISSUER) == client()


@pytest.mark.parametrize(
    "value",
    [
        tokens(),
        tokens(refresh_token=None, expires_at=None, scopes=(), resource=""),
        tokens(expires_at=0, token_type="Bearer"),
        tokens(scopes=("a",) * 300, access_token="t" * 32 * 1024),
    ],
)
def test_token_sets_round_trip(value: TokenSet) -> None:
    assert TokenSet.from_json(jsonio.decode(jsonio.encode(value.to_json()))) == value


@pytest.mark.parametrize(
    "value",
    [
        client(),
        client(auth_method="none", client_secret=None),
        client(client_id="é"),
        client(grant_types=("urn:ietf:params:oauth:grant-type:device_code", "refresh_token")),
    ],
)
def test_client_registrations_round_trip(value: ClientInfo) -> None:
    assert ClientInfo.from_json(jsonio.decode(jsonio.encode(value.to_json()))) == value


def test_extra_fields_are_ignored() -> None:
    assert TokenSet.from_json({**tokens().to_json(), "note": [1, 2]}) == tokens()


# --- versions ---


@pytest.mark.parametrize("version", [2, 0, -1, 10**30])
def test_another_format_version_is_refused_not_misread(version: int) -> None:
    message = refused({**tokens().to_json(), "version": version})
    assert "unknown format version" in message
    if abs(version) < 10**9:
        assert f"unknown format version {version} (this mcpclient reads version 1)" in message


@pytest.mark.parametrize("version", [True, 1.0, "1", None, [1]])
def test_a_version_that_only_looks_like_one_is_refused(version: object) -> None:
    assert "unknown format version" in refused({**tokens().to_json(), "version": version})
    data = client().to_json()
    data["version"] = version
    assert "unknown format version" in refused(data, ClientInfo)


def test_a_record_without_a_version_is_refused() -> None:
    data = tokens().to_json()
    del data["version"]
    assert "unknown format version" in refused(data)


# --- shape and contents ---


@pytest.mark.parametrize(
    "field",
    ["access_token", "token_type", "refresh_token", "expires_at", "scopes", "issuer", "resource"],
)
def test_every_token_field_is_required(field: str) -> None:
    data = tokens().to_json()
    del data[field]  # written always, so required always, default or not
    assert refused(data) == f"stored token set is malformed: misses {field!r}"


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"refresh_token": 5}, "refresh_token is not a string"),
        ({"access_token": 5}, "access_token is not a string"),
        ({"issuer": None}, "issuer is not a string"),
        ({"expires_at": "2000000000"}, "expires_at is not a number"),
        ({"expires_at": True}, "expires_at is not a number"),
        ({"expires_at": 10**400}, "expires_at is not a finite number"),
        ({"scopes": "read write"}, "scopes is not a list"),
        ({"scopes": ["a", 3]}, "scopes holds a value that is not a string"),
        # The validators of the value judge the contents (messages name the field).
        ({"scopes": ["a b"]}, "TokenSet.scopes"),
        ({"access_token": ACCESS + " x"}, "TokenSet.access_token"),
        ({"access_token": "x" * (32 * 1024 + 1)}, "TokenSet.access_token"),
        ({"refresh_token": REFRESH + "\n"}, "TokenSet.refresh_token"),
        ({"refresh_token": ""}, "TokenSet.refresh_token"),
        ({"token_type": "bearer"}, "TokenSet.token_type"),
    ],
)
def test_malformed_token_records(changes: dict[str, Any], expected: str) -> None:
    message = refused({**tokens().to_json(), **changes})
    assert message.startswith("stored token set is malformed: ")
    assert expected in message


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"client_secret": None}, "ClientInfo.client_secret is required"),
        ({"client_secret": 5}, "client_secret is not a string"),
        ({"auth_method": "client_secret_jwt"}, "ClientInfo.auth_method"),
        ({"client_id": ""}, "ClientInfo.client_id"),
        ({"grant_types": "authorization_code"}, "grant_types is not a list"),
        ({"grant_types": ["authorization_code", 3]}, "grant_types holds a value that is not"),
        ({"grant_types": [""]}, "ClientInfo.grant_types"),
    ],
)
def test_malformed_client_records(changes: dict[str, Any], expected: str) -> None:
    message = refused({**client().to_json(), **changes}, ClientInfo)
    assert message.startswith("stored client registration is malformed: ")
    assert expected in message


def test_an_expiry_beyond_any_float_is_refused_not_crashed() -> None:
    # math.isfinite(10**400) raises OverflowError: the validator must not let it out.
    with pytest.raises(ConfigError, match="expires_at"):
        TokenSet(ACCESS, expires_at=10**400, issuer=ISSUER)
    assert TokenSet(ACCESS, expires_at=2_000_000_000, issuer=ISSUER).expires_at == 2_000_000_000


@pytest.mark.parametrize("data", ["x", [TODAY_TOKENS.decode()], None, 1])
def test_a_record_that_is_not_an_object(data: object) -> None:
    assert refused(data) == "stored token set is malformed: not a JSON object"


# --- fuzz ---

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
_token_fields = st.fixed_dictionaries(
    {
        "version": st.sampled_from([1, 1, 1, 2, True, "1"]),
        "access_token": st.text(max_size=10) | json_values,
        "token_type": st.sampled_from(["Bearer", "DPoP", "x"]) | json_values,
        "refresh_token": st.none() | st.text(max_size=10) | json_values,
        "expires_at": st.none() | st.floats(allow_nan=False) | st.integers() | json_values,
        "scopes": st.lists(st.text(max_size=5), max_size=3) | json_values,
        "issuer": st.text(max_size=10) | json_values,
        "resource": st.text(max_size=10) | json_values,
    }
)
records_like = json_values | _token_fields.flatmap(
    lambda d: st.sets(st.sampled_from(sorted(d)), max_size=2).map(
        lambda drop: {k: v for k, v in d.items() if k not in drop}
    )
)


@PROPERTY
@given(records_like)
@example({**json.loads(TODAY_TOKENS), "expires_at": float("inf")})
@example({**json.loads(TODAY_TOKENS), "expires_at": 10**400})
def test_no_record_gets_anything_but_an_auth_error_out(data: object) -> None:
    for cls in (TokenSet, ClientInfo):
        try:
            value = cls.from_json(data)
        except AuthError as exc:
            assert exc.failure_class is FailureClass.AUTH_FAILED
            assert exc.message.startswith("stored ")
            continue
        # A value came out: its validators passed, and it round-trips.
        assert cls.from_json(value.to_json()) == value
