"""Pinned identity vectors: implementation == literal == independent recomputation.

A digest is a promise to hosts (cached catalogs, audit logs), so its value must
never move by accident. Each vector is checked three ways: the library, a hex
literal written here, and tests/unit/independent_vectors.py (written separately
with struct/hashlib/rfc8785). The same code run with the Go origin's domain tags
must reproduce origin-client.md section 17, which ties our layout to the origin's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from mcpclient._core import digest
from mcpclient._core.digest import catalog_digest, profile_digest, schema_digest
from mcpclient._core.naming import assign_model_names
from tests.unit import independent_vectors as independent

# --- pinned literals (this project's tags) ---

PROFILE_STRICT = "5803e62f3f1173fa71f012bcc5905c9db0bd9eb03c5fc3e7fd6cb2e227bdb2b0"
PROFILE_DEFAULT = "a768b1450bd4df77ff4776642e6a7e4871c04ccbfcb97fd48a4443a6e072434c"
PROFILE_LEGACY = "bf2c8ce1616052f03c38964f61c0a87a3cb5a985b342a966209b7d98a2976d95"
#: The shipped default/legacy profiles since v2 (missing_list_method); this project only.
PROFILE_DEFAULT_V2 = "cf9c9d7b7a568177f036c43189ed709288931e78d99c5451f2f1fe4071a8b5c2"
PROFILE_LEGACY_V2 = "3b51341065f92f89819d37d1589e25ef4c71ddbdbb6edbd32eca4e3e9f570f0c"
SCHEMA_OBJECT = "d06370a5e37d166aea5a57de5755b84f23b27cbd15219139143e768aebc366bc"
CATALOG_GOLDEN = "16ce1aa3557cd65ddf43ed95cfe0b26fdbf558289bd5c3ad6d534565266998d5"
#: The golden catalog with declared extensions (independent_vectors.EXTENSIONS).
CATALOG_EXTENSIONS = "ea92a7503b2f2519894081678c245cc12159664ada4c524d5d87425c58e6b9ad"
COLLISION = {
    "a.b": "mcp__srv__a_b_101d35da",
    "a/b": "mcp__srv__a_b_36439ee4",
    "a b": "mcp__srv__a_b_2167bb38",
    "a:b": "mcp__srv__a_b_7e004890",
}
TRUNCATION = "mcp__srv__" + "x" * 45 + "_20903e0b"

# --- origin-client.md section 17 (Go goldens, origin tags) ---

ORIGIN = {
    "profile_strict": "3981209efa03132092dc91ae7fdccfdd475de5d71e86ca1e383e5cd61b449892",
    "profile_default": "118175c29c30a4606b21d48e21790762c86c71f61de243b0fc1ab61aee10f88f",
    "profile_legacy": "826a7612e5f3f8d196507c0c49a8466ff473f314b7408bbe404a50dadcefe408",
    "schema_object": "94abc9e6396348daf1dec13b41238ae6a11b41283737821968892a354ab7b430",
    "catalog_golden": "28a3791f06547176ac6d39a18628782043c3061a2e6c55c15dc21736cd6a763f",
    "collision": {
        "a.b": "mcp__srv__a_b_81575847",
        "a/b": "mcp__srv__a_b_c49a173a",
        "a b": "mcp__srv__a_b_2f40b78d",
        "a:b": "mcp__srv__a_b_edfdae01",
    },
    "truncation": "mcp__srv__" + "x" * 45 + "_0b76cbce",
}

OURS = {
    "profile_strict": PROFILE_STRICT,
    "profile_default": PROFILE_DEFAULT,
    "profile_legacy": PROFILE_LEGACY,
    "profile_default_v2": PROFILE_DEFAULT_V2,
    "profile_legacy_v2": PROFILE_LEGACY_V2,
    "schema_object": SCHEMA_OBJECT,
    "catalog_golden": CATALOG_GOLDEN,
    "catalog_extensions": CATALOG_EXTENSIONS,
    "collision": COLLISION,
    "truncation": TRUNCATION,
}

# --- the golden catalog as plain frozen dataclasses (the digest reads Protocols) ---


@dataclass(frozen=True)
class Capabilities:
    tools: bool = False
    prompts: bool = False
    resources: bool = False
    resources_subscribe: bool = False
    logging: bool = False
    completions: bool = False
    extensions: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Server:
    name: str
    version: str
    title: str = ""


@dataclass(frozen=True)
class Annotations:
    title: str
    read_only_hint: bool
    idempotent_hint: bool
    destructive_hint: bool | None
    open_world_hint: bool | None


@dataclass(frozen=True)
class Tool:
    raw_name: str
    model_name: str
    input_schema_digest: str
    title: str = ""
    description: str = ""
    output_schema_digest: str = ""
    annotations: Annotations | None = None


@dataclass(frozen=True)
class PromptArgument:
    name: str
    title: str = ""
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class Prompt:
    name: str
    title: str = ""
    description: str = ""
    arguments: tuple[PromptArgument, ...] = ()


@dataclass(frozen=True)
class Resource:
    uri: str
    name: str
    title: str = ""
    description: str = ""
    mime_type: str = ""


@dataclass(frozen=True)
class ResourceTemplate:
    uri_template: str
    name: str
    title: str = ""
    description: str = ""
    mime_type: str = ""


@dataclass(frozen=True)
class Catalog:
    binding: str
    protocol_version: str
    capabilities: Capabilities
    server: Server
    instructions: str = ""
    tools: tuple[Tool, ...] = ()
    prompts: tuple[Prompt, ...] = ()
    resources: tuple[Resource, ...] = ()
    resource_templates: tuple[ResourceTemplate, ...] = field(default_factory=tuple)


def golden_catalog() -> Catalog:
    """Section 17's golden catalog, with schema digests computed by the library."""
    object_digest = schema_digest({"type": "object"}).hex()
    return Catalog(
        binding="golden",
        protocol_version="2025-06-18",
        capabilities=Capabilities(tools=True, prompts=True, resources=True, logging=True),
        server=Server(name="gold", version="0.1.0"),
        instructions="hold still",
        tools=(
            Tool(
                raw_name="with_everything",
                model_name="mcp__golden__with_everything",
                title="With everything",
                description="has an output schema and annotations",
                input_schema_digest=object_digest,
                output_schema_digest=object_digest,
                annotations=Annotations(
                    title="Everything",
                    read_only_hint=True,
                    idempotent_hint=False,
                    destructive_hint=False,
                    open_world_hint=True,
                ),
            ),
            Tool(
                raw_name="with_nothing",
                model_name="mcp__golden__with_nothing",
                input_schema_digest=object_digest,
            ),
        ),
        prompts=(
            Prompt(
                name="p",
                arguments=(
                    PromptArgument(name="a", title="A", description="first", required=True),
                ),
            ),
        ),
        resources=(Resource(uri="golden://r", name="r"),),
    )


