"""An independent recomputation of the identity vectors (not imported by the library).

Written separately from mcpclient._core.digest/naming, from the layout in
origin-client.md sections 7.6-7.9 with this project's domain tags, using only
``struct``, ``hashlib`` and the ``rfc8785`` package (for schema bytes). The
vector test asserts implementation == pinned literal == this script, so a
change to either side that moves a digest is caught twice.

Run directly to print every vector: ``python3 tests/unit/independent_vectors.py``.
"""

from __future__ import annotations

import hashlib
import re
import struct

import rfc8785

# This project's domain tags (DESIGN.md section 7).
OUR_TAGS = {
    "profile": b"mcpclient.compat.profile",
    "schema": b"mcpclient.catalog.schema",
    "name": b"mcpclient.catalog.name",
    "catalog": b"mcpclient.catalog",
}
# The Go origin's tags: with these, vectors() reproduces origin-client.md section 17,
# which checks this script's layout against the Go goldens.
ORIGIN_TAGS = {
    "profile": b"looprig.mcp.compat.profile",
    "schema": b"looprig.mcp.catalog.schema",
    "name": b"looprig.mcp.catalog.name",
    "catalog": b"looprig.mcp.catalog",
}


def u64(n):
    return struct.pack(">Q", n)


def lp(data):
    """Length-prefixed bytes; str is UTF-8 encoded first."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return u64(len(data)) + data


def header(tag):
    return lp(tag) + u64(1)


def one_byte(flag):
    return b"\x01" if flag else b"\x00"


def three_state(flag):
    if flag is None:
        return b"\x00"
    return b"\x02" if flag else b"\x01"


# --- profiles ---

INVALID_OUTPUT_SCHEMA = (1, "invalid_output_schema")
LEGACY_SSE = (2, "legacy_sse")
DISPLAY_NAME_NORMALIZATION = (3, "display_name_normalization")
MISSING_LIST_METHOD = (4, "missing_list_method")

PROFILES = {
    "strict": (1, []),
    "default": (1, [INVALID_OUTPUT_SCHEMA, DISPLAY_NAME_NORMALIZATION]),
    "legacy": (1, [INVALID_OUTPUT_SCHEMA, LEGACY_SSE, DISPLAY_NAME_NORMALIZATION]),
    # The shipped profiles since missing_list_method (this project only).
    "default_v2": (2, [INVALID_OUTPUT_SCHEMA, DISPLAY_NAME_NORMALIZATION, MISSING_LIST_METHOD]),
    "legacy_v2": (
        2,
        [INVALID_OUTPUT_SCHEMA, LEGACY_SSE, DISPLAY_NAME_NORMALIZATION, MISSING_LIST_METHOD],
    ),
}


def profile(name, version, tolerances, tags=OUR_TAGS):
    ids = [ident for _, ident in sorted(set(tolerances))]
    data = header(tags["profile"]) + lp(name) + u64(version) + u64(len(ids))
    for ident in ids:
        data += lp(ident)
    return hashlib.sha256(data).hexdigest()


# --- schema and name digests ---


def schema(value, tags=OUR_TAGS):
    return hashlib.sha256(header(tags["schema"]) + lp(rfc8785.dumps(value))).digest()


def name(binding, raw, tags=OUR_TAGS):
    return hashlib.sha256(header(tags["name"]) + lp(binding) + lp(raw)).digest()


def model_names(binding, raws, tags=OUR_TAGS):
    """Section 7.6, written out plainly."""
    cand = {r: "mcp__" + binding + "__" + re.sub("[^A-Za-z0-9_-]", "_", r) for r in raws}
    out = {}
    for r in raws:
        c = cand[r]
        shared = sum(1 for other in raws if cand[other] == c) > 1
        if len(c.encode()) > 64 or shared:
            c = c.encode()[:55].decode() + "_" + name(binding, r, tags)[:4].hex()
        out[r] = c
    return out


# --- the golden catalog (origin-client.md section 17, our tags) ---

OBJECT_SCHEMA = {"type": "object"}

GOLDEN = {
    "binding": "golden",
    "protocol": "2025-06-18",
    # tools, prompts, resources, resources_subscribe, logging, completions
    "caps": (True, True, True, False, True, False),
    "server": ("gold", "0.1.0", ""),
    "instructions": "hold still",
    "tools": [
        {
            "raw": "with_everything",
            "model": "mcp__golden__with_everything",
            "title": "With everything",
            "description": "has an output schema and annotations",
            "input": OBJECT_SCHEMA,
            "output": OBJECT_SCHEMA,
            # title, read-only, idempotent, destructive, open-world
            "annotations": ("Everything", True, False, False, True),
        },
        {
            "raw": "with_nothing",
            "model": "mcp__golden__with_nothing",
            "title": "",
            "description": "",
            "input": OBJECT_SCHEMA,
            "output": None,
            "annotations": None,
        },
    ],
    # name, title, description, [(name, title, description, required)]
    "prompts": [("p", "", "", [("a", "A", "first", True)])],
    # uri, name, title, description, mime
    "resources": [("golden://r", "r", "", "", "")],
    "templates": [],
}


def catalog(c, tags=OUR_TAGS):
    d = header(tags["catalog"])
    d += lp("binding") + lp(c["binding"])
    d += lp("protocol_version") + lp(c["protocol"])
    d += lp("capabilities") + b"".join(one_byte(x) for x in c["caps"])
    if c.get("extensions"):  # only when declared, as canonical JSON (RFC 8785)
        d += lp("extensions") + lp(rfc8785.dumps(c["extensions"]))
    d += lp("server") + b"".join(lp(x) for x in c["server"])
    d += lp("instructions") + lp(c["instructions"])
    d += lp("tools") + u64(len(c["tools"]))
    for t in c["tools"]:
        d += lp(t["raw"]) + lp(t["model"]) + lp(t["title"]) + lp(t["description"])
        d += lp(schema(t["input"], tags))
        if t["output"] is None:
            d += b"\x00" + lp(bytes(32))
        else:
            d += b"\x01" + lp(schema(t["output"], tags))
        d += lp("annotations")
        a = t["annotations"]
        if a is None:
            d += b"\x00"
        else:
            d += b"\x01" + lp(a[0]) + one_byte(a[1]) + one_byte(a[2])
            d += three_state(a[3]) + three_state(a[4])
    d += lp("prompts") + u64(len(c["prompts"]))
    for p_name, p_title, p_desc, args in c["prompts"]:
        d += lp(p_name) + lp(p_title) + lp(p_desc) + lp("arguments") + u64(len(args))
        for a_name, a_title, a_desc, a_req in args:
            d += lp(a_name) + lp(a_title) + lp(a_desc) + one_byte(a_req)
    d += lp("resources") + u64(len(c["resources"]))
    for r in c["resources"]:
        d += b"".join(lp(x) for x in r)
    d += lp("resource_templates") + u64(len(c["templates"]))
    for r in c["templates"]:
        d += b"".join(lp(x) for x in r)
    d += lp("end")
    return hashlib.sha256(d).hexdigest()


#: Declared extensions for the golden catalog's variant (this project only).
EXTENSIONS = {
    "io.modelcontextprotocol/tasks": {"cancel": True, "list": {}},
    "io.modelcontextprotocol/skills": {"version": 1.5, "é": [None, "x"]},
}

COLLIDING = ["a.b", "a/b", "a b", "a:b"]
LONG_NAME = "x" * 200


def vectors(tags=OUR_TAGS):
    """Every pinned vector, computed here."""
    return {
        "profile_strict": profile("strict", *PROFILES["strict"], tags),
        "profile_default": profile("default", *PROFILES["default"], tags),
        "profile_legacy": profile("legacy", *PROFILES["legacy"], tags),
        "profile_default_v2": profile("default", *PROFILES["default_v2"], tags),
        "profile_legacy_v2": profile("legacy", *PROFILES["legacy_v2"], tags),
        "schema_object": schema(OBJECT_SCHEMA, tags).hex(),
        "catalog_golden": catalog(GOLDEN, tags),
        "catalog_extensions": catalog({**GOLDEN, "extensions": EXTENSIONS}, tags),
        "collision": model_names("srv", COLLIDING, tags),
        "truncation": model_names("srv", [LONG_NAME], tags)[LONG_NAME],
    }


if __name__ == "__main__":
    for key, value in vectors().items():
        print(key, value)
