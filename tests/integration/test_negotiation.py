"""Every row of the era negotiation's table (docs/architecture.md), over stdio and HTTP.

``protocol="auto"`` sends ``server/discover`` first; when it is not answered by
the fallback instant (min(5 s, half the startup budget)) ``initialize`` goes out
beside it on the same connection, and every answer, however late, is read for
what it says (issue 25). The testing server plays each kind of server in the
field: ``--lock-era`` (SDK 2.x, FastMCP 4: locked to the era of the first
request), ``--discover-delay`` (slow to answer), ``--discover-versions``
(the Go SDK's legacy-listing discover), ``--die-after-discover`` (FastMCP on
SDK <= 1.8), ``--exit-on-discover``, ``--silent-discover``.

Most rows use a 4 s startup budget, so the fallback instant is 2 s after the
connect starts; a late answer comes at 3 s, after it and well before the deadline.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

import mcpclient
from mcpclient import (
    DeadlineExceededError,
    Error,
    FailureClass,
    ProtocolError,
    Timeouts,
    connect,
)
from tests.support.http_servers import body_method, header, is_request

from .conftest import SpawnHttp
from .engine_support import LATEST_LEGACY, MODERN, REPO_ROOT, SLACK, Recording, definition

#: The fallback instant of a 4 s budget is 2 s in; a late answer comes at 3 s.
BUDGET = Timeouts(startup=4, request=10)
LATE = "3"


@attrs.frozen
class Peer:
    """One testing server to connect to, and what it read."""

    definition: mcpclient.Definition
    methods: Callable[[], list[str]]


Start = Callable[..., Peer]


@pytest.fixture(params=["stdio", "http"])
def start(request: pytest.FixtureRequest, tmp_path: Path, spawn_http: SpawnHttp) -> Start:
    """Start the testing server with flags over the parametrized transport."""

    def stdio(*flags: str, timeouts: Timeouts = BUDGET) -> Peer:
        rec = Recording(tmp_path / f"rec-{time.monotonic_ns()}.jsonl")
        return Peer(definition(*flags, record=rec.path, timeouts=timeouts), rec.methods)

    def http(*flags: str, timeouts: Timeouts = BUDGET) -> Peer:
        server = spawn_http(*flags)

        def methods() -> list[str]:
            return [str(body_method(e)) for e in server.records() if body_method(e)]

        transport = mcpclient.StreamableHTTPTransport(server.url)
        return Peer(mcpclient.Definition("web", transport, timeouts=timeouts), methods)

    return stdio if request.param == "stdio" else http


def version_of(defn: mcpclient.Definition) -> str | None:
    with connect(defn) as client:
        assert client.call_tool("echo", {"message": "hi"}).text == "hi"
        return client.status().protocol_version


# ------------------------------------------------------------------ answered at once


@pytest.mark.parametrize(
    ("flags", "version", "asked"),
    [
        (("--era", "modern"), MODERN, ["server/discover"]),
        (("--era", "dual"), MODERN, ["server/discover"]),
        (("--era", "dual", "--lock-era"), MODERN, ["server/discover"]),
        (("--era", "legacy"), LATEST_LEGACY, ["server/discover", "initialize"]),
    ],
    ids=["modern", "dual", "locked-dual", "legacy"],
)
def test_an_answer_at_once_decides(
    start: Start, flags: tuple[str, ...], version: str, asked: list[str]
) -> None:
    peer = start(*flags)
    begun = time.monotonic()
    assert version_of(peer.definition) == version
    assert time.monotonic() - begun < 2.0, "waited for the fallback instant"
    methods = [m for m in peer.methods() if m in ("server/discover", "initialize")]
    assert methods == asked


# ------------------------------------------------------------------ answered late


def test_a_locked_dual_server_that_answers_late_is_modern(start: Start) -> None:
    # initialize goes out at 2 s beside the pending probe; the server, locked to
    # the era of the probe it read first, refuses it with -32022 and answers
    # the probe at 3 s: modern, on the same connection.
    peer = start("--era", "dual", "--lock-era", "--discover-delay", LATE)
    assert version_of(peer.definition) == MODERN
    methods = peer.methods()
    assert methods[:2] == ["server/discover", "initialize"]
    assert methods.count("server/discover") == 1


def test_a_modern_only_server_that_answers_late_is_modern(start: Start) -> None:
    # Issue 25, defect 4: initialize (sent at 2 s) gets -32601; the probe's late
    # answer decides.
    peer = start("--era", "modern", "--discover-delay", LATE)
    assert version_of(peer.definition) == MODERN
    assert peer.methods().count("server/discover") == 1


def test_a_slow_starting_locked_dual_stdio_server_is_modern(tmp_path: Path) -> None:
    # Issue 25, defect 1, as seen: the server starts after the 5 s fallback, so
    # it reads the probe and initialize together, locks to the first and
    # refuses the second.
    rec = Recording(tmp_path / "rec.jsonl")
    defn = definition(
        "--era",
        "dual",
        "--lock-era",
        "--startup-delay",
        "6",
        record=rec.path,
        timeouts=Timeouts(startup=20, request=10),
    )
    assert version_of(defn) == MODERN
    assert rec.methods()[:2] == ["server/discover", "initialize"]


def test_the_probe_waits_for_the_whole_budget_not_a_fixed_cap(start: Start) -> None:
    # A 20 s budget: initialize joins at 5 s; the probe, answered at 7 s, still counts.
    peer = start("--era", "modern", "--discover-delay", "7", timeouts=Timeouts(startup=20))
    assert version_of(peer.definition) == MODERN


# ------------------------------------------------------------------ legacy answers


def test_a_discover_result_listing_only_legacy_versions_initializes_at_the_best(
    start: Start,
) -> None:
    # Issue 25, defect 3 (the Go SDK's stateful handler): the schema says to
    # choose from the list.
    peer = start("--era", "dual", "--discover-versions", "2025-03-26,2025-06-18,1999-01-01")
    assert version_of(peer.definition) == "2025-06-18"
    assert peer.methods()[:2] == ["server/discover", "initialize"]


def test_a_version_refusal_listing_only_legacy_versions_initializes(start: Start) -> None:
    # -32022 with data.supported naming legacy versions only.
    peer = start("--era", "dual", "--modern-versions", "2025-03-26")
    assert version_of(peer.definition) == "2025-03-26"


def test_a_discover_result_listing_nothing_this_client_speaks_is_unsupported(
    start: Start,
) -> None:
    peer = start("--era", "dual", "--discover-versions", "2099-01-01")
    with pytest.raises(ProtocolError) as info:
        connect(peer.definition)
    assert info.value.failure_class is FailureClass.UNSUPPORTED_PROTOCOL
    assert "2099-01-01" in info.value.message
    assert "initialize" not in peer.methods()


def test_a_silent_legacy_server_is_initialized_at_the_fallback_instant(start: Start) -> None:
    # dual: over HTTP a legacy-only front refuses the probe itself (400).
    peer = start("--era", "dual", "--silent-discover")
    begun = time.monotonic()
    assert version_of(peer.definition) == LATEST_LEGACY
    elapsed = time.monotonic() - begun
    assert 1.5 < elapsed < 2.0 + SLACK, elapsed
    assert peer.methods()[:2] == ["server/discover", "initialize"]


# ------------------------------------------------------------------ silence and refusal


def test_a_server_that_answers_nothing_is_a_startup_timeout_naming_both(start: Start) -> None:
    peer = start("--era", "dual", "--silent-discover", "--no-initialize-answer")
    begun = time.monotonic()
    with pytest.raises(DeadlineExceededError) as info:
        connect(peer.definition)
    assert time.monotonic() - begun < 4.0 + SLACK
    assert info.value.failure_class is FailureClass.STARTUP_TIMEOUT
    assert "server/discover" in info.value.message
    assert "initialize" in info.value.message


def test_a_legacy_server_that_refuses_initialize_fails_with_the_refusal(start: Start) -> None:
    # The probe is answered "not modern" (-32601); initialize is then refused
    # outright (every legacy version rejected, none listed in common).
    peer = start("--era", "legacy", "--legacy-versions", "2024-11-05", "--reject-versions", "3")
    with pytest.raises(ProtocolError) as info:
        connect(peer.definition)
    assert info.value.failure_class is FailureClass.UNSUPPORTED_PROTOCOL


# ------------------------------------------------------------------ death (stdio)


def _starts(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def _counting_definition(tmp_path: Path, *flags: str) -> tuple[mcpclient.Definition, Path]:
    """The testing server behind a wrapper that counts its starts (one cache key)."""
    log = tmp_path / "starts.log"
    wrapper = tmp_path / "wrapper.py"
    wrapper.write_text(
        "import runpy, sys\n"
        f"sys.path.insert(0, {str(REPO_ROOT)!r})\n"
        f"open({str(log)!r}, 'a').write('start\\n')\n"
        f"sys.argv = ['server', *{list(flags)!r}]\n"
        "runpy.run_module('mcpclient.testing.server', run_name='__main__')\n"
    )
    transport = mcpclient.StdioTransport(
        sys.executable, [str(wrapper)], cwd=str(REPO_ROOT), shutdown_grace=0.2
    )
    return mcpclient.Definition("dying", transport, timeouts=BUDGET), log


@pytest.mark.parametrize(
    "flag", ["--exit-on-discover", "--die-after-discover"], ids=["at-the-probe", "at-next-line"]
)
def test_a_server_that_dies_of_the_probe_is_restarted_once_per_process(
    tmp_path: Path, flag: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 25, defect 2: FastMCP on SDK <= 1.8 answers nothing and exits at the
    # next line (--die-after-discover); others exit at the probe itself.
    defn, log = _counting_definition(tmp_path, "--era", "legacy", flag)
    with caplog.at_level(logging.WARNING, logger="mcpclient"):
        assert version_of(defn) == LATEST_LEGACY
    assert _starts(log) == 2
    restarts = [r for r in caplog.records if "exited after the era probe" in r.getMessage()]
    assert len(restarts) == 1
    # The era is remembered for this command: the next connect neither probes
    # nor restarts.
    assert version_of(defn) == LATEST_LEGACY
    assert _starts(log) == 3


def test_a_server_dying_at_the_next_line_over_http_is_a_classified_failure(
    spawn_http: SpawnHttp,
) -> None:
    server = spawn_http("--era", "dual", "--die-after-discover")
    defn = mcpclient.Definition(
        "web", mcpclient.StreamableHTTPTransport(server.url), timeouts=BUDGET
    )
    begun = time.monotonic()
    with pytest.raises(Error) as info:
        connect(defn)
    assert time.monotonic() - begun < 4.0 + SLACK
    assert info.value.failure_class in (
        FailureClass.TRANSPORT_CLOSED,
        FailureClass.STARTUP_TIMEOUT,
    )


# ------------------------------------------------------------------ the era cache


def test_a_stale_cached_legacy_era_is_probed_again_on_the_same_connection(
    tmp_path: Path,
) -> None:
    era_file = tmp_path / "era"
    era_file.write_text("legacy")
    wrapper = tmp_path / "wrapper.py"
    rec = Recording(tmp_path / "rec.jsonl")
    wrapper.write_text(
        "import pathlib, runpy, sys\n"
        f"sys.path.insert(0, {str(REPO_ROOT)!r})\n"
        f"era = pathlib.Path({str(era_file)!r}).read_text()\n"
        f"sys.argv = ['server', '--era', era, '--record', {str(rec.path)!r}]\n"
        "runpy.run_module('mcpclient.testing.server', run_name='__main__')\n"
    )
    transport = mcpclient.StdioTransport(
        sys.executable, [str(wrapper)], cwd=str(REPO_ROOT), shutdown_grace=0.2
    )
    defn = mcpclient.Definition("moving", transport, timeouts=BUDGET)
    assert version_of(defn) == LATEST_LEGACY
    era_file.write_text("modern")  # redeployed on the new era
    assert version_of(defn) == MODERN
    methods = [m for m in rec.methods() if m in ("server/discover", "initialize")]
    # First: probe, initialize. Second: initialize (the cache), refused, probe.
    assert methods == ["server/discover", "initialize", "initialize", "server/discover"]


def test_http_initialize_carries_no_modern_headers_beside_the_probe(spawn_http: SpawnHttp) -> None:
    server = spawn_http("--era", "dual", "--silent-discover")
    defn = mcpclient.Definition(
        "web", mcpclient.StreamableHTTPTransport(server.url), timeouts=BUDGET
    )
    assert version_of(defn) == LATEST_LEGACY
    requests = [e for e in server.records() if is_request(e)]
    by_method = {body_method(e): e for e in requests}
    assert header(by_method["server/discover"], "MCP-Protocol-Version") == MODERN
    assert header(by_method["initialize"], "Mcp-Method") is None
    assert header(by_method["initialize"], "MCP-Protocol-Version") is None
