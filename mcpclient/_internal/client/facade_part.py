"""What a mixin of :class:`~mcpclient.Client` may use of the facade.

The extension methods live in mixins beside their parts (``skills_api.py``,
``tasks_api.py``) so ``client.py`` stays a thin facade; they reach the
binding only through the names declared here, which ``Client`` defines.

Threads / Locks / Shutdown: none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpclient._internal.client.calls.callpath import CallPath
    from mcpclient._internal.client.skills.skills import SkillsPart
    from mcpclient.calls import CallOpts, CancelToken
    from mcpclient.handlers import Progress

__all__ = ["FacadePart"]


class FacadePart:
    """The base of the ``Client`` mixins: the facade's parts and ``_begin``, for type checkers."""

    if TYPE_CHECKING:
        _calls: CallPath
        _skills: SkillsPart

        def _begin(
            self,
            op: str,
            opts: CallOpts | None,
            timeout: float | None,
            progress: Callable[[Progress], None] | None,
            cancel: CancelToken | None,
        ) -> tuple[CallOpts, float]: ...
