"""A bounded reader of the YAML subset that skill frontmatter uses, and a JSON-model comparison.

A ``SKILL.md`` opens with a YAML frontmatter block (``---`` ... ``---``);
the Skills extension (SEP-2640) has the client compare it, field by field,
with the ``frontmatter`` object the server listed. We read it ourselves
rather than depend on PyYAML: PyYAML's safe loader speaks YAML 1.1 (``yes``,
``on`` become booleans, dates become ``datetime``), which would make
honest skills mismatch the JSON a YAML 1.2 parser produced, and it is
not a dependency of this library.

What is read: block mappings and block sequences (nested by indentation),
flow sequences and mappings (``[a, b]``, ``{k: v}``), plain scalars
(also continued on more-indented lines), single- and double-quoted
scalars, literal and folded block scalars (``|``, ``>``, with ``-``/``+``
chomping), comments; scalars resolve by the YAML 1.2 core schema (null,
booleans, integers, floats, else strings). Anything else (anchors,
aliases, tags, complex keys, directives, several documents, duplicate
keys, tabs for indentation) is refused with :class:`FrontmatterError`, as
is input past the bounds: a frontmatter we cannot read exactly is never
guessed at.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["MAX_FRONTMATTER_BYTES", "FrontmatterError", "json_equal", "parse", "split"]

#: The largest frontmatter block read.
MAX_FRONTMATTER_BYTES = 256 * 1024
_MAX_DEPTH = 32
_MAX_NODES = 10_000

_INT = re.compile(r"[-+]?[0-9]+")
_OCT = re.compile(r"0o[0-7]+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_INF = re.compile(r"[-+]?\.(inf|Inf|INF)")
_NAN = re.compile(r"\.(nan|NaN|NAN)")
_BLOCK_HEADER = re.compile(r"([|>])([-+]?)([1-9]?)([-+]?)\s*(#.*)?")
_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


class FrontmatterError(ValueError):
    """The frontmatter is missing, malformed, or outside the subset this reader takes."""


def split(text: str) -> tuple[str, str]:
    """``(frontmatter, body)`` of a ``SKILL.md``'s text.

    An optional BOM is skipped; the first line must be ``---`` and the block
    ends at the next line that is exactly ``---`` (trailing spaces and CR
    tolerated).

    Raises:
        FrontmatterError: no frontmatter block, or one over the bound.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if not lines or lines[0].rstrip(" \t\r") != "---":
        raise FrontmatterError("SKILL.md does not open with a '---' frontmatter line")
    size = 0
    for index in range(1, len(lines)):
        if lines[index].rstrip(" \t\r") == "---":
            block = "\n".join(line.rstrip("\r") for line in lines[1:index])
            return block, "\n".join(lines[index + 1 :])
        size += len(lines[index]) + 1
        if size > MAX_FRONTMATTER_BYTES:
            break
    raise FrontmatterError(
        f"SKILL.md has no closing '---' line within {MAX_FRONTMATTER_BYTES} bytes"
    )