TOLERANCES = {
    "strict": [],
    "default": [(1, "invalid_output_schema"), (3, "display_name_normalization")],
    "legacy": [(1, "invalid_output_schema"), (2, "legacy_sse"), (3, "display_name_normalization")],
    "default_v2": [
        (1, "invalid_output_schema"),
        (3, "display_name_normalization"),
        (4, "missing_list_method"),
    ],
    "legacy_v2": [
        (1, "invalid_output_schema"),
        (2, "legacy_sse"),
        (3, "display_name_normalization"),
        (4, "missing_list_method"),
    ],
}


def _with_extensions(extensions: dict[str, Any]) -> Catalog:
    base = golden_catalog()
    return replace(base, capabilities=replace(base.capabilities, extensions=extensions))


def implementation_vectors() -> dict[str, object]:
    """Every vector as the library computes it."""
    return {
        "profile_strict": profile_digest("strict", 1, TOLERANCES["strict"]),
        "profile_default": profile_digest("default", 1, TOLERANCES["default"]),
        "profile_legacy": profile_digest("legacy", 1, TOLERANCES["legacy"]),
        "profile_default_v2": profile_digest("default", 2, TOLERANCES["default_v2"]),
        "profile_legacy_v2": profile_digest("legacy", 2, TOLERANCES["legacy_v2"]),
        "schema_object": schema_digest({"type": "object"}).hex(),
        "catalog_golden": catalog_digest(golden_catalog()),
        "catalog_extensions": catalog_digest(_with_extensions(independent.EXTENSIONS)),
        "collision": dict(assign_model_names("srv", ["a.b", "a/b", "a b", "a:b"]).by_raw),
        "truncation": assign_model_names("srv", ["x" * 200]).by_raw["x" * 200],
    }


