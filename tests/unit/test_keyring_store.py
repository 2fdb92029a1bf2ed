"""KeyringTokenStore: the OS keychain as a token store (issue 32 item 4).

Run against an in-memory keyring backend set with ``keyring.set_keyring``;
the record each entry holds is compared with what a FileTokenStore writes.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpclient.auth import ClientInfo, FileTokenStore, KeyringTokenStore, TokenSet
from mcpclient.errors import AuthError, ConfigError

keyring = pytest.importorskip("keyring")
from keyring.backend import KeyringBackend  # noqa: E402
from keyring.errors import PasswordDeleteError  # noqa: E402

ISSUER = "https://as.example.com"
RESOURCE = "https://mcp.example.com/mcp"


class MemoryKeyring(KeyringBackend):
    """A keyring backend in a dict (what a test may look into)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.entries.pop((service, username), None) is None:
            raise PasswordDeleteError("absent")


class BrokenKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        raise RuntimeError("the keychain is locked: secret-detail")


@pytest.fixture
def backend() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    memory = MemoryKeyring()
    keyring.set_keyring(memory)
    try:
        yield memory
    finally:
        keyring.set_keyring(previous)


def tokens() -> TokenSet:
    return TokenSet(
        "access-0123456789",
        refresh_token="refresh-0123456789",
        expires_at=2_000_000_000.0,
        scopes=("mcp",),
        issuer=ISSUER,
        resource=RESOURCE,
    )


def test_round_trip(backend: MemoryKeyring) -> None:
    store = KeyringTokenStore(service="my-app")
    assert store.load_tokens(ISSUER, RESOURCE) is None
    store.save_tokens(tokens())
    assert store.load_tokens(ISSUER, RESOURCE) == tokens()
    assert store.load_tokens(ISSUER, RESOURCE + "/other") is None  # keyed per resource
    client = ClientInfo(
        "cid", auth_method="client_secret_basic", client_secret="s" * 20, issuer=ISSUER
    )
    store.save_client(client)
    assert store.load_client(ISSUER) == client
    assert store.load_client("https://other.example.com") is None  # keyed per issuer
    store.save_issuer_binding("cid", ISSUER)
    assert store.load_issuer_binding("cid") == ISSUER
    store.delete_tokens(ISSUER, RESOURCE)
    store.delete_tokens(ISSUER, RESOURCE)  # absent: no error
    assert store.load_tokens(ISSUER, RESOURCE) is None
    assert {service for service, _ in backend.entries} == {"my-app"}
    assert "access-0123456789" not in repr(store)


def test_the_record_is_what_a_file_token_store_writes(
    backend: MemoryKeyring, tmp_path: Path
) -> None:
    files = FileTokenStore(tmp_path / "tokens")
    files.save_tokens(tokens())
    KeyringTokenStore().save_tokens(tokens())
    [(service, name)] = backend.entries
    assert service == "mcpclient"
    [file] = os.listdir(files.directory)
    assert file == f"{name}.json"  # the same key naming
    on_disk = (Path(files.directory) / file).read_text("utf-8")
    assert json.loads(backend.entries[(service, name)]) == json.loads(on_disk)


def test_a_malformed_or_oversized_record_is_auth_failed(backend: MemoryKeyring) -> None:
    store = KeyringTokenStore()
    store.save_tokens(tokens())
    [key] = backend.entries
    backend.entries[key] = "not json"
    with pytest.raises(AuthError, match="not JSON"):
        store.load_tokens(ISSUER, RESOURCE)
    backend.entries[key] = "x" * (256 * 1024 + 1)
    with pytest.raises(AuthError, match="too large"):
        store.load_tokens(ISSUER, RESOURCE)


def test_a_failing_backend_is_classified_without_its_text() -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(BrokenKeyring())
    try:
        with pytest.raises(AuthError) as info:
            KeyringTokenStore().load_tokens(ISSUER, RESOURCE)
    finally:
        keyring.set_keyring(previous)
    assert info.value.failure_class.name == "AUTH_FAILED"
    assert "RuntimeError" in info.value.message and "secret-detail" not in info.value.message


def test_without_keyring_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "keyring", None)  # import keyring now raises ImportError
    with pytest.raises(ConfigError, match=r"mcpclient\[keyring\]"):
        KeyringTokenStore()
