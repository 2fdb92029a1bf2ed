"""A config of each dialect connects for real to the testing server: stdio, HTTP and SSE.

Each test writes the host's file where that host keeps it (so ``dialect="auto"``
picks it by name), in the host's own keys and variable syntax; the variable
carries a value the server reports back (``--server-version``) or checks (the
``Authorization`` header in its ``--record``), so an expansion that did not
happen fails the test.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import mcpclient
from mcpclient import Timeouts, config
from mcpclient.config import ConfigWarning, ServerConfig
from tests.support.http_servers import ScriptedServer, header
from tests.support.servers import REPO_ROOT

from .conftest import SpawnHttp

PY = sys.executable
SERVER_ARGS = ["-m", "mcpclient.testing.server"]
TIMEOUTS = Timeouts(startup=15, request=10)
VERSION = "cfg-7.7.7"
TOKEN = "tok-S3CR3T-77"
ENV = {"SRV_VERSION": VERSION, "REPO": str(REPO_ROOT), "TOKEN": TOKEN}


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def as_json(document: Any) -> str:
    return json.dumps(document, indent=2)


def stdio_entry(version: str, repo: str, **extra: Any) -> dict[str, Any]:
    return {
        "command": PY,
        "args": [*SERVER_ARGS, "--server-version", version],
        "env": {"PYTHONPATH": repo},
        **extra,
    }


#: (relative path, file text): one stdio server "srv" per host, in its own syntax.
STDIO_FILES: dict[str, tuple[str, str]] = {
    "claude-desktop": (
        "claude_desktop_config.json",
        as_json({"mcpServers": {"srv": stdio_entry(VERSION, str(REPO_ROOT))}}),
    ),
    "claude-code": (
        ".mcp.json",
        as_json(
            {
                "mcpServers": {
                    "srv": {
                        "type": "stdio",
                        **stdio_entry("${SRV_VERSION}", "${REPO:-/nowhere}"),
                    }
                }
            }
        ),
    ),
    "cursor": (
        ".cursor/mcp.json",
        "// Cursor\n"
        + as_json({"mcpServers": {"srv": stdio_entry("${env:SRV_VERSION}", "${env:REPO}")}}),
    ),
    "vscode": (
        ".vscode/mcp.json",
        """{
  // VS Code, with an input
  "inputs": [{"type": "promptString", "id": "version", "description": "v"},],
  "servers": {
    "srv": {"type": "stdio", "command": "PYTHON",
            "args": ["-m", "mcpclient.testing.server", "--server-version", "${input:version}"],
            "env": {"PYTHONPATH": "${env:REPO}"},},
  },
}""".replace("PYTHON", PY),
    ),
    "windsurf": (
        ".codeium/windsurf/mcp_config.json",
        as_json(
            {
                "mcpServers": {
                    "srv": stdio_entry("${env:SRV_VERSION}", "${env:REPO}", disabledTools=["a?d"])
                }
            }
        ),
    ),
    "gemini": (
        ".gemini/settings.json",
        as_json(
            {
                "mcpServers": {
                    "srv": stdio_entry(
                        "$SRV_VERSION",
                        "${REPO}",
                        cwd=str(REPO_ROOT),
                        timeout=9000,
                        includeTools=["echo", "add"],
                        excludeTools=["add"],
                    )
                }
            }
        ),
    ),
    "codex": (
        ".codex/config.toml",
        f"""[mcp_servers.srv]
command = {json.dumps(PY)}
args = ["-m", "mcpclient.testing.server", "--server-version", "{VERSION}"]
cwd = {json.dumps(str(REPO_ROOT))}
startup_timeout_sec = 12
tool_timeout_sec = 9
enabled_tools = ["echo"]

