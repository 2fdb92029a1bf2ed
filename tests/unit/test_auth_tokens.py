"""mcpclient.auth.tokens: redacted token values and the token stores."""

from __future__ import annotations

import copy
import json
import os
import pickle
import stat
import threading
from pathlib import Path

import attrs
import pytest

from mcpclient.auth.tokens import (
    ClientInfo,
    FileTokenStore,
    MemoryTokenStore,
    TokenSet,
    TokenStore,
)
from mcpclient.errors import AuthError, ConfigError, FailureClass

ACCESS = "access-SECRET-aaaa"
REFRESH = "refresh-SECRET-rrrr"
CLIENT_SECRET = "client-SECRET-ssss"
ISSUER = "https://as.example"
RESOURCE = "https://mcp.example/mcp"


def tokens(**changes: object) -> TokenSet:
    base = TokenSet(
        ACCESS,
        token_type="Bearer",
        refresh_token=REFRESH,
        expires_at=2_000_000_000.0,
        scopes=("read", "write"),
        issuer=ISSUER,
        resource=RESOURCE,
    )
    return attrs.evolve(base, **changes)


def client(**changes: object) -> ClientInfo:
    base = ClientInfo(
        "client-1", client_secret=CLIENT_SECRET, auth_method="client_secret_basic", issuer=ISSUER
    )
    return attrs.evolve(base, **changes)


# --- TokenSet ---


def test_token_set_repr_and_str_hide_both_tokens() -> None:
    value = tokens()
    for text in (repr(value), str(value), f"{value}", f"{value!r}", repr([value])):
        assert ACCESS not in text
        assert REFRESH not in text
    assert "Bearer" in repr(value)
    assert "read write" in repr(value)
    assert "refresh=yes" in repr(value)


def test_token_set_refuses_pickle_but_copies() -> None:
    value = tokens()
    with pytest.raises(TypeError, match="does not pickle"):
        pickle.dumps(value)
    assert copy.copy(value) is value
    assert copy.deepcopy(value) is value


def test_token_set_expiry_rules() -> None:
    assert not tokens(expires_at=None).expired(at=1e12)
    value = tokens(expires_at=1000.0)
    assert not value.expired(at=969.0)
    assert value.expired(at=970.0)  # the 30 s default skew
    assert not value.expired(skew=0, at=999.9)
    assert value.expired(skew=0, at=1000.0)
    assert "expires_in=never" in repr(tokens(expires_at=None))


def test_token_set_validates_fields() -> None:
    with pytest.raises(ConfigError, match="access_token"):
        TokenSet("", issuer=ISSUER)
    with pytest.raises(ConfigError, match="token_type"):
        TokenSet(ACCESS, token_type="bearer", issuer=ISSUER)
    with pytest.raises(ConfigError, match="scopes"):
        TokenSet(ACCESS, scopes=("a b",), issuer=ISSUER)
    with pytest.raises(ConfigError, match="expires_at"):
        TokenSet(ACCESS, expires_at=float("nan"), issuer=ISSUER)
    with pytest.raises(ConfigError, match="refresh_token"):
        TokenSet(ACCESS, refresh_token="", issuer=ISSUER)
    for bad in ("a b", "a\r\nX-Evil: 1", "tökén"):
        with pytest.raises(ConfigError, match="access_token") as caught:
            TokenSet(bad, issuer=ISSUER)
        assert bad not in str(caught.value)
    with pytest.raises(ConfigError, match="refresh_token"):
        TokenSet(ACCESS, refresh_token="r\n", issuer=ISSUER)
    assert TokenSet(ACCESS, scopes=["a", "b"], issuer=ISSUER).scopes == ("a", "b")


def test_token_set_json_round_trip() -> None:
    value = tokens(token_type="DPoP")
    data = json.loads(json.dumps(value.to_json()))
    assert TokenSet.from_json(data) == value


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ("not an object", "not a JSON object"),
        ({"version": 99}, "unknown format version"),
        ({"version": 1, "access_token": ACCESS}, "misses"),
        (
            {
                "version": 1,
                "access_token": ACCESS,
                "token_type": "Bearer",
                "refresh_token": 5,
                "expires_at": None,
                "scopes": [],
                "issuer": ISSUER,
                "resource": RESOURCE,
            },
            "refresh_token",
        ),
    ],
)
def test_token_set_from_malformed_json_fails_without_secrets(data: object, problem: str) -> None:
    with pytest.raises(AuthError) as caught:
        TokenSet.from_json(data)
    assert caught.value.failure_class is FailureClass.AUTH_FAILED
    assert problem in caught.value.message
    assert ACCESS not in str(caught.value)
    assert ACCESS not in repr(caught.value)


# --- ClientInfo ---


def test_client_info_repr_hides_the_secret() -> None:
    value = client()
    for text in (repr(value), str(value), repr({"c": value})):
        assert CLIENT_SECRET not in text
    assert "client-1" in repr(value)
    assert "client_secret_basic" in repr(value)