@pytest.fixture
def origin_tags(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Switch the library to the Go origin's domain tags for one test."""
    for attribute, key in (
        ("PROFILE_DOMAIN", "profile"),
        ("SCHEMA_DOMAIN", "schema"),
        ("NAME_DOMAIN", "name"),
        ("CATALOG_DOMAIN", "catalog"),
    ):
        monkeypatch.setattr(digest, attribute, independent.ORIGIN_TAGS[key].decode())
    yield


@pytest.mark.parametrize("key", sorted(OURS))
def test_vector_implementation_literal_independent(key: str) -> None:
    assert implementation_vectors()[key] == OURS[key]
    assert independent.vectors()[key] == OURS[key]


@pytest.mark.parametrize("key", sorted(ORIGIN))
def test_origin_tags_reproduce_go_goldens(key: str, origin_tags: None) -> None:
    assert implementation_vectors()[key] == ORIGIN[key]
    assert independent.vectors(independent.ORIGIN_TAGS)[key] == ORIGIN[key]


def test_tags_are_this_projects() -> None:
    assert digest.PROFILE_DOMAIN == "mcpclient.compat.profile"
    assert digest.SCHEMA_DOMAIN == "mcpclient.catalog.schema"
    assert digest.NAME_DOMAIN == "mcpclient.catalog.name"
    assert digest.CATALOG_DOMAIN == "mcpclient.catalog"
    assert digest.ENCODING_VERSION == 1


def test_truncated_name_is_exactly_64_bytes() -> None:
    assert len(TRUNCATION.encode()) == 64


def test_profile_tolerances_order_and_duplicates_do_not_matter() -> None:
    shuffled = [(3, "display_name_normalization"), (1, "invalid_output_schema")] * 2
    assert profile_digest("default", 1, shuffled) == PROFILE_DEFAULT
    assert profile_digest("default", 0, []) == profile_digest("default", -5, [])
    assert profile_digest("default", 2, TOLERANCES["default"]) != PROFILE_DEFAULT


def test_profile_conflicting_identifiers_refused() -> None:
    with pytest.raises(ValueError):
        profile_digest("x", 1, [(1, "a"), (1, "b")])


def test_catalog_digest_is_sensitive_to_each_part() -> None:
    base = golden_catalog()
    tool, bare = base.tools
    assert tool.annotations is not None
    no_destructive = replace(tool.annotations, destructive_hint=None)
    variants = [
        replace(base, binding="golden2"),
        replace(base, protocol_version="2025-03-26"),
        replace(base, instructions=""),
        replace(base, capabilities=Capabilities(tools=True)),
        replace(base, server=Server(name="gold", version="0.1.1")),
        replace(base, tools=(bare, tool)),
        replace(base, tools=(tool,)),
        replace(base, tools=(replace(tool, model_name="m"), bare)),
        replace(base, tools=(replace(tool, annotations=no_destructive), bare)),
        replace(base, tools=(replace(tool, annotations=None), bare)),
        replace(base, tools=(replace(tool, output_schema_digest=""), bare)),
        replace(base, tools=(tool, replace(bare, title="t"))),
        replace(base, prompts=()),
        replace(base, prompts=(Prompt(name="p"),)),
        replace(base, resources=(Resource(uri="golden://r", name="r", mime_type="text/plain"),)),
        replace(base, resource_templates=(ResourceTemplate("golden://{x}", "x"),)),
        _with_extensions({"io.modelcontextprotocol/tasks": {}}),
        _with_extensions({"io.modelcontextprotocol/tasks": {"cancel": True}}),
    ]
    digests = {catalog_digest(v) for v in variants}
    assert CATALOG_GOLDEN not in digests
    assert len(digests) == len(variants)


def test_declared_extensions_are_digested_canonically() -> None:
    # key order and number spelling do not matter; no extensions is the old digest
    one = {"b": {"y": 1, "x": [1.0, "é"]}, "a": {}}
    other = {"a": {}, "b": {"x": [1, "é"], "y": 1}}
    assert catalog_digest(_with_extensions(one)) == catalog_digest(_with_extensions(other))
    assert catalog_digest(_with_extensions({})) == CATALOG_GOLDEN


def test_catalog_digest_refuses_malformed_schema_digest() -> None:
    base = golden_catalog()
    tool, bare = base.tools
    for bad in ("00", "g" * 64, "A" * 64):
        with pytest.raises(ValueError):
            catalog_digest(replace(base, tools=(tool, replace(bare, input_schema_digest=bad))))


def test_a_large_catalog_is_hashed_in_small_batches_to_the_same_digest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Hashed a few KiB at a time (a whole-catalog buffer would stay resident in
    # the malloc arena of the thread that built it), to the same digest.
    base = golden_catalog()
    tool, bare = base.tools
    tools = tuple(
        replace(tool if i % 2 else bare, raw_name=f"t{i:04d}", model_name=f"mcp__g__t{i:04d}")
        for i in range(500)
    )
    large = replace(base, tools=tools)
    sizes: list[int] = []
    real = digest._Framer.raw

    def recorded(self: digest._Framer, data: bytes) -> None:
        sizes.append(len(data))
        real(self, data)

    monkeypatch.setattr(digest, "_BATCH_PARTS", 10**9)
    whole = catalog_digest(large)  # every tool in one update
    monkeypatch.undo()
    monkeypatch.setattr(digest._Framer, "raw", recorded)
    assert catalog_digest(large) == whole
    assert len(sizes) > 1 and max(sizes) < 64 * 1024
