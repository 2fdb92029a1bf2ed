"""Issue 31, tool search on a ``Host`` of real testing servers.

* ``search_tools`` ranks the aggregate's tools of every serving binding by
  their model names (the host's own, renamed on collision);
* the index follows an adoption: a tool added and adopted is found, and the
  index is not rebuilt while no generation moves.
"""

from __future__ import annotations

from mcpclient import Host
from tests.support import definition, wait_until


def test_host_search_tools_ranks_every_binding_and_follows_an_adoption() -> None:
    with Host({"one": definition(name="one"), "two": definition(name="two")}) as host:
        hits = host.search_tools("echo", limit=5)
        names = [hit.model_name for hit in hits]
        assert {hit.binding for hit in hits if hit.tool.raw_name == "echo"} == {"one", "two"}
        assert names[:2] == sorted(names[:2])  # equal scores: by model name
        for hit in hits:
            assert host.route(hit.model_name)[0] == hit.binding
        index = host._search.index(host.catalog(), lambda: ())
        assert host.search_tools("echo", limit=5) == hits
        assert host._search.index(host.catalog(), lambda: ()) is index  # not rebuilt

        assert host.search_tools("zanzibarfresh") == []
        client = host.clients["one"]
        client.call_tool("mutate_catalog", {"add": "zanzibarfresh"})
        assert wait_until(lambda: client.candidate() is not None, 10.0)
        assert host.search_tools("zanzibarfresh") == []  # a candidate is not adopted
        candidate = client.candidate()
        assert candidate is not None
        client.adopt(candidate.generation)
        found = host.search_tools("zanzibarfresh")
        assert [(h.binding, h.tool.raw_name) for h in found] == [("one", "zanzibarfresh")]
        assert not host.call_tool(found[0].model_name, {}).is_error


def test_host_search_over_five_hundred_generated_tools() -> None:
    with Host({"big": definition("--item-count", "tools=500", name="big")}) as host:
        assert len(host.catalog().tools) >= 500
        hits = host.search_tools("echo", limit=3)
        assert hits and hits[0].tool.raw_name == "echo"
        assert len(host.search_tools("tool", limit=100)) == 100
