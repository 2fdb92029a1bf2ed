"""The test server's skills (``--skills``): the Skills extension (SEP-2640), good and tampered.

With ``--skills`` the server declares ``io.modelcontextprotocol/skills``
(``{"directoryRead": true}``) and answers ``skills/list``, ``skills/get``,
``resources/directory/read`` and ``resources/read`` of the ``skill://``
files below. Every read is in the ``--record`` file, so a test sees which
files a client fetched and when (the ``canary`` skill exists for that).

Skills (the URI of each ``SKILL.md`` is ``skill://<path>/SKILL.md``):

* ``good``: ``SKILL.md``, ``references/GUIDE.md`` (text) and
  ``assets/logo.bin`` (a blob); honest listing.
* ``acme/billing/refunds`` (name ``refunds``): honest, a nested path.
* ``canary``: honest; ``references/CANARY.md`` is the file no client may
  read before it loads the skill and reads that file.
* ``bad-size``: ``SKILL.md`` served with a line the listing's size and
  digest did not count.
* ``bad-digest``: ``SKILL.md`` served with the same length, other bytes.
* ``bad-frontmatter``: the listed ``frontmatter`` says another
  ``description``; size and digest match the served file.
* ``generated``: ``resources: "dynamic"``.

Each ``bad-*`` skill also lists ``references/FORMS.md`` (honest): a client
that reads it after its ``SKILL.md`` failed verification kept going.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from .config import INVALID_PARAMS
from .inbound import InboundRequest

__all__ = ["SKILLS_EXTENSION", "SkillStore", "skill_text"]

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
_MARKDOWN = "text/markdown"
_DIRECTORY = "inode/directory"


def skill_text(name: str, description: str, body: str) -> str:
    """A ``SKILL.md`` with frontmatter ``name`` and ``description``."""
    front = f"name: {name}\ndescription: {description}\nmetadata:\n  author: testing\n"
    return f"---\n{front}---\n\n{body}\n"


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class _Skill:
    def __init__(self, path: str, name: str, description: str) -> None:
        self.path = path
        self.name = name
        self.description = description
        self.uri = f"skill://{path}/SKILL.md"
        self.served: dict[str, bytes | str] = {}  # uri -> what resources/read returns
        self.listed: dict[str, bytes] = {}  # uri -> the bytes the listing describes
        self.frontmatter: dict[str, Any] = {
            "name": name,
            "description": description,
            "metadata": {"author": "testing"},
        }
        self.dynamic = False

    def add(self, rel: str, served: bytes | str, listed: bytes | None = None) -> None:
        uri = f"skill://{self.path}/{rel}"
        self.served[uri] = served
        self.listed[uri] = (
            listed if listed is not None else served.encode() if isinstance(served, str) else served
        )

    def entry(self) -> dict[str, Any]:
        resources: Any = (
            "dynamic"
            if self.dynamic
            else [
                {"uri": uri, "digest": _digest(data), "size": len(data)}
                for uri, data in self.listed.items()
            ]
        )
        return {"uri": self.uri, "frontmatter": self.frontmatter, "resources": resources}


def _build() -> list[_Skill]:
    skills = []
    good = _Skill("good", "good", "A skill whose listing is honest")
    good.add("SKILL.md", skill_text("good", good.description, "Read references/GUIDE.md."))
    good.add("references/GUIDE.md", "# Guide\n\nFollow the steps.\n")
    good.add("assets/logo.bin", bytes(range(256)))
    skills.append(good)
    refunds = _Skill("acme/billing/refunds", "refunds", "Refund a charge")
    refunds.add("SKILL.md", skill_text("refunds", refunds.description, "Refund it."))
    skills.append(refunds)
    canary = _Skill("canary", "canary", "Its supporting file must not be prefetched")
    canary.add("SKILL.md", skill_text("canary", canary.description, "See references/CANARY.md."))
    canary.add("references/CANARY.md", "canary\n")
    skills.append(canary)
    for name, description in (
        ("bad-size", "Served with bytes its listing did not count"),
        ("bad-digest", "Served with other bytes of the same length"),
        ("bad-frontmatter", "Listed with a frontmatter its file does not have"),
    ):
        skill = _Skill(name, name, description)
        honest = skill_text(name, description, "Skill body.")
        if name == "bad-size":
            skill.add(
                "SKILL.md", honest + "extra bytes the entry did not account for\n", honest.encode()
            )
        elif name == "bad-digest":
            skill.add("SKILL.md", honest.replace("Skill body.", "Evil body!!"), honest.encode())
        else:
            skill.add("SKILL.md", honest)
            skill.frontmatter = {**skill.frontmatter, "description": "Exfiltrate credentials"}
        skill.add("references/FORMS.md", "# Forms\n")
        skills.append(skill)
    generated = _Skill("generated", "generated", "Generated on demand")
    generated.add("SKILL.md", skill_text("generated", generated.description, "Dynamic."))
    generated.dynamic = True
    skills.append(generated)
    return skills


class SkillStore:
    """The skills of ``--skills`` and the handlers that serve them.

    Thread safety: immutable after construction.
    """

    def __init__(self, page_size: int = 0) -> None:
        """Build the fixed skills; ``page_size`` > 0 pages ``skills/list``."""
        self.skills = _build()
        self.page_size = page_size
        self.files: dict[str, bytes | str] = {}
        for skill in self.skills:
            self.files.update(skill.served)

    def capability(self) -> dict[str, Any]:
        """The extension's server settings."""
        return {"directoryRead": True}

    def list(self, request: InboundRequest) -> None:
        """``skills/list`` (paginated by ``--page-size``)."""
        entries = [s.entry() for s in self.skills]
        cursor = request.params.get("cursor")
        start = 0
        if cursor is not None:
            if not isinstance(cursor, str) or not cursor.isdigit():
                request.fail(INVALID_PARAMS, "bad cursor")
                return
            start = int(cursor)
        size = self.page_size or len(entries)
        result: dict[str, Any] = {"skills": entries[start : start + size], **_hints()}
        if start + size < len(entries):
            result["nextCursor"] = str(start + size)
        request.respond(result)

    def get(self, request: InboundRequest) -> None:
        """``skills/get``."""
        uri = request.params.get("uri")
        found = next((s for s in self.skills if s.uri == uri), None)
        if found is None:
            request.fail(INVALID_PARAMS, f"Unknown skill: {uri}")
            return
        request.respond({"skill": found.entry(), **_hints()})

    def read(self, request: InboundRequest, uri: str) -> bool:
        """Answer ``resources/read`` of a skill file; False when ``uri`` is not one."""
        served = self.files.get(uri)
        if served is None:
            return False
        if isinstance(served, bytes):
            item: dict[str, Any] = {
                "uri": uri,
                "mimeType": "application/octet-stream",
                "blob": base64.b64encode(served).decode("ascii"),
            }
        else:
            item = {"uri": uri, "mimeType": _MARKDOWN, "text": served}
        request.respond({"contents": [item]})
        return True

    def directory(self, request: InboundRequest) -> None:
        """``resources/directory/read``: the direct children of a skill directory."""
        uri = request.params.get("uri")
        if not isinstance(uri, str) or uri.endswith("/"):
            request.fail(INVALID_PARAMS, "not a directory")
            return
        prefix = uri + "/"
        children: dict[str, str] = {}
        for file in self.files:
            if file.startswith(prefix):
                rest = file[len(prefix) :]
                head, sep, _ = rest.partition("/")
                children[prefix + head] = _DIRECTORY if sep else _MARKDOWN
        if not children:
            request.fail(INVALID_PARAMS, f"Not a directory: {uri}")
            return
        resources = [
            {"uri": child, "name": child.rsplit("/", 1)[1], "mimeType": mime}
            for child, mime in sorted(children.items())
        ]
        request.respond({"resources": resources})


def _hints() -> dict[str, Any]:
    return {"ttlMs": 0, "cacheScope": "private"}
