"""Identity digests: profile, schema, name and catalog, as SHA-256 over a binary framing.

Why a framing and not JSON: every string and byte string is length-prefixed and
every list is count-prefixed, so no two different inputs can produce the same
byte stream (no delimiter or escaping ambiguity), and the digest does not depend
on any JSON encoder's choices. Each digest starts with a domain tag and an
encoding version so digests of different kinds (or of a future encoding) can
never be confused. The layout follows origin-client.md sections 7.8-7.9 with
this project's own domain tags (DESIGN.md section 7, "Identity"); the resulting
hex values are pinned by tests/unit/test_identity_vectors.py.

Excluded from the catalog digest by design: generation ordinal, warnings,
decisions, tolerance policy, filter. Included: the binding name (one server
under two bindings has two identities), model names (a normalization change
moves the digest) and the server's declared extensions, canonical JSON, when it
declares any (a server that starts offering tasks or skills is a different
catalog). Strings are digested as given, i.e. after protocol-layer
truncation.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from mcpclient._core.canonical import jcs

__all__ = [
    "CATALOG_DOMAIN",
    "DEFINITION_DOMAIN",
    "EMPTY_DIGEST",
    "ENCODING_VERSION",
    "NAME_DOMAIN",
    "PROFILE_DOMAIN",
    "SCHEMA_DOMAIN",
    "AnnotationsFields",
    "CapabilitiesFields",
    "CatalogFields",
    "PromptArgumentFields",
    "PromptFields",
    "ResourceFields",
    "ResourceTemplateFields",
    "ServerFields",
    "ToolFields",
    "catalog_digest",
    "definition_digest",
    "name_digest",
    "profile_digest",
    "schema_digest",
]

PROFILE_DOMAIN = "mcpclient.compat.profile"
SCHEMA_DOMAIN = "mcpclient.catalog.schema"
NAME_DOMAIN = "mcpclient.catalog.name"
CATALOG_DOMAIN = "mcpclient.catalog"
DEFINITION_DOMAIN = "mcpclient.definition"
#: Encoding version of every digest above; bump it when a layout changes.
ENCODING_VERSION = 1

#: The schema digest of "no schema" (a tool without an output schema).
EMPTY_DIGEST = bytes(32)

_U64_LIMIT = 1 << 64
#: Tool frame pieces hashed per update (a few dozen tools: a few KiB).
_BATCH_PARTS = 512


class _Framer:
    """Feeds length-prefixed primitives into one SHA-256 stream.

    Every frame starts with ``str(domain) u64(version)``.
    """

    __slots__ = ("_hash",)

    def __init__(self, domain: str, version: int = ENCODING_VERSION) -> None:
        self._hash = hashlib.sha256()
        self.string(domain)
        self.u64(version)

    def u64(self, number: int) -> None:
        """Write ``number`` as 8 bytes big-endian.

        Raises:
            ValueError: If ``number`` is outside ``[0, 2**64)``.
        """
        if not 0 <= number < _U64_LIMIT:
            raise ValueError(f"{number} does not fit an unsigned 64-bit integer")
        self._hash.update(number.to_bytes(8, "big"))

    def blob(self, data: bytes) -> None:
        """Write ``u64(len(data))`` then ``data``."""
        self.u64(len(data))
        self._hash.update(data)

    def string(self, text: str) -> None:
        """Write ``text`` as length-prefixed UTF-8.

        A lone surrogate (possible in text decoded from JSON) is encoded as its
        three-byte form ("surrogatepass"): still injective, and digesting never
        fails on server text.
        """
        self.blob(text.encode("utf-8", "surrogatepass"))

    def field(self, tag: str) -> None:
        """Write a field tag (same as :meth:`string`)."""
        self.string(tag)

    def count(self, number: int) -> None:
        """Write a list length (same as :meth:`u64`)."""
        self.u64(number)

    def flag(self, value: bool) -> None:
        """Write one byte: 0 for false, 1 for true."""
        self._hash.update(b"\x01" if value else b"\x00")

    def tri(self, value: bool | None) -> None:
        """Write one byte: 0 for absent, 1 for false, 2 for true."""
        self._hash.update(b"\x00" if value is None else b"\x02" if value else b"\x01")

    def raw(self, data: bytes) -> None:
        """Write ``data`` as it is (bytes already framed by the caller)."""
        self._hash.update(data)

    def digest(self) -> bytes:
        """Return the 32-byte SHA-256 digest of everything written."""
        return self._hash.digest()

    def hexdigest(self) -> str:
        """Return the digest as 64 lowercase hex characters."""
        return self._hash.hexdigest()


# --- Shapes the catalog digest reads (the public value classes satisfy these). ---


class CapabilitiesFields(Protocol):
    """Server capabilities that are part of a catalog's identity."""

    @property
    def tools(self) -> bool: ...
    @property
    def prompts(self) -> bool: ...
    @property
    def resources(self) -> bool: ...
    @property
    def resources_subscribe(self) -> bool: ...
    @property
    def logging(self) -> bool: ...
    @property
    def completions(self) -> bool: ...
    @property
    def extensions(self) -> Mapping[str, Any]: ...


