"""Skills over MCP (SEP-2640): the listing, and loading a skill with verification first.

:meth:`SkillsPart.listing` pages through ``skills/list`` and reads nothing of
any skill (no prefetch: not on connection, not on listing). :meth:`load`
checks the entry against the extension's limits (512 files, 16 MiB) before
any read, then reads ``SKILL.md`` alone and verifies it in order (byte
size, sha256 digest, the YAML frontmatter field by field against the
listed ``frontmatter``); a failure raises :class:`SkillError` and nothing
else is read. The :class:`Skill` it returns reads only listed files, each
verified the same way.

Threads:
    None of its own: every request runs on its caller's thread.

Locks:
    ``_lock`` guards the last listing (``_listed``); never held across I/O.

Shutdown:
    Nothing to stop; a read after close is refused by the call path.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import threading
from collections.abc import Callable
from typing import Any

from mcpclient._core import frontmatter
from mcpclient._core.deadline import now
from mcpclient._core.limits import bound
from mcpclient._internal.client.calls.callpath import CallPath
from mcpclient._internal.client.state import BindingState
from mcpclient._internal.wire import skills as wire
from mcpclient.calls import CallOpts
from mcpclient.definition import SKILLS_EXTENSION
from mcpclient.errors import (
    ConfigError,
    FailureClass,
    LimitExceededError,
    ProtocolError,
    SkillError,
    ToolUnavailableError,
)
from mcpclient.skills import MAX_SKILL_BYTES, MAX_SKILL_FILES, Skill, SkillEntry, SkillFile

__all__ = ["SkillsPart"]

log = logging.getLogger(__name__)

# Room for the JSON-RPC envelope around a file's bytes (and base64's growth).
_ENVELOPE = 64 * 1024


class SkillsPart:
    """Listing and loading skills for one binding.

    Thread safety: any thread.
    """

    def __init__(self, st: BindingState, calls: CallPath) -> None:
        self._st = st
        self._calls = calls
        self._binding = st.binding
        self._lock = threading.Lock()
        self._listed: tuple[SkillEntry, ...] | None = None

    # -- listing -----------------------------------------------------------

    def _require(self, op: str, opts: CallOpts, deadline: float) -> dict[str, Any]:
        """The server's skills settings; refuses unless the extension is in use."""
        if not self._st.definition.uses_extension(SKILLS_EXTENSION):
            raise ConfigError(
                f"{op}() needs the skills extension: Definition(extensions="
                "{SKILLS_EXTENSION: {}})",
                binding=self._binding,
                op=op,
            )
        self._st.serving(op, deadline, opts.cancel)
        with self._st.lock:
            protocol = self._st.protocol
        settings = protocol.capabilities.extension(SKILLS_EXTENSION) if protocol else None
        if protocol is None or not protocol.uses(SKILLS_EXTENSION) or settings is None:
            raise ProtocolError(
                "the server does not declare the skills extension",
                failure_class=FailureClass.UNSUPPORTED_PROTOCOL,
                binding=self._binding,
                op=op,
            )
        return settings

    def listing(self, opts: CallOpts, deadline: float) -> tuple[SkillEntry, ...]:
        """Every skill the server lists, in its order (invalid entries left out, logged).

        Raises:
            ConfigError: the host did not opt in to the extension.
            ProtocolError: the server does not declare it (``unsupported_protocol``),
                or answered malformed.
            LimitExceededError: more pages or entries than the limits allow.
        """
        self._require("skills", opts, deadline)
        limits = self._st.definition.limits
        entries: list[SkillEntry] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(limits.max_catalog_pages):
            params = {} if cursor is None else {"cursor": cursor}
            page = self._calls.call(
                "skills/list", params, opts, wire.list_page, op="skills", deadline=deadline
            )
            if isinstance(page, str):
                raise ProtocolError(page, binding=self._binding, op="skills")
            raw_entries, cursor = page
            for index, raw in enumerate(raw_entries):
                entry = self._entry(raw)
                if isinstance(entry, str):
                    log.warning(
                        "%s: skills/list entry %d left out: %s", self._binding, index, entry
                    )
                    continue
                entries.append(entry)
                if len(entries) > limits.max_catalog_items:
                    raise LimitExceededError(
                        f"the server lists more than {limits.max_catalog_items} skills",
                        failure_class=FailureClass.CATALOG_OVER_LIMIT,
                        binding=self._binding,
                        op="skills",
                    )
            if cursor is None:
                break
            if cursor in seen:
                raise ProtocolError(
                    "skills/list repeated a cursor", binding=self._binding, op="skills"
                )
            seen.add(cursor)
        else:
            raise LimitExceededError(
                f"skills/list took more than {limits.max_catalog_pages} pages",
                failure_class=FailureClass.CATALOG_OVER_LIMIT,
                binding=self._binding,
                op="skills",
            )
        listed = tuple(entries)
        with self._lock:
            self._listed = listed
        return listed

    def _entry(self, raw: Any) -> SkillEntry | str:
        read = wire.read_entry(raw)
        if isinstance(read, str):
            return read
        try:
            return SkillEntry(
                binding=self._binding,
                uri=read.uri,
                frontmatter=read.frontmatter,
                files=tuple(SkillFile(u, d, s) for u, d, s in read.files or ()),
                dynamic=read.files is None,
            )
        except ConfigError as exc:  # e.g. a frontmatter that is not JSON (NaN)
            return exc.message

    # -- loading -----------------------------------------------------------

    def entry_for(self, which: str | SkillEntry, opts: CallOpts, deadline: float) -> SkillEntry:
        """The entry ``which`` names: an entry, a ``SKILL.md`` URI, or a listed name."""
        if isinstance(which, SkillEntry):
            if which.binding != self._binding:
                raise ConfigError(
                    f"the skill entry belongs to binding {which.binding!r}",
                    binding=self._binding,
                    op="load_skill",
                )
            return which
        if not isinstance(which, str) or not which:
            raise ConfigError(
                "load_skill() needs a skill name, URI or SkillEntry",
                binding=self._binding,
                op="load_skill",
            )
        with self._lock:
            listed = self._listed
        if listed is None:
            listed = self.listing(opts, deadline)
        by_uri = [e for e in listed if e.uri == which]
        if by_uri:
            return by_uri[0]
        if "://" in which:
            return self._get(which, opts, deadline)
        named = [e for e in listed if e.name == which]
        if len(named) > 1:
            raise ConfigError(
                f"{len(named)} listed skills are named {which[:64]!r}; load one by its URI or"
                " entry",
                binding=self._binding,
                op="load_skill",
            )
        if not named:
            raise ToolUnavailableError(
                f"the server lists no skill named {which[:64]!r}",
                failure_class=FailureClass.NOT_FOUND,
                binding=self._binding,
                op="load_skill",
            )
        return named[0]

    def _get(self, uri: str, opts: CallOpts, deadline: float) -> SkillEntry:
        """The entry ``skills/get`` confirms for a ``SKILL.md`` URI reached outside the listing."""
        self._require("load_skill", opts, deadline)
        raw = self._calls.call(
            "skills/get",
            wire.get_params(uri),
            opts,
            wire.skill_of_get,
            op="load_skill",
            deadline=deadline,
        )
        entry = self._entry(raw)
        if isinstance(entry, str):
            raise SkillError(
                f"skills/get gave no loadable entry for the skill: {entry}",
                binding=self._binding,
                op="load_skill",
            )
        if entry.uri != uri:
            raise SkillError(
                "skills/get answered for another skill", binding=self._binding, op="load_skill"
            )
        return entry

    def load(self, which: str | SkillEntry, opts: CallOpts, deadline: float) -> Skill:
        """Load and verify a skill.

        Raises:
            SkillError: over the limits, dynamic, no ``SKILL.md`` listed, or
                ``SKILL.md`` failed verification (size, digest, frontmatter).
            ConfigError, ToolUnavailableError: as :meth:`entry_for`.
        """
        self._require("load_skill", opts, deadline)
        entry = self.entry_for(which, opts, deadline)
        self._check_limits(entry)
        skill_md = entry.file(entry.uri)
        if skill_md is None:
            raise self._refused(entry, "its entry does not list its own SKILL.md")
        raw = self._fetch_verified(skill_md, entry, opts, deadline)
        try:
            text = raw.decode("utf-8")
            block, body = frontmatter.split(text)
            found = frontmatter.parse(block)
        except UnicodeDecodeError:
            raise self._refused(entry, "its SKILL.md is not UTF-8 text") from None
        except frontmatter.FrontmatterError as exc:
            raise self._refused(entry, f"its SKILL.md frontmatter cannot be read: {exc}") from None
        listed = entry.frontmatter
        if not frontmatter.json_equal(found, listed):
            differ = sorted(
                k
                for k in set(found) | set(listed)
                if k not in found
                or k not in listed
                or not frontmatter.json_equal(found[k], listed[k])
            )
            fields = ", ".join(bound(k, 64) for k in differ[:8])
            raise self._refused(
                entry, f"its SKILL.md frontmatter differs from the listing in: {fields}"
            )
        binding_timeout = self._st.definition.timeouts.request

        def fetch(file: SkillFile, timeout: float | None) -> bytes:
            budget = binding_timeout if timeout is None else timeout
            call_opts = CallOpts(timeout=budget)
            return self._fetch_verified(file, entry, call_opts, now() + budget)

        directory_read = wire.directory_read(self._require("load_skill", opts, deadline))
        return Skill(entry, text, body, fetch, self._lister() if directory_read else None)

    def _lister(self) -> Callable[[str, float | None], list[tuple[str, bool]]]:
        """``resources/directory/read`` of one directory URI, every page (bounded)."""
        pages = self._st.definition.limits.max_catalog_pages
        items = self._st.definition.limits.max_resource_count
        binding_timeout = self._st.definition.timeouts.request

        def list_directory(uri: str, timeout: float | None) -> list[tuple[str, bool]]:
            budget = binding_timeout if timeout is None else timeout
            opts, deadline = CallOpts(timeout=budget), now() + budget
            out: list[tuple[str, bool]] = []
            cursor: str | None = None
            for _ in range(pages):
                params: dict[str, Any] = {"uri": uri}
                if cursor is not None:
                    params["cursor"] = cursor
                page = self._calls.call(
                    "resources/directory/read",
                    params,
                    opts,
                    wire.directory_page,
                    op="skill_directory",
                    deadline=deadline,
                )
                if isinstance(page, str):
                    raise ProtocolError(page, binding=self._binding, op="skill_directory")
                children, cursor = page
                out.extend((child, mime == wire.DIRECTORY_MIME) for child, mime in children)
                if len(out) > items or cursor is None:
                    return out[:items]
            return out

        return list_directory

    def _check_limits(self, entry: SkillEntry) -> None:
        if entry.dynamic:
            raise self._refused(entry, "its files are dynamic: they cannot be verified")
        if len(entry.files) > MAX_SKILL_FILES:
            raise self._refused(
                entry, f"it lists {len(entry.files)} files, over the limit of {MAX_SKILL_FILES}"
            )
        if entry.total_size > MAX_SKILL_BYTES:
            raise self._refused(
                entry, f"its files add up to {entry.total_size} bytes, over {MAX_SKILL_BYTES}"
            )

    def _fetch_verified(
        self, file: SkillFile, entry: SkillEntry, opts: CallOpts, deadline: float
    ) -> bytes:
        """``resources/read`` of one listed file, then its size and digest checked."""
        result = self._calls.call(
            "resources/read",
            {"uri": file.uri},
            opts,
            lambda r: r,
            op="load_skill",
            deadline=deadline,
        )
        raw = wire.content_bytes(result, file.uri, file.size + _ENVELOPE)
        if isinstance(raw, str):
            raise self._refused(entry, f"{_short(file.uri)}: {raw}")
        if len(raw) != file.size:
            raise self._refused(
                entry, f"{_short(file.uri)} is {len(raw)} bytes; the listing says {file.size}"
            )
        digest = "sha256:" + hashlib.sha256(raw).hexdigest()
        if not hmac.compare_digest(digest, file.digest):
            raise self._refused(
                entry, f"{_short(file.uri)} does not match its listed sha256 digest"
            )
        return raw

    def _refused(self, entry: SkillEntry, why: str) -> SkillError:
        return SkillError(
            f"skill {bound(entry.name or entry.uri, 128)!r} refused: {why}",
            binding=self._binding,
            op="load_skill",
        )


def _short(uri: str) -> str:
    return repr(bound(uri, 200))
