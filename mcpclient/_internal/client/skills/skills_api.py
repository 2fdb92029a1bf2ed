"""The skills methods of :class:`~mcpclient.Client` (a mixin: the facade stays thin).

Threads / Locks / Shutdown: none of its own; see :mod:`.skills`.
"""

from __future__ import annotations

from mcpclient._internal.client.facade_part import FacadePart
from mcpclient.calls import CancelToken
from mcpclient.skills import Skill, SkillEntry

__all__ = ["SkillMethods"]


class SkillMethods(FacadePart):
    """``Client.skills`` and ``Client.load_skill`` (SEP-2640)."""

    def skills(
        self, *, timeout: float | None = None, cancel: CancelToken | None = None
    ) -> tuple[SkillEntry, ...]:
        """The server's skills (``skills/list``, every page); nothing of any skill is read.

        Needs ``Definition(extensions={SKILLS_EXTENSION: {}})`` and a server
        that declares the extension. Entries that break the extension's entry
        rules are left out (and logged).

        Raises:
            ConfigError: the definition does not opt in to the skills extension.
            ProtocolError: ``unsupported_protocol`` when the server does not declare it.
            LimitExceededError: more pages or entries than the binding's limits.
        """
        opts, deadline = self._begin("skills", None, timeout, None, cancel)
        return self._skills.listing(opts, deadline)

    def load_skill(
        self,
        skill: str | SkillEntry,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> Skill:
        """Load a skill by name, ``SKILL.md`` URI or entry, verified against its listing.

        Lists the skills first if :meth:`skills` was not called yet; a URI
        that is not listed is confirmed with ``skills/get``. The entry is
        checked against the extension's limits (512 files, 16 MiB) before any
        read; then only ``SKILL.md`` is read and verified: byte size, sha256
        digest, then its YAML frontmatter field by field against the listed
        ``frontmatter``. Supporting files are read later, one by one, by
        :meth:`Skill.read <mcpclient.Skill.read>`.

        Raises:
            SkillError: the skill was refused; nothing further was read.
            ToolUnavailableError: ``not_found``: no listed skill has that name.
            ConfigError: several listed skills have that name, or no opt-in.
        """
        opts, deadline = self._begin("load_skill", None, timeout, None, cancel)
        return self._skills.load(skill, opts, deadline)
