"""``run_tool_calls`` with a ``ResultBudget`` against the testing server over stdio.

The ``hostile`` tool's ``result`` action answers with a 6 MB text item, a
resource link and an image; the budget cuts the text to its head and tail,
names the link in its note, describes the image, and hands the caller the
whole result.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest

import mcpclient
from mcpclient import export
from tests.support.servers import definition

SIZE = 6_000_000
TEXT = "H" * (SIZE // 2) + "T" * (SIZE // 2)
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 5000).decode("ascii")
RESULT = {
    "content": [
        {"type": "text", "text": TEXT},
        {"type": "resource_link", "uri": "file:///out/big.txt", "name": "big.txt"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
    ]
}


@pytest.fixture(scope="module")
def client() -> Iterator[mcpclient.Client]:
    # A 6 MB text item passes the client's limits when they allow it.
    limits = mcpclient.Limits(max_text_result_bytes=8 * 2**20)
    with mcpclient.connect(definition("--era", "modern", name="export", limits=limits)) as c:
        yield c


def test_a_6mb_result_is_cut_for_the_model_and_kept_whole(client: mcpclient.Client) -> None:
    response = {
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "id": "toolu_big",
                "name": "mcp__export__hostile",
                "input": {"action": "result", "result": RESULT},
            }
        ],
    }
    full: dict[str, mcpclient.ToolResult] = {}
    budget = export.ResultBudget(max_tokens=2000, media="describe")
    messages = export.run_tool_calls(
        client, response, provider="anthropic", timeout=30, budget=budget, full_results=full
    )
    [block] = messages[0]["content"]
    assert block["tool_use_id"] == "toolu_big" and block["is_error"] is False
    assert all(part["type"] == "text" for part in block["content"])
    text = "\n".join(part["text"] for part in block["content"])
    assert len(text) <= 8000
    assert text.startswith("HHHH") and "TTTT\n" in text
    assert "the full result is at the resource link file:///out/big.txt" in text
    assert "image image/png, 5008 bytes; described, not sent, by the result budget" in text
    assert full["toolu_big"].text == TEXT

    # Client.run_tool_calls takes the same budget.
    assert client.run_tool_calls(response, provider="anthropic", timeout=30, budget=budget) == (
        messages
    )
    # Without a budget the same call is sent whole, as before.
    whole = export.run_tool_calls(client, response, provider="anthropic", timeout=30)
    assert whole[0]["content"][0]["content"][0]["text"] == TEXT
