"""A declared family whose list method answers -32601 (issue 14, defect 6).

A low-level Python SDK server that registers ``resources/list`` but no
``resources/templates/list`` handler declares ``resources`` and answers the
templates listing with -32601; the official SDK's client connects to it. Under
the default profile the family is empty, with a catalog warning and the
``missing_list_method`` tolerance; under ``strict`` connect still refuses.

Peers: ``peers/lowlevel_server.py`` (the SDK's low-level ``Server``, over stdio
in both eras and over Streamable HTTP) and the testing server's
``--missing-list`` knob (every family, both eras, stdio and HTTP) and its
runtime ``missing_lists`` control (a list_changed re-fetch).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

import mcpclient
from mcpclient import (
    PROFILE_DEFAULT,
    PROFILE_STRICT,
    CatalogCandidate,
    CatalogError,
    CatalogRejected,
    FailureClass,
    RetryPolicy,
    State,
    StreamableHTTPTransport,
    Tolerance,
    connect,
)
from tests.support.http_servers import ServerProcess

from .conftest import PEERS_DIR, SpawnHttp, make_definition
from .engine_support import MODERN, Recording, definition, text_of, wait_until
from .test_catalog import Events, mutate

LOWLEVEL_SERVER = PEERS_DIR / "lowlevel_server.py"
LATEST_LEGACY = "2025-11-25"
PROTOCOLS = [LATEST_LEGACY, MODERN]
#: (family, its list method, the Catalog field that holds it)
FAMILIES = [
    ("tools", "tools/list", "tools"),
    ("prompts", "prompts/list", "prompts"),
    ("resources", "resources/list", "resources"),
    ("resourceTemplates", "resources/templates/list", "resource_templates"),
]


def tolerated(catalog: mcpclient.Catalog, method: str) -> None:
    """``method`` was missing and tolerated: the tolerance and both warnings are there."""
    assert Tolerance.MISSING_LIST_METHOD in catalog.applied_tolerances
    assert "compatibility: applied tolerance missing_list_method" in catalog.warnings
    assert any(w.startswith(f"{method}: the server declares") for w in catalog.warnings), (
        catalog.warnings
    )


@pytest.fixture(scope="session")
def lowlevel_command(sdk_server_command: list[str]) -> list[str]:
    """argv of the low-level SDK peer (the same SDK pin as the ``sdk_server`` peer)."""
    return [sys.executable, str(LOWLEVEL_SERVER)]


@pytest.fixture(scope="module")
def lowlevel_http(
    sdk_server_command: list[str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    with ServerProcess(
        [sys.executable, str(LOWLEVEL_SERVER), "--http"],
        log_dir=tmp_path_factory.mktemp("lowlevel-http"),
    ) as server:
        yield server


def _use_lowlevel(client: mcpclient.Client) -> None:
    catalog = client.catalog()
    assert catalog.resource_templates == ()
    assert [r.uri for r in catalog.resources] == ["test://lowlevel/readme"]
    assert [t.raw_name for t in catalog.tools] == ["echo"]
    tolerated(catalog, "resources/templates/list")
    assert client.status().state is State.READY
    assert client.status().compat_profile == str(PROFILE_DEFAULT)
    assert client.call_tool("echo", {"message": "hi"}).text == "hi"
    content = client.read_resource("test://lowlevel/readme").contents[0]
    assert isinstance(content, mcpclient.ResourceContent)
    assert content.text == "a low-level server with no resource templates"


# ------------------------------------------------------------- the low-level SDK server


@pytest.mark.peer
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_lowlevel_sdk_server_without_templates_connects(
    lowlevel_command: list[str], protocol: str
) -> None:
    command, *args = lowlevel_command
    with connect(make_definition("lowlevel", command, args, protocol=protocol)) as client:
        assert client.status().protocol_version == protocol
        _use_lowlevel(client)


@pytest.mark.peer
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_lowlevel_sdk_server_is_refused_under_strict(
    lowlevel_command: list[str], protocol: str
) -> None:
    command, *args = lowlevel_command
    defn = make_definition("lowlevel", command, args, protocol=protocol, compat=PROFILE_STRICT)
    with pytest.raises(CatalogError) as info:
        connect(defn)
    assert info.value.failure_class is FailureClass.CATALOG_INVALID
    assert "resources/templates/list" in info.value.message
    assert "missing_list_method" in info.value.message


@pytest.mark.peer
@pytest.mark.parametrize("protocol", ["auto", LATEST_LEGACY])
def test_lowlevel_sdk_server_over_http(lowlevel_http: ServerProcess, protocol: str) -> None:
    defn = mcpclient.Definition(
        "lowlevel", StreamableHTTPTransport(lowlevel_http.url), protocol=protocol
    )
    with connect(defn) as client:
        _use_lowlevel(client)
    with pytest.raises(CatalogError):
        connect(attrs.evolve(defn, compat=PROFILE_STRICT))


# ------------------------------------------------------------- the testing server, every family


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize(("family", "method", "field"), FAMILIES, ids=[f for f, _, _ in FAMILIES])
def test_each_missing_family_is_empty_over_stdio(
    era: str, family: str, method: str, field: str, tmp_path: Path
) -> None:
    rec = Recording(tmp_path / "rec.jsonl")
    with connect(definition("--era", era, "--missing-list", family, record=rec.path)) as client:
        catalog = client.catalog()
        assert getattr(catalog, field) == ()
        tolerated(catalog, method)
        assert method in rec.methods()  # it was asked, once, and answered -32601
        # The other families are all there.
        for _, _, other in FAMILIES:
            if other != field:
                assert getattr(catalog, other), other
    with pytest.raises(CatalogError) as info:
        connect(definition("--era", era, "--missing-list", family, compat=PROFILE_STRICT))
    assert method in info.value.message


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_missing_lists_over_http(protocol: str, spawn_http: SpawnHttp) -> None:
    server = spawn_http("--missing-list", "prompts,resourceTemplates")
    transport = StreamableHTTPTransport(server.url)
    with connect(mcpclient.Definition("web", transport, protocol=protocol)) as client:
        catalog = client.catalog()
        assert catalog.prompts == ()
        assert catalog.resource_templates == ()
        assert catalog.tools
        assert catalog.resources
        tolerated(catalog, "prompts/list")
        tolerated(catalog, "resources/templates/list")
    strict = mcpclient.Definition("web", transport, protocol=protocol, compat=PROFILE_STRICT)
    with pytest.raises(CatalogError) as info:
        connect(strict)
    assert "prompts/list" in info.value.message


# ------------------------------------------------------------- on refresh


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_list_method_gone_on_refresh_is_an_empty_family(era: str) -> None:
    events = Events()
    with connect(definition("--era", era), events.handlers()) as client:
        first = client.catalog()
        assert first.prompts
        assert first.applied_tolerances == ()
        mutate(client, missing_lists=["prompts"], notify="prompts")
        candidate = events.wait(CatalogCandidate)[0]
        refreshed = client.candidate()
        assert refreshed is not None
        assert refreshed.generation == candidate.generation
        assert refreshed.prompts == ()
        tolerated(refreshed, "prompts/list")
        assert client.status().state is State.READY
        assert events.of(CatalogRejected) == []


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_list_method_gone_on_refresh_is_rejected_under_strict(era: str) -> None:
    events = Events()
    defn = definition(
        "--era",
        era,
        compat=PROFILE_STRICT,
        refresh=RetryPolicy(attempts=1, base_delay=0.01, max_delay=0.01),
    )
    with connect(defn, events.handlers()) as client:
        result = client.call_tool(
            "mutate_catalog", {"missing_lists": ["prompts"], "notify": "prompts"}
        )
        assert not result.is_error, text_of(result)
        rejected = events.wait(CatalogRejected)[0]
        assert rejected.failure_class is FailureClass.CATALOG_INVALID
        assert "prompts/list" in rejected.message
        assert client.candidate() is None
        assert client.catalog().prompts  # the adopted generation is kept
        assert wait_until(lambda: client.status().state is State.DEGRADED)