def test_client_info_refuses_pickle_and_round_trips_json() -> None:
    value = client()
    with pytest.raises(TypeError):
        pickle.dumps(value)
    assert ClientInfo.from_json(json.loads(json.dumps(value.to_json()))) == value


def test_client_info_validates_method_and_secret() -> None:
    with pytest.raises(ConfigError, match="auth_method"):
        ClientInfo("c", auth_method="client_secret_jwt", issuer=ISSUER)
    with pytest.raises(ConfigError, match="client_secret"):
        ClientInfo("c", auth_method="client_secret_post", issuer=ISSUER)
    assert ClientInfo("c", auth_method="none", issuer=ISSUER).client_secret is None
    with pytest.raises(AuthError) as caught:
        ClientInfo.from_json({"version": 1, "client_id": "c", "client_secret": CLIENT_SECRET})
    assert CLIENT_SECRET not in str(caught.value)


# --- stores, shared behavior ---


@pytest.fixture(params=["memory", "file"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> TokenStore:
    if request.param == "memory":
        return MemoryTokenStore()
    return FileTokenStore(tmp_path / "tokens")


def test_store_satisfies_the_protocol(store: TokenStore) -> None:
    assert isinstance(store, TokenStore)


def test_store_keys_tokens_by_issuer_and_resource(store: TokenStore) -> None:
    assert store.load_tokens(ISSUER, RESOURCE) is None
    first = tokens()
    other_resource = tokens(resource="https://mcp.example/other", access_token="a2")
    other_issuer = tokens(issuer="https://as2.example", access_token="a3")
    for value in (first, other_resource, other_issuer):
        store.save_tokens(value)
    assert store.load_tokens(ISSUER, RESOURCE) == first
    assert store.load_tokens(ISSUER, "https://mcp.example/other") == other_resource
    assert store.load_tokens("https://as2.example", RESOURCE) == other_issuer
    replaced = tokens(access_token="a4")
    store.save_tokens(replaced)
    assert store.load_tokens(ISSUER, RESOURCE) == replaced
    store.delete_tokens(ISSUER, RESOURCE)
    store.delete_tokens(ISSUER, RESOURCE)  # absent: no error
    assert store.load_tokens(ISSUER, RESOURCE) is None
    assert store.load_tokens(ISSUER, "https://mcp.example/other") == other_resource


def test_store_keys_clients_by_issuer(store: TokenStore) -> None:
    assert store.load_client(ISSUER) is None
    mine = client()
    theirs = client(issuer="https://as2.example", client_id="client-2")
    store.save_client(mine)
    store.save_client(theirs)
    assert store.load_client(ISSUER) == mine
    assert store.load_client("https://as2.example") == theirs
    assert store.load_client("https://as3.example") is None


def test_store_survives_concurrent_writers_and_readers(store: TokenStore) -> None:
    values = [tokens(access_token=f"token-{n}") for n in range(4)]
    store.save_tokens(values[0])
    seen: list[TokenSet | None] = []
    errors: list[BaseException] = []

    def write(value: TokenSet) -> None:
        try:
            for _ in range(25):
                store.save_tokens(value)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    def read() -> None:
        try:
            for _ in range(100):
                seen.append(store.load_tokens(ISSUER, RESOURCE))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(v,)) for v in values]
    threads.append(threading.Thread(target=read))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert all(value in values for value in seen)  # never a torn or missing file


# --- FileTokenStore ---


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_file_store_creates_a_private_directory_and_private_files(tmp_path: Path) -> None:
    directory = tmp_path / "deep" / "tokens"
    store = FileTokenStore(directory)
    assert mode_of(directory) == 0o700
    store.save_tokens(tokens())
    store.save_client(client())
    files = sorted(directory.iterdir())
    assert len(files) == 2
    for path in files:
        assert mode_of(path) == 0o600
        # the file name is a digest of the key: nothing about the issuer leaks
        assert "as.example" not in path.name
        assert path.name.endswith(".json")


def test_file_store_persists_across_instances(tmp_path: Path) -> None:
    FileTokenStore(tmp_path / "t").save_tokens(tokens())
    FileTokenStore(tmp_path / "t").save_client(client())
    again = FileTokenStore(tmp_path / "t")
    assert again.load_tokens(ISSUER, RESOURCE) == tokens()
    assert again.load_client(ISSUER) == client()


def test_file_store_repr_shows_only_the_directory(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "t")
    store.save_tokens(tokens())
    assert repr(store) == f"<FileTokenStore {str(tmp_path / 't')!r}>"


@pytest.mark.parametrize("mode", [0o755, 0o750, 0o705, 0o710, 0o701])
def test_file_store_refuses_a_directory_others_can_use(tmp_path: Path, mode: int) -> None:
    directory = tmp_path / "shared"
    directory.mkdir()
    directory.chmod(mode)
    with pytest.raises(ConfigError, match="group or others"):
        FileTokenStore(directory)