def parse(block: str) -> dict[str, Any]:
    """The frontmatter ``block`` as a JSON-model mapping.

    Raises:
        FrontmatterError: it is not a mapping, or uses YAML outside the subset.
    """
    if len(block.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES:
        raise FrontmatterError(f"the frontmatter is over {MAX_FRONTMATTER_BYTES} bytes")
    reader = _Reader(block)
    value = reader.document()
    if not isinstance(value, dict):
        raise FrontmatterError("the frontmatter is not a mapping")
    return value


def json_equal(a: Any, b: Any) -> bool:
    """Deep equality in the JSON data model: a bool is no number; 1 equals 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return False


def resolve(text: str) -> Any:
    """A plain scalar by the YAML 1.2 core schema."""
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if _INT.fullmatch(text):
        return int(text)
    if _OCT.fullmatch(text):
        return int(text[2:], 8)
    if _HEX.fullmatch(text):
        return int(text[2:], 16)
    if _FLOAT.fullmatch(text):
        return float(text)
    if _INF.fullmatch(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NAN.fullmatch(text):
        return math.nan
    return text


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_blank(line: str) -> bool:
    stripped = line.strip(" ")
    return not stripped or stripped.startswith("#")


def _strip_comment(text: str) -> str:
    """A plain scalar's text without a trailing ``  # comment``."""
    for index, char in enumerate(text):
        if char == "#" and (index == 0 or text[index - 1] in " \t"):
            return text[:index].rstrip()
    return text.rstrip()


def _split_key(content: str) -> tuple[str, str] | None:
    """``(key, rest)`` of a ``key: value`` line (key unquoted), or None."""
    if content[:1] in ("'", '"'):
        quote = content[0]
        end = _quoted_end(content, 0)
        if end is None:
            return None
        after = content[end + 1 :]
        if after.startswith(":") and (len(after) == 1 or after[1] in " \t"):
            return _unquote(content[: end + 1], quote), after[1:].strip()
        return None
    for index, char in enumerate(content):
        if char == ":" and (index + 1 == len(content) or content[index + 1] in " \t"):
            key = content[:index].rstrip()
            if not key or key.startswith(("[", "{", "#")):
                return None
            return key, content[index + 1 :].strip()
        if char == "#" and index > 0 and content[index - 1] in " \t":
            return None
    return None


def _quoted_end(text: str, start: int) -> int | None:
    """The index of the quote closing the one at ``start``, or None."""
    quote = text[start]
    index = start + 1
    while index < len(text):
        char = text[index]
        if quote == "'" and char == "'":
            if index + 1 < len(text) and text[index + 1] == "'":
                index += 2
                continue
            return index
        if quote == '"':
            if char == "\\":
                index += 2
                continue
            if char == '"':
                return index
        index += 1
    return None


def _fold(text: str) -> str:
    """Line folding of a multi-line flow scalar: a line break is a space, blank lines are LFs."""
    lines = text.split("\n")
    out = lines[0].rstrip(" \t")
    empties = 0
    for raw in lines[1:]:
        line = raw.strip(" \t")
        if not line:
            empties += 1
            continue
        out += ("\n" * empties if empties else " ") + line
        empties = 0
    return out + "\n" * empties


def _unquote(token: str, quote: str) -> str:
    inner = _fold(token[1:-1]) if "\n" in token else token[1:-1]
    if quote == "'":
        return inner.replace("''", "'")
    out: list[str] = []
    index = 0
    while index < len(inner):
        char = inner[index]
        if char != "\\":
            out.append(char)
            index += 1
            continue
        code = inner[index + 1 : index + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            index += 2
        elif code in _HEX_ESCAPES:
            digits = inner[index + 2 : index + 2 + _HEX_ESCAPES[code]]
            if len(digits) != _HEX_ESCAPES[code] or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                raise FrontmatterError("a double-quoted scalar has a bad escape")
            out.append(chr(int(digits, 16)))
            index += 2 + len(digits)
        else:
            raise FrontmatterError("a double-quoted scalar has an unknown escape")
    return "".join(out)


class _Reader:
    """One pass over the block's lines, by indentation."""

    def __init__(self, block: str) -> None:
        if "\t" in "".join(line[: _indent(line) + 1] for line in block.split("\n")):
            raise FrontmatterError("the frontmatter indents with a tab")
        self.lines = block.split("\n")
        self.pos = 0
        self.nodes = 0

    def _count(self) -> None:
        self.nodes += 1
        if self.nodes > _MAX_NODES:
            raise FrontmatterError(f"the frontmatter has more than {_MAX_NODES} values")

    def _skip_blank(self) -> None:
        while self.pos < len(self.lines) and _is_blank(self.lines[self.pos]):
            self.pos += 1

    def document(self) -> Any:
        self._skip_blank()
        if self.pos >= len(self.lines):
            raise FrontmatterError("the frontmatter is empty")
        first = self.lines[self.pos].lstrip(" ")
        if first.startswith(("%", "---", "...")):
            raise FrontmatterError("the frontmatter holds a directive or another document")
        value = self.block(_indent(self.lines[self.pos]), 0)
        self._skip_blank()
        if self.pos < len(self.lines):
            raise FrontmatterError(f"unexpected text on frontmatter line {self.pos + 1}")
        return value

    def block(self, indent: int, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise FrontmatterError("the frontmatter nests too deeply")
        content = self.lines[self.pos][indent:]
        if content == "-" or content.startswith("- "):
            return self.sequence(indent, depth)
        return self.mapping(indent, depth)

    def mapping(self, indent: int, depth: int, first: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while True:
            if first is not None:
                content, first = first, None
            else:
                self._skip_blank()
                if self.pos >= len(self.lines):
                    return out
                line = self.lines[self.pos]
                if _indent(line) < indent:
                    return out
                if _indent(line) > indent:
                    raise FrontmatterError(f"bad indentation on frontmatter line {self.pos + 1}")
                content = line[indent:]
            if content.startswith(("? ", "&", "*", "!")) or content == "?":
                raise FrontmatterError("the frontmatter uses a complex key, anchor or tag")
            split = _split_key(content)
            if split is None:
                raise FrontmatterError(f"frontmatter line {self.pos + 1} is not 'key: value'")
            key, rest = split
            if key in out:
                raise FrontmatterError(f"the frontmatter has the key {key[:64]!r} twice")
            self.pos += 1
            self._count()
            out[key] = self.value(rest, indent, depth, in_mapping=True)

    def sequence(self, indent: int, depth: int) -> list[Any]:
        out: list[Any] = []
        while True:
            self._skip_blank()
            if self.pos >= len(self.lines):
                return out
            line = self.lines[self.pos]
            content = line[indent:]
            if _indent(line) != indent or not (content == "-" or content.startswith("- ")):
                if _indent(line) > indent:
                    raise FrontmatterError(f"bad indentation on frontmatter line {self.pos + 1}")
                return out
            rest = content[1:].lstrip(" ")
            inner = indent + len(content) - len(rest)
            self._count()
            if rest and not rest.startswith(("[", "{", "'", '"', "|", ">", "#")):
                split = _split_key(rest)
                if split is not None:
                    # "- key: value" opens a mapping whose keys sit at the item's column.
                    out.append(self.mapping(inner, depth + 1, first=rest))
                    continue
            self.pos += 1
            out.append(self.value(rest, indent, depth, in_mapping=False))

    def value(self, rest: str, indent: int, depth: int, *, in_mapping: bool) -> Any:
        """The value after ``key:`` or ``-`` (the line itself already consumed)."""
        if rest.startswith(("&", "*", "!", "%", "@", "`")):
            raise FrontmatterError("the frontmatter uses an anchor, alias, tag or reserved mark")
        if not rest or rest.startswith("#"):
            self._skip_blank()
            if self.pos >= len(self.lines):
                return None
            line = self.lines[self.pos]
            child = _indent(line)
            content = line[child:]
            is_item = content == "-" or content.startswith("- ")
            if child > indent or (in_mapping and child == indent and is_item):
                return self.block(child, depth + 1)
            return None
        if rest[0] in "|>":
            return self.block_scalar(rest, indent)
        if rest[0] in "[{":
            return self.flow(rest, indent, depth)
        if rest[0] in "'\"":
            return self.quoted(rest, indent)
        return self.plain(rest, indent)

    def _continuation(self, indent: int) -> list[str]:
        """The following lines indented past ``indent`` (blank ones kept), consumed."""
        taken: list[str] = []
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if line.strip(" ") and _indent(line) <= indent:
                break
            taken.append(line)
            self.pos += 1
        while taken and not taken[-1].strip(" "):
            taken.pop()
            self.pos -= 1
        return taken

    def plain(self, rest: str, indent: int) -> Any:
        text = _strip_comment(rest)
        more = self._continuation(indent)
        if not more:
            return resolve(text)
        for line in more:
            if line.lstrip(" ").startswith("#"):
                raise FrontmatterError("a comment interrupts a multi-line plain scalar")
            if _split_key(line.strip(" ")) is not None:
                raise FrontmatterError(f"bad indentation near frontmatter line {self.pos}")
        return _fold("\n".join([text, *(_strip_comment(line) for line in more)]))

    def quoted(self, rest: str, indent: int) -> str:
        token = rest
        while _quoted_end(token, 0) is None:
            if self.pos >= len(self.lines):
                raise FrontmatterError("a quoted scalar is not closed")
            token += "\n" + self.lines[self.pos]
            self.pos += 1
        end = _quoted_end(token, 0)
        assert end is not None
        after = token[end + 1 :].strip()
        if after and not after.startswith("#"):
            raise FrontmatterError("text follows a quoted scalar")
        return _unquote(token[: end + 1], token[0])

    def block_scalar(self, rest: str, indent: int) -> str:
        header = _BLOCK_HEADER.fullmatch(rest)
        if header is None or (header.group(2) and header.group(4)):
            raise FrontmatterError("a block scalar has a bad header")
        style, chomp = header.group(1), header.group(2) or header.group(4)
        lines = []
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if line.strip(" ") and _indent(line) <= indent:
                break
            lines.append(line)
            self.pos += 1
        trailing = 0
        while lines and not lines[-1].strip(" "):
            lines.pop()
            trailing += 1
        if header.group(3):
            width = indent + int(header.group(3))
        else:
            width = min((_indent(line) for line in lines if line.strip(" ")), default=indent + 1)
        body = [line[width:] if line.strip(" ") else "" for line in lines]
        if style == "|":
            text = "\n".join(body)
        else:
            text = ""
            for index, line in enumerate(body):
                if index == 0:
                    text = line
                elif not line or line.startswith(" ") or body[index - 1].startswith(" "):
                    text += "\n" + line
                elif not body[index - 1]:
                    text += line
                else:
                    text += " " + line
        if not body:
            return "\n" * trailing if chomp == "+" else ""
        if chomp == "-":
            return text
        if chomp == "+":
            return text + "\n" * (trailing + 1)
        return text + "\n"

    def flow(self, rest: str, indent: int, depth: int) -> Any:
        text = rest
        while True:
            try:
                parser = _Flow(text, depth)
                value = parser.value()
                tail = text[parser.pos :].strip()
                if tail and not tail.startswith("#"):
                    raise FrontmatterError("text follows a flow collection")
                self.nodes += parser.nodes
                if self.nodes > _MAX_NODES:
                    raise FrontmatterError(f"the frontmatter has more than {_MAX_NODES} values")
                return value
            except _IncompleteError:
                if self.pos >= len(self.lines) or _indent(self.lines[self.pos]) <= indent:
                    raise FrontmatterError("a flow collection is not closed") from None
                text += "\n" + self.lines[self.pos]
                self.pos += 1


class _IncompleteError(Exception):
    """The flow collection goes on past the text seen so far."""


class _Flow:
    """A flow collection (``[...]``, ``{...}``) read from one string."""

    def __init__(self, text: str, depth: int) -> None:
        self.text = text
        self.pos = 0
        self.depth = depth
        self.nodes = 0

    def _space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\n":
            self.pos += 1
        if self.pos < len(self.text) and self.text[self.pos] == "#":
            while self.pos < len(self.text) and self.text[self.pos] != "\n":
                self.pos += 1
            self._space()

    def _peek(self) -> str:
        self._space()
        if self.pos >= len(self.text):
            raise _IncompleteError
        return self.text[self.pos]

    def value(self) -> Any:
        self.nodes += 1
        char = self._peek()
        if char in "[{":
            self.depth += 1
            if self.depth > _MAX_DEPTH:
                raise FrontmatterError("the frontmatter nests too deeply")
            closing = "]" if char == "[" else "}"
            self.pos += 1
            items: list[Any] = []
            mapping: dict[str, Any] = {}
            while True:
                if self._peek() == closing:
                    self.pos += 1
                    self.depth -= 1
                    return items if char == "[" else mapping
                if char == "[":
                    items.append(self.value())
                else:
                    key = self.value()
                    if not isinstance(key, str):
                        raise FrontmatterError("a flow mapping has a key that is not a string")
                    if self._peek() != ":":
                        raise FrontmatterError("a flow mapping entry has no ':'")
                    self.pos += 1
                    if key in mapping:
                        raise FrontmatterError(f"the frontmatter has the key {key[:64]!r} twice")
                    mapping[key] = None if self._peek() in ",}" else self.value()
                separator = self._peek()
                if separator == ",":
                    self.pos += 1
                elif separator != closing:
                    raise FrontmatterError("a flow collection is missing a ','")
        if char in "'\"":
            end = _quoted_end(self.text, self.pos)
            if end is None:
                raise _IncompleteError
            token = self.text[self.pos : end + 1]
            self.pos = end + 1
            return _unquote(token, char)
        if char in "&*!%@`|>":
            raise FrontmatterError("the frontmatter uses an anchor, alias, tag or reserved mark")
        start = self.pos
        while self.pos < len(self.text):
            here = self.text[self.pos]
            if here in ",[]{}":
                break
            if here == ":" and (
                self.pos + 1 >= len(self.text) or self.text[self.pos + 1] in " \t\n,]}"
            ):
                break
            if here == "#" and self.text[self.pos - 1] in " \t\n":
                break
            self.pos += 1
        if self.pos >= len(self.text):
            raise _IncompleteError
        return resolve(_fold(self.text[start : self.pos].strip(" \t\n")))
