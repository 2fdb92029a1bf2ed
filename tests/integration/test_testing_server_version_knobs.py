"""The testing server's ``--missing-list`` and ``--reject-versions`` knobs, raw JSON lines.

What the client tests rely on, pinned at the wire: a missing list method is
-32601 with the method as ``data`` (as the SDK's low-level server answers); a
scripted version refusal is -32022 (modern) or -32602 (``initialize``) with
``data.supported``/``data.requested``, used up once per process; the runtime
controls (``mutate_catalog``'s ``missing_lists`` and ``reject_versions``).
"""

from __future__ import annotations

from .conftest import SpawnLineServer
from .test_testing_server import META, MODERN, call, text_of


def test_missing_list_answers_method_not_found(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "modern", "--missing-list", "templates,prompts")
    templates = server.request(1, "resources/templates/list", {"_meta": META})["error"]
    assert templates == {
        "code": -32601,
        "message": "Method not found",
        "data": "resources/templates/list",
    }
    assert server.request(2, "prompts/list", {"_meta": META})["error"]["code"] == -32601
    assert "resources" in server.request(3, "resources/list", {"_meta": META})["result"]
    # Still declared: the knob leaves the capabilities alone.
    caps = server.request(4, "server/discover", {"_meta": META})["result"]["capabilities"]
    assert "resources" in caps
    assert "prompts" in caps
    changed = server.request(5, "tools/call", call("mutate_catalog", {"missing_lists": []}, META))
    assert '"missing_lists": []' in text_of(changed)
    assert "prompts" in server.request(6, "prompts/list", {"_meta": META})["result"]
    bad = server.request(7, "tools/call", call("mutate_catalog", {"missing_lists": ["x"]}, META))
    assert bad["result"]["isError"] is True


def test_reject_versions_refuses_the_first_requests_once(
    spawn_stdio_server: SpawnLineServer,
) -> None:
    server = spawn_stdio_server("--reject-versions", "2")
    for rid in (1, 2):
        error = server.request(rid, "server/discover", {"_meta": META})["error"]
        assert error["code"] == -32022
        assert error["data"] == {"supported": [MODERN], "requested": MODERN}
    assert "supportedVersions" in server.request(3, "server/discover", {"_meta": META})["result"]


def test_reject_versions_refuses_initialize_with_the_spec_error(
    spawn_stdio_server: SpawnLineServer,
) -> None:
    server = spawn_stdio_server(
        "--era", "legacy", "--legacy-versions", "2025-03-26", "--reject-versions", "1"
    )
    error = server.initialize("2025-11-25")["error"]
    assert error["code"] == -32602
    assert error["message"] == "Unsupported protocol version"
    assert error["data"] == {"supported": ["2025-03-26"], "requested": "2025-11-25"}
    # Nothing was initialized: the next initialize is answered normally.
    assert server.initialize("2025-03-26")["result"]["protocolVersion"] == "2025-03-26"


def test_reject_versions_at_runtime_for_one_method(spawn_stdio_server: SpawnLineServer) -> None:
    server = spawn_stdio_server("--era", "modern")
    spec = {"count": 1, "method": "tools/call", "supported": ["2099-01-01"]}
    armed = server.request(1, "tools/call", call("mutate_catalog", {"reject_versions": spec}, META))
    assert '"reject_versions": 1' in text_of(armed)
    # Other methods pass; the next tools/call is refused, then calls pass again.
    assert "tools" in server.request(2, "tools/list", {"_meta": META})["result"]
    refused = server.request(3, "tools/call", call("echo", {"message": "x"}, META))["error"]
    assert refused["code"] == -32022
    assert refused["data"] == {"supported": ["2099-01-01"], "requested": MODERN}
    assert text_of(server.request(4, "tools/call", call("echo", {"message": "y"}, META))) == "y"
