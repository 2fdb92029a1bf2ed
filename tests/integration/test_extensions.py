"""Issue 19, negotiation: extensions are off by default, declared when the host opts in, used
only when the server declares them too (SEP-2133), at both eras, against the testing server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient.definition import SKILLS_EXTENSION, TASKS_EXTENSION, UI_EXTENSION, UI_MIME_TYPE

from ..support.servers import LATEST_LEGACY, MODERN, Recording, definition

ERAS = [LATEST_LEGACY, MODERN]


def _declared(message: dict[str, Any], version: str) -> Any:
    """The ``capabilities.extensions`` a recorded request declared (None: no key)."""
    params = message.get("params") or {}
    if version == MODERN:
        caps = (params.get("_meta") or {}).get("io.modelcontextprotocol/clientCapabilities", {})
    else:
        caps = params.get("capabilities", {})
    return caps.get("extensions")


@pytest.mark.parametrize("version", ERAS)
def test_opted_in_extensions_are_declared_and_negotiated(tmp_path: Path, version: str) -> None:
    record = tmp_path / "record.jsonl"
    defn = definition(
        "--extension",
        SKILLS_EXTENSION,
        "--extension",
        TASKS_EXTENSION,
        record=record,
        protocol=version,
        extensions={SKILLS_EXTENSION: {}, UI_EXTENSION: {}},
    )
    with mcpclient.connect(defn) as client:
        client.ping()
        status = client.status()
        caps = client.catalog().capabilities
    # Used: declared by both sides; ui is ours only, tasks the server's only.
    assert status.extensions == (SKILLS_EXTENSION,)
    assert caps.extensions == {SKILLS_EXTENSION: {}, TASKS_EXTENSION: {}}
    assert caps.extension(TASKS_EXTENSION) == {}
    assert caps.extension(UI_EXTENSION) is None
    expected = {SKILLS_EXTENSION: {}, UI_EXTENSION: {"mimeTypes": [UI_MIME_TYPE]}}
    recording = Recording(record)
    if version == MODERN:
        requests = [m for m in recording.messages() if "id" in m and "method" in m]
        assert {m["method"] for m in requests} >= {"server/discover", "tools/list"}
        # Every modern request carries the declaration (it is per request).
        for message in requests:
            assert _declared(message, version) == expected, message["method"]
    else:
        (init,) = recording.requests("initialize")
        assert _declared(init, version) == expected


@pytest.mark.parametrize("version", ERAS)
def test_extensions_are_off_by_default(tmp_path: Path, version: str) -> None:
    record = tmp_path / "record.jsonl"
    defn = definition("--extension", SKILLS_EXTENSION, record=record, protocol=version)
    with mcpclient.connect(defn) as client:
        assert client.status().extensions == ()
        # The server's declaration is still reported.
        assert client.catalog().capabilities.extensions == {SKILLS_EXTENSION: {}}
    method = "server/discover" if version == MODERN else "initialize"
    for message in Recording(record).requests(method):
        assert _declared(message, version) is None


def test_custom_settings_are_sent_verbatim(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    settings = {"mimeTypes": ["text/html;profile=mcp-app", "text/x-other"]}
    defn = definition(
        "--extension",
        UI_EXTENSION,
        record=record,
        protocol=LATEST_LEGACY,
        extensions=[mcpclient.Extension(UI_EXTENSION, settings), "com.example/thing"],
    )
    with mcpclient.connect(defn) as client:
        assert client.status().extensions == (UI_EXTENSION,)
    (init,) = Recording(record).requests("initialize")
    assert _declared(init, LATEST_LEGACY) == {UI_EXTENSION: settings, "com.example/thing": {}}


@pytest.mark.parametrize("version", ERAS)
def test_a_servers_declared_extensions_are_part_of_the_catalog_identity(version: str) -> None:
    def digest(*flags: str) -> str:
        # unique=False: the same server version each start (the default differs per start)
        with mcpclient.connect(definition(*flags, protocol=version, unique=False)) as client:
            return client.catalog().digest

    plain = digest()
    assert digest() == plain  # the same server, the same identity
    tasks = digest("--extension", TASKS_EXTENSION)
    both = digest("--extension", TASKS_EXTENSION, "--extension", SKILLS_EXTENSION)
    assert len({plain, tasks, both}) == 3
