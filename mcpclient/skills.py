"""Skills served over MCP (the Skills extension, SEP-2640): listing entries and loaded skills.

A host that opts in (``Definition(extensions={SKILLS_EXTENSION: {}})``) and
connects to a server that declares the extension lists skills with
:meth:`Client.skills` (nothing of any skill is read) and loads one with
:meth:`Client.load_skill`: its ``SKILL.md`` is read and verified against the
listing (byte size, then sha256 digest, then the YAML frontmatter field by
field) before anything else; a mismatch raises
:class:`~mcpclient.SkillError` and nothing further is read. A loaded
:class:`Skill` reads only the files its entry lists, each verified the same
way, each at most once.

Example:
    >>> for entry in client.skills():                      # doctest: +SKIP
    ...     print(entry.name, entry.description)
    >>> skill = client.load_skill("pdf-processing")        # doctest: +SKIP
    >>> forms = skill.read("references/FORMS.md").decode()  # doctest: +SKIP
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import attrs

from mcpclient._core import checks
from mcpclient.errors import FailureClass, ProtocolError, SkillError

__all__ = ["Skill", "SkillEntry", "SkillFile"]

#: The most files one skill may list, ``SKILL.md`` included (the extension's limit).
MAX_SKILL_FILES = 512
#: The most bytes one skill's files may add up to (the extension's limit, 16 MiB).
MAX_SKILL_BYTES = 16 * 1024 * 1024
_SKILL_MD = "/SKILL.md"


def _check_digest(inst: Any, attr: Any, value: Any) -> None:
    checks.is_str(inst, attr, value)
    hexpart = value[7:]
    if (
        not value.startswith("sha256:")
        or len(hexpart) != 64
        or not all(c in "0123456789abcdef" for c in hexpart)
    ):
        raise checks.fail(inst, attr.name, "must be 'sha256:' and 64 lowercase hex digits")


@attrs.frozen
class SkillFile:
    """One file of a skill as its listing entry names it.

    Attributes:
        uri: the file's resource URI (an opaque identifier, never a path).
        digest: ``"sha256:"`` and 64 lowercase hex digits, over its raw bytes.
        size: its length in bytes.
    """

    uri: str = attrs.field(validator=checks.is_str)
    digest: str = attrs.field(validator=_check_digest)
    size: int = attrs.field(validator=checks.non_negative_int)


def _root_of(uri: str) -> str:
    return uri[: -len(_SKILL_MD)] if uri.endswith(_SKILL_MD) else uri


def _inside_the_skill(inst: Any, attr: Any, value: tuple[SkillFile, ...]) -> None:
    # Every listed file is the SKILL.md itself or a plain relative path under the
    # skill's root, so Skill.files never hands out "../../etc/passwd", an absolute
    # path or another URI: the same rule read() applies to the paths it is given.
    root = _root_of(inst.uri) + "/"
    for index, listed in enumerate(value):
        if listed.uri == inst.uri:
            continue
        if not listed.uri.startswith(root):
            raise checks.fail(inst, f"files[{index}]", "is not inside the skill's directory")
        problem = checks.relative_path_problem(listed.uri[len(root) :])
        if problem is not None:
            raise checks.fail(inst, f"files[{index}]", f"path {problem}")


@attrs.frozen(kw_only=True)
class SkillEntry:
    """One skill of a server's listing: what loading it will verify against.

    A skill is the pair (``binding``, ``uri``): names are labels, not unique
    across servers (nor always within one listing).

    Attributes:
        binding: the binding that served it (its origin).
        uri: the URI of its ``SKILL.md``.
        frontmatter: the listed ``SKILL.md`` frontmatter (a fresh copy).
        files: every file of the skill, ``SKILL.md`` included; empty when
            ``dynamic``. Each is the ``SKILL.md`` or lies under :attr:`root`
            at a plain relative path (no ``..``, ``.`` or empty segment, no
            leading ``/``, drive, backslash, percent-encoded ``.``/``/``/``\\``
            or control character); an entry listing any other file is refused
            (``ConfigError``; a server's listing leaves it out, logged).
        dynamic: its files are generated and carry no integrity data; such a
            skill cannot be verified and is not loaded.

    Thread safety: immutable.
    """

    binding: str = attrs.field(validator=checks.is_str)
    uri: str = attrs.field(validator=checks.is_str)
    _frontmatter: Any = checks.json_field(optional=False, alias="frontmatter")
    files: tuple[SkillFile, ...] = attrs.field(
        default=(),
        converter=checks.to_tuple,
        validator=[checks.tuple_of(SkillFile), _inside_the_skill],
    )
    dynamic: bool = attrs.field(default=False, validator=checks.is_bool)

    @property
    def frontmatter(self) -> dict[str, Any]:
        """The listed frontmatter (a fresh copy)."""
        value: dict[str, Any] = checks.decode_json(self._frontmatter)
        return value

    @property
    def name(self) -> str:
        """The frontmatter's ``name`` ("" when it is not a string)."""
        name = self.frontmatter.get("name")
        return name if isinstance(name, str) else ""

    @property
    def description(self) -> str:
        """The frontmatter's ``description`` ("" when it is not a string)."""
        text = self.frontmatter.get("description")
        return text if isinstance(text, str) else ""

    @property
    def root(self) -> str:
        """The skill's directory: ``uri`` without its ``/SKILL.md``."""
        return _root_of(self.uri)

    @property
    def total_size(self) -> int:
        """The bytes its listed files add up to."""
        return sum(f.size for f in self.files)

    def file(self, path: str) -> SkillFile | None:
        """The listed file at ``path`` (relative to :attr:`root`, or a full URI), or ``None``."""
        uri = self.resolve(path)
        return next((f for f in self.files if f.uri == uri), None)

    def resolve(self, path: str) -> str:
        """The URI ``path`` names: a full URI as is, else relative to :attr:`root`.

        Raises:
            SkillError: the path is not a plain relative path (it climbs out of
                the skill with ``..``, is absolute, names a drive, holds a
                backslash...: the rule every listed file obeys).
        """
        if "://" in path:
            return path  # only a listed file's URI is ever read (see file())
        problem = checks.relative_path_problem(path)
        if problem is not None:
            raise SkillError(
                f"skill file path {path[:200]!r} is not a plain relative path: it {problem}",
                binding=self.binding,
                op="read_skill_file",
            )
        return f"{self.root}/{path}"


class Skill:
    """A loaded, verified skill: its ``SKILL.md`` and a reader of its listed files.

    Created by :meth:`Client.load_skill`. ``text`` is the verified
    ``SKILL.md``; ``frontmatter`` equals the listing's; ``body`` is the text
    after the frontmatter. :meth:`read` fetches a listed file on first use,
    verifies it and keeps it.

    Thread safety: any thread; reads of different files may run at once.
    """

    def __init__(
        self,
        entry: SkillEntry,
        text: str,
        body: str,
        fetch: Callable[[SkillFile, float | None], bytes],
        list_directory: Callable[[str, float | None], list[tuple[str, bool]]] | None = None,
    ) -> None:
        """Wrap a verified ``SKILL.md``; ``fetch`` reads and verifies one listed file.

        ``list_directory`` (None: the server offers no directory reads) gives
        a directory URI's children as ``(uri, is_directory)``.
        """
        self.entry = entry
        self.text = text
        self.body = body
        self._fetch = fetch
        self._list_directory = list_directory
        self._lock = threading.Lock()  # guards _cache
        skill_md = entry.file(entry.uri)
        self._cache: dict[str, bytes] = {}
        if skill_md is not None:
            self._cache[skill_md.uri] = text.encode("utf-8")

    @property
    def name(self) -> str:
        """The skill's name (its frontmatter's ``name``)."""
        return self.entry.name

    @property
    def frontmatter(self) -> dict[str, Any]:
        """The verified frontmatter (a fresh copy)."""
        return self.entry.frontmatter

    @property
    def files(self) -> tuple[str, ...]:
        """The listed files' paths, relative to the skill's root (``SKILL.md`` included).

        Each is a plain relative path inside the skill (:class:`SkillEntry`
        refuses an entry listing anything else), which :meth:`read` accepts;
        only the skill's own document, when its URI does not end in
        ``/SKILL.md``, is given as that URI.
        """
        root = self.entry.root + "/"
        return tuple(
            f.uri[len(root) :] if f.uri.startswith(root) else f.uri for f in self.entry.files
        )

    def read(self, path: str, *, timeout: float | None = None) -> bytes:
        """The verified bytes of the listed file ``path`` (relative to the root, or its URI).

        Raises:
            SkillError: the entry does not list it, or it failed verification
                (size, then digest); it is not kept and not returned.
            Error: the read itself failed (as ``Client.read_resource``).
        """
        uri = self.entry.resolve(path)
        with self._lock:
            cached = self._cache.get(uri)
        if cached is not None:
            return cached
        listed = self.entry.file(uri)
        if listed is None:
            raise SkillError(
                f"skill {self.entry.name!r} does not list the file {path[:200]!r}",
                binding=self.entry.binding,
                op="read_skill_file",
            )
        data = self._fetch(listed, timeout)
        with self._lock:
            return self._cache.setdefault(uri, data)

    def directory(self, path: str = "", *, timeout: float | None = None) -> tuple[str, ...]:
        """The children of a directory of the skill (``resources/directory/read``), sorted.

        Paths are relative to the skill's root, directories ending in ``/``.
        Only what the entry lists is shown: a file the server's directory
        holds but the listing lacks is not part of the skill (left out), and
        a directory only when it holds a listed file.

        Raises:
            ProtocolError: ``unsupported_protocol`` when the server does not
                offer directory reads (``directoryRead``).
            SkillError: the path climbs out of the skill.
        """
        uri = self.entry.root if path in ("", ".") else self.entry.resolve(path.rstrip("/"))
        if self._list_directory is None:
            raise ProtocolError(
                "the server does not offer resources/directory/read",
                failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
                binding=self.entry.binding,
                op="skill_directory",
            )
        listed = {f.uri for f in self.entry.files}
        root = self.entry.root + "/"
        shown: set[str] = set()
        for child, is_directory in self._list_directory(uri, timeout):
            if not child.startswith(root):
                continue
            if is_directory:
                if any(f.startswith(child + "/") for f in listed):
                    shown.add(child[len(root) :] + "/")
            elif child in listed:
                shown.add(child[len(root) :])
        return tuple(sorted(shown))

    def __repr__(self) -> str:
        return f"<mcpclient.Skill binding={self.entry.binding!r} uri={self.entry.uri!r}>"