def test_file_store_refuses_a_symlinked_directory(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(ConfigError, match="symlink"):
        FileTokenStore(link)


def test_file_store_refuses_a_file_in_place_of_the_directory(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(ConfigError):
        FileTokenStore(path)


def test_file_store_rechecks_the_directory_on_every_use(tmp_path: Path) -> None:
    directory = tmp_path / "t"
    store = FileTokenStore(directory)
    store.save_tokens(tokens())
    directory.chmod(0o777)
    for action in (
        lambda: store.load_tokens(ISSUER, RESOURCE),
        lambda: store.save_tokens(tokens()),
        lambda: store.delete_tokens(ISSUER, RESOURCE),
        lambda: store.load_client(ISSUER),
    ):
        with pytest.raises(AuthError) as caught:
            action()
        assert caught.value.failure_class is FailureClass.AUTH_FAILED


def only_file(directory: Path) -> Path:
    (path,) = directory.iterdir()
    return path


def test_file_store_refuses_a_readable_token_file(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "t")
    store.save_tokens(tokens())
    only_file(tmp_path / "t").chmod(0o644)
    with pytest.raises(AuthError, match="group or others") as caught:
        store.load_tokens(ISSUER, RESOURCE)
    assert ACCESS not in str(caught.value)


def test_file_store_refuses_a_symlinked_token_file(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "t")
    store.save_tokens(tokens())
    path = only_file(tmp_path / "t")
    planted = tmp_path / "planted.json"
    planted.write_text(path.read_text())
    planted.chmod(0o600)
    path.unlink()
    path.symlink_to(planted)
    with pytest.raises(AuthError) as caught:
        store.load_tokens(ISSUER, RESOURCE)
    assert caught.value.failure_class is FailureClass.AUTH_FAILED


@pytest.mark.skipif(os.getuid() != 0, reason="chown to another user needs root")
def test_file_store_refuses_a_file_owned_by_another_user(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "t")
    store.save_tokens(tokens())
    os.chown(only_file(tmp_path / "t"), 65534, 65534)
    with pytest.raises(AuthError, match="another user"):
        store.load_tokens(ISSUER, RESOURCE)


def test_file_store_refuses_a_file_moved_to_another_key(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "t")
    store.save_tokens(tokens(resource="https://evil.example/"))
    evil = only_file(tmp_path / "t")
    store.save_tokens(tokens())
    target = next(p for p in (tmp_path / "t").iterdir() if p != evil)
    os.replace(evil, target)
    with pytest.raises(AuthError, match="another issuer or resource"):
        store.load_tokens(ISSUER, RESOURCE)


def test_file_store_refuses_malformed_and_oversized_files(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "t")
    store.save_tokens(tokens())
    path = only_file(tmp_path / "t")
    path.write_bytes(b"{not json")
    with pytest.raises(AuthError, match="not JSON"):
        store.load_tokens(ISSUER, RESOURCE)
    path.write_bytes(b" " * (300 * 1024))
    with pytest.raises(AuthError, match="too large"):
        store.load_tokens(ISSUER, RESOURCE)


def test_file_store_writes_atomically_and_leaves_no_temp_files(tmp_path: Path) -> None:
    directory = tmp_path / "t"
    store = FileTokenStore(directory)
    store.save_tokens(tokens())
    path = only_file(directory)
    before = path.stat().st_ino
    store.save_tokens(tokens(access_token="second"))
    # replaced by rename (a new inode), never rewritten in place
    assert path.stat().st_ino != before
    assert [p.name for p in directory.iterdir()] == [path.name]
    assert store.load_tokens(ISSUER, RESOURCE) == tokens(access_token="second")


def test_file_store_failed_write_keeps_the_old_file_and_cleans_up(tmp_path: Path) -> None:
    directory = tmp_path / "t"
    store = FileTokenStore(directory)
    store.save_client(client())
    # a directory where the token file goes makes os.replace fail
    store.save_tokens(tokens())
    token_file = next(p for p in directory.iterdir() if p.name.startswith("tokens-"))
    token_file.unlink()
    token_file.mkdir()
    with pytest.raises(AuthError, match="cannot write") as caught:
        store.save_tokens(tokens())
    assert ACCESS not in str(caught.value)
    assert not [p for p in directory.iterdir() if p.name.endswith(".tmp")]
    assert store.load_client(ISSUER) == client()


def test_file_store_files_hold_json_only_a_store_reads(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "t")
    store.save_tokens(tokens())
    data = json.loads(only_file(tmp_path / "t").read_text())
    assert data["access_token"] == ACCESS  # stored for the owner, as the protocol requires
    assert data["version"] == 1


def test_stores_record_the_issuer_binding_of_a_pre_registered_client(tmp_path: Path) -> None:
    # Issue 27 item 2: the first issuer a configured client was used with.
    for store in (MemoryTokenStore(), FileTokenStore(tmp_path / "s")):
        assert store.load_issuer_binding("app") is None
        store.save_issuer_binding("app", "https://as.example")
        assert store.load_issuer_binding("app") == "https://as.example"
        assert store.load_issuer_binding("other") is None
    again = FileTokenStore(tmp_path / "s")  # another process
    assert again.load_issuer_binding("app") == "https://as.example"