class ServerFields(Protocol):
    """The server's self-description."""

    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def title(self) -> str: ...


class AnnotationsFields(Protocol):
    """Tool annotations (hints only, never trusted)."""

    @property
    def title(self) -> str: ...
    @property
    def read_only_hint(self) -> bool: ...
    @property
    def idempotent_hint(self) -> bool: ...
    @property
    def destructive_hint(self) -> bool | None: ...
    @property
    def open_world_hint(self) -> bool | None: ...


class ToolFields(Protocol):
    """A tool as the catalog holds it."""

    @property
    def raw_name(self) -> str: ...
    @property
    def model_name(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def input_schema_digest(self) -> str: ...
    @property
    def output_schema_digest(self) -> str: ...
    @property
    def annotations(self) -> AnnotationsFields | None: ...


class PromptArgumentFields(Protocol):
    """One prompt argument."""

    @property
    def name(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def required(self) -> bool: ...


class PromptFields(Protocol):
    """A prompt; its arguments keep server order (order is content)."""

    @property
    def name(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def arguments(self) -> Sequence[PromptArgumentFields]: ...


class ResourceFields(Protocol):
    """A concrete resource."""

    @property
    def uri(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def mime_type(self) -> str: ...


class ResourceTemplateFields(Protocol):
    """A resource template."""

    @property
    def uri_template(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def mime_type(self) -> str: ...


class CatalogFields(Protocol):
    """Everything of a catalog generation that its digest covers."""

    @property
    def binding(self) -> str: ...
    @property
    def protocol_version(self) -> str: ...
    @property
    def capabilities(self) -> CapabilitiesFields: ...
    @property
    def server(self) -> ServerFields: ...
    @property
    def instructions(self) -> str: ...
    @property
    def tools(self) -> Sequence[ToolFields]: ...
    @property
    def prompts(self) -> Sequence[PromptFields]: ...
    @property
    def resources(self) -> Sequence[ResourceFields]: ...
    @property
    def resource_templates(self) -> Sequence[ResourceTemplateFields]: ...


# --- Digests. ---


def profile_digest(name: str, version: int, tolerances: Iterable[tuple[int, str]]) -> str:
    """Return the hex digest identifying a compatibility profile.

    Layout: ``str(domain) u64(1) str(name) u64(max(version, 0)) count(k)`` then
    ``str(identifier)`` per distinct tolerance, sorted by numeric value.

    Args:
        name: The profile name.
        version: The profile version (non-positive counts as 0).
        tolerances: ``(numeric enum value, identifier)`` pairs; duplicates are
            removed.

    Returns:
        64 lowercase hex characters.

    Raises:
        ValueError: If one numeric value comes with two identifiers.
    """
    by_value: dict[int, str] = {}
    for value, identifier in tolerances:
        if by_value.setdefault(value, identifier) != identifier:
            raise ValueError(f"tolerance {value} named both {by_value[value]!r} and {identifier!r}")
    framer = _Framer(PROFILE_DOMAIN)
    framer.string(name)
    framer.u64(max(version, 0))
    framer.count(len(by_value))
    for value in sorted(by_value):
        framer.string(by_value[value])
    return framer.hexdigest()


def schema_digest(schema: object) -> bytes:
    """Return the 32-byte digest of a JSON schema over its JCS bytes.

    Layout: ``str(domain) u64(1) bytes(jcs(schema))``. Key order and whitespace
    of the server's text therefore do not matter.

    Args:
        schema: The decoded JSON schema.

    Returns:
        32 raw bytes (render with ``.hex()``).

    Raises:
        ValueError: If ``schema`` has no canonical form (see :func:`jcs`).
    """
    framer = _Framer(SCHEMA_DOMAIN)
    framer.blob(jcs(schema))
    return framer.digest()


def name_digest(binding: str, raw_name: str) -> bytes:
    """Return the 32-byte digest behind a model name's suffix.

    Layout: ``str(domain) u64(1) str(binding) str(raw_name)``.

    Args:
        binding: The binding name.
        raw_name: The tool's raw (server) name.

    Returns:
        32 raw bytes; model names use the first 4 as 8 hex characters.
    """
    framer = _Framer(NAME_DOMAIN)
    framer.string(binding)
    framer.string(raw_name)
    return framer.digest()


def catalog_digest(catalog: CatalogFields) -> str:
    """Return the hex digest identifying a catalog generation.

    Items are digested in the order given; the catalog builder sorts them
    (tools by raw name, prompts by name, resources by URI, templates by URI
    template) before calling.

    Args:
        catalog: The catalog's identity-bearing fields.

    Returns:
        64 lowercase hex characters.

    Raises:
        ValueError: If a tool's schema digest is not 64 hex characters (or
            ``""`` for a missing output schema).
    """
    framer = _Framer(CATALOG_DOMAIN)
    framer.field("binding")
    framer.string(catalog.binding)
    framer.field("protocol_version")
    framer.string(catalog.protocol_version)

    caps = catalog.capabilities
    framer.field("capabilities")
    for capability in (
        caps.tools,
        caps.prompts,
        caps.resources,
        caps.resources_subscribe,
        caps.logging,
        caps.completions,
    ):
        framer.flag(capability)
    extensions = caps.extensions
    if extensions:
        # Only when declared: a catalog without extensions keeps the digest it
        # always had (the field tag keeps the framing unambiguous either way).
        framer.field("extensions")
        framer.blob(jcs(extensions))

    server = catalog.server
    framer.field("server")
    framer.string(server.name)
    framer.string(server.version)
    framer.string(server.title)

    framer.field("instructions")
    framer.string(catalog.instructions)

    framer.field("tools")
    framer.count(len(catalog.tools))
    # One update per batch of tools (not per field); a schema many tools share
    # is decoded once. Batches stay small: one joined buffer of a whole large
    # catalog would be a transient allocation the size of the catalog, which
    # a thread's malloc arena keeps resident after it is freed (a Host starts
    # its bindings on threads of its own).
    schemas: dict[str, bytes] = {}
    parts: list[bytes] = []
    for tool in catalog.tools:
        _tool(parts, tool, schemas)
        if len(parts) >= _BATCH_PARTS:
            framer.raw(b"".join(parts))
            parts.clear()
    framer.raw(b"".join(parts))

    framer.field("prompts")
    framer.count(len(catalog.prompts))
    for prompt in catalog.prompts:
        framer.string(prompt.name)
        framer.string(prompt.title)
        framer.string(prompt.description)
        framer.field("arguments")
        framer.count(len(prompt.arguments))
        for argument in prompt.arguments:
            framer.string(argument.name)
            framer.string(argument.title)
            framer.string(argument.description)
            framer.flag(argument.required)

    framer.field("resources")
    framer.count(len(catalog.resources))
    for resource in catalog.resources:
        framer.string(resource.uri)
        framer.string(resource.name)
        framer.string(resource.title)
        framer.string(resource.description)
        framer.string(resource.mime_type)

    framer.field("resource_templates")
    framer.count(len(catalog.resource_templates))
    for template in catalog.resource_templates:
        framer.string(template.uri_template)
        framer.string(template.name)
        framer.string(template.title)
        framer.string(template.description)
        framer.string(template.mime_type)

    framer.field("end")
    return framer.hexdigest()


def _tool(out: list[bytes], tool: ToolFields, schemas: dict[str, bytes]) -> None:
    """Write one tool's frame, annotations included.

    Appends to ``out`` the same bytes :class:`_Framer`'s primitives would
    write: a catalog holds thousands of tools, hashed in one update.
    """
    raw = tool.raw_name.encode("utf-8", "surrogatepass")
    model = tool.model_name.encode("utf-8", "surrogatepass")
    title = tool.title.encode("utf-8", "surrogatepass")
    description = tool.description.encode("utf-8", "surrogatepass")
    hex_in = tool.input_schema_digest
    raw_in = schemas.get(hex_in)
    if raw_in is None:
        raw_in = schemas[hex_in] = _digest_bytes(hex_in, what="input")
    hex_out = tool.output_schema_digest
    has_output = hex_out != ""
    out += (
        _U64(len(raw)),
        raw,
        _U64(len(model)),
        model,
        _U64(len(title)),
        title,
        _U64(len(description)),
        description,
        _LEN_32,
        raw_in,
        b"\x01" if has_output else b"\x00",
        _LEN_32,
        _digest_bytes(hex_out, what="output") if has_output else EMPTY_DIGEST,
        _ANNOTATIONS_TAG,
    )
    annotations = tool.annotations
    if annotations is None:
        out.append(b"\x00")
    else:
        hint_title = annotations.title.encode("utf-8", "surrogatepass")
        out += (
            b"\x01",
            _U64(len(hint_title)),
            hint_title,
            b"\x01" if annotations.read_only_hint else b"\x00",
            b"\x01" if annotations.idempotent_hint else b"\x00",
            _tri(annotations.destructive_hint),
            _tri(annotations.open_world_hint),
        )


def _tri(value: bool | None) -> bytes:
    return b"\x00" if value is None else b"\x02" if value else b"\x01"


_U64 = struct.Struct(">Q").pack
_LEN_32 = _U64(32)
_ANNOTATIONS_TAG = _U64(len(b"annotations")) + b"annotations"


def _digest_bytes(hex_digest: str, *, what: str) -> bytes:
    """Decode a 64-character lowercase hex schema digest to its 32 bytes."""
    if len(hex_digest) != 64 or hex_digest.lower() != hex_digest:
        raise ValueError(f"{what} schema digest is not 64 lowercase hex characters")
    try:
        return bytes.fromhex(hex_digest)
    except ValueError:
        raise ValueError(f"{what} schema digest is not 64 lowercase hex characters") from None


def definition_digest(
    binding: str,
    transport: str,
    target: Sequence[str],
    *,
    cwd: str = "",
    secrets: Mapping[str, str] | None = None,
) -> str:
    """The identity of a server definition: which server it is, never what it holds secret.

    ``transport`` is its kind (``"stdio"``, ``"http"``, ``"sse"``), ``target``
    the command and its arguments or the URL, ``cwd`` the working directory,
    ``secrets`` the environment variables or headers by name: each value is
    hashed on its own first, so the framing carries names and value digests
    only (a changed token is another identity, but no token is recoverable
    from the digest's input). Used to key the host's stored catalogs.
    """
    frame = _Framer(DEFINITION_DOMAIN)
    frame.field("binding")
    frame.string(binding)
    frame.field("transport")
    frame.string(transport)
    frame.field("target")
    frame.count(len(target))
    for part in target:
        frame.string(part)
    frame.field("cwd")
    frame.string(cwd)
    frame.field("secrets")
    pairs = sorted((secrets or {}).items())
    frame.count(len(pairs))
    for name, value in pairs:
        frame.string(name)
        frame.blob(hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest())
    return frame.hexdigest()