[mcp_servers.srv.env]
PYTHONPATH = {json.dumps(str(REPO_ROOT))}
""",
    ),
    "zed": (
        ".zed/settings.json",
        "// Zed\n"
        + as_json(
            {
                "context_servers": {
                    "srv": {"source": "custom", **stdio_entry(VERSION, str(REPO_ROOT))}
                }
            }
        ),
    ),
    "cline": (
        "cline_mcp_settings.json",
        as_json(
            {
                "mcpServers": {
                    "srv": stdio_entry(
                        VERSION, str(REPO_ROOT), disabled=False, autoApprove=["echo"], timeout=9
                    )
                }
            }
        ),
    ),
    "fastmcp": (
        "mcp.json",
        as_json(
            {
                "mcpServers": {
                    "srv": {
                        "transport": "stdio",
                        **stdio_entry(VERSION, str(REPO_ROOT)),
                        "cwd": str(REPO_ROOT),
                    }
                }
            }
        ),
    ),
}

#: What each host's tool filter leaves visible ("*": everything). Windsurf's
#: ``disabledTools: ["a?d"]`` is a glob: the client itself must apply it.
VISIBLE = {"windsurf": "no add", "gemini": {"echo"}, "codex": {"echo"}}


def load_one(path: Path, **kwargs: Any) -> ServerConfig:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConfigWarning)  # these files are clean
        loaded = config.load(path, env=ENV, **kwargs)
    assert list(loaded) == ["srv"]
    return loaded["srv"]


@pytest.mark.parametrize("dialect", sorted(STDIO_FILES))
def test_a_stdio_server_of_every_dialect_connects(tmp_path: Path, dialect: str) -> None:
    relative, text = STDIO_FILES[dialect]
    path = write(tmp_path, relative, text)
    server = load_one(path, inputs={"version": VERSION})
    assert server.dialect == dialect
    definition = server.definition(timeouts=TIMEOUTS)
    with mcpclient.connect(definition, timeout=20) as client:
        catalog = client.catalog()
        assert catalog.server.version == VERSION  # the expanded argument reached the server
        names = {t.raw_name for t in catalog.tools}
        visible = VISIBLE.get(dialect, "*")
        if visible == "no add":
            assert "echo" in names and "add" not in names
        elif isinstance(visible, set):
            assert names == visible
        else:
            assert {"echo", "add"} <= names
        result = client.call_tool("echo", {"message": "from a config"})
        assert "from a config" in result.text


def test_units_reach_the_definition(tmp_path: Path) -> None:
    gemini = load_one(write(tmp_path, *STDIO_FILES["gemini"]))
    assert gemini.definition().timeouts.request == 9.0  # 9000 ms
    codex = load_one(write(tmp_path, *STDIO_FILES["codex"]))
    assert (codex.definition().timeouts.startup, codex.definition().timeouts.request) == (12, 9)
    cline = load_one(write(tmp_path, *STDIO_FILES["cline"]))
    assert cline.definition().timeouts.request == 9.0


# ------------------------------------------------------------------------------------ HTTP


@pytest.fixture(scope="module")
def http_server(spawn_shared_http: SpawnHttp) -> ScriptedServer:
    return spawn_shared_http("--era", "dual")


@pytest.fixture(scope="module")
def sse_server(spawn_shared_http: SpawnHttp) -> ScriptedServer:
    return spawn_shared_http("--era", "legacy")


def _http_files(url: str, tag: str) -> dict[str, tuple[str, str]]:
    auth = {"Authorization": "Bearer ${TOKEN}", "X-Test-Case": tag}
    return {
        "claude-code": (
            ".mcp.json",
            as_json({"mcpServers": {"srv": {"type": "http", "url": url, "headers": auth}}}),
        ),
        "cursor": (
            ".cursor/mcp.json",
            as_json(
                {
                    "mcpServers": {
                        "srv": {
                            "url": url,
                            "headers": {"Authorization": "Bearer ${env:TOKEN}", "X-Test-Case": tag},
                        }
                    }
                }
            ),
        ),
        "vscode": (
            ".vscode/mcp.json",
            as_json(
                {
                    "inputs": [{"type": "promptString", "id": "tok", "password": True}],
                    "servers": {
                        "srv": {
                            "type": "http",
                            "url": url,
                            "headers": {"Authorization": "Bearer ${input:tok}", "X-Test-Case": tag},
                        }
                    },
                }
            ),
        ),
        "windsurf": (
            ".codeium/windsurf/mcp_config.json",
            as_json(
                {
                    "mcpServers": {
                        "srv": {
                            "serverUrl": url,
                            "headers": {"Authorization": "Bearer ${env:TOKEN}", "X-Test-Case": tag},
                        }
                    }
                }
            ),
        ),
        "gemini": (
            ".gemini/settings.json",
            as_json(
                {
                    "mcpServers": {
                        "srv": {
                            "httpUrl": url,
                            "headers": {"Authorization": "Bearer $TOKEN", "X-Test-Case": tag},
                        }
                    }
                }
            ),
        ),
        "codex": (
            ".codex/config.toml",
            f'[mcp_servers.srv]\nurl = "{url}"\nbearer_token_env_var = "TOKEN"\n'
            f'http_headers = {{ "X-Test-Case" = "{tag}" }}\n',
        ),
        "zed": (
            ".zed/settings.json",
            as_json(
                {
                    "context_servers": {
                        "srv": {
                            "url": url,
                            "headers": {"Authorization": f"Bearer {TOKEN}", "X-Test-Case": tag},
                        }
                    }
                }
            ),
        ),
        "cline": (
            "cline_mcp_settings.json",
            as_json(
                {
                    "mcpServers": {
                        "srv": {
                            "type": "streamableHttp",
                            "url": url,
                            "headers": {"Authorization": f"Bearer {TOKEN}", "X-Test-Case": tag},
                        }
                    }
                }
            ),
        ),
        "fastmcp": (
            "mcp.json",
            as_json(
                {
                    "mcpServers": {
                        "srv": {
                            "transport": "http",
                            "url": url,
                            "auth": TOKEN,
                            "headers": {"X-Test-Case": tag},
                        }
                    }
                }
            ),
        ),
    }


HTTP_DIALECTS = sorted(_http_files("http://127.0.0.1:1/mcp", "t"))


def _connect_and_check(
    server: ServerConfig, peer: ScriptedServer, tag: str, check: Callable[[ServerConfig], None]
) -> None:
    check(server)
    with mcpclient.connect(server.definition(timeouts=TIMEOUTS), timeout=20) as client:
        assert "echo" in {t.raw_name for t in client.catalog().tools}
        assert "over http" in client.call_tool("echo", {"message": "over http"}).text
    records = peer.records(tag)
    assert records, "the server saw none of this test's requests"
    assert {header(r, "Authorization") for r in records} == {f"Bearer {TOKEN}"}


@pytest.mark.parametrize("dialect", HTTP_DIALECTS)
def test_an_http_server_of_every_dialect_connects_with_its_token(
    tmp_path: Path, http_server: ScriptedServer, dialect: str
) -> None:
    tag = f"config-http-{dialect}"
    relative, text = _http_files(http_server.url, tag)[dialect]
    server = load_one(write(tmp_path, relative, text), inputs={"tok": TOKEN})

    def check(s: ServerConfig) -> None:
        assert (s.dialect, s.transport, s.url) == (dialect, "http", http_server.url)

    _connect_and_check(server, http_server, tag, check)


SSE_FILES = {
    "claude-code": lambda url: (".mcp.json", {"mcpServers": {"srv": {"type": "sse", "url": url}}}),
    "vscode": lambda url: (".vscode/mcp.json", {"servers": {"srv": {"type": "sse", "url": url}}}),
    "gemini": lambda url: (".gemini/settings.json", {"mcpServers": {"srv": {"url": url}}}),
    "cline": lambda url: (
        "cline_mcp_settings.json",
        {"mcpServers": {"srv": {"type": "sse", "url": url}}},
    ),
    "fastmcp": lambda url: ("mcp.json", {"mcpServers": {"srv": {"transport": "sse", "url": url}}}),
}


@pytest.mark.parametrize("dialect", sorted(SSE_FILES))
def test_an_sse_server_connects_over_the_legacy_transport(
    tmp_path: Path, sse_server: ScriptedServer, dialect: str
) -> None:
    url = f"{sse_server.base}/sse"
    relative, document = SSE_FILES[dialect](url)
    server = load_one(write(tmp_path, relative, as_json(document)))
    assert (server.dialect, server.transport) == (dialect, "sse")
    definition = server.definition(timeouts=TIMEOUTS)
    assert isinstance(definition.transport, mcpclient.LegacySSETransport)
    with mcpclient.connect(definition, timeout=20) as client:
        assert "over sse" in client.call_tool("echo", {"message": "over sse"}).text


def test_a_dumped_config_connects_as_the_original(tmp_path: Path) -> None:
    original = load_one(write(tmp_path, *STDIO_FILES["gemini"]))
    dumped = config.dump([original], "codex")
    assert dumped.lost == ()
    again = load_one(write(tmp_path / "out", ".codex/config.toml", dumped.text))
    with mcpclient.connect(again.definition(timeouts=TIMEOUTS), timeout=20) as client:
        assert client.catalog().server.version == VERSION
        assert {t.raw_name for t in client.catalog().tools} == {"echo"}
