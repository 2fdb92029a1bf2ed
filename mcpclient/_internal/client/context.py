"""A call's context: what every layer below the public method needs of it.

Built once per call in :mod:`callpath` (from the public method's ``CallOpts``
and op) and passed whole down the client layer (admission, the MRTR
exchange, a submission); each layer reads what it enforces: the gates and
the session the deadline, its class and the cancel token, the session the
progress callback, ``indeterminate_on_loss`` and the call's own headers.
It is frozen: a layer that needs a different value (a submission's own
cancel token) makes a new one with ``attrs.evolve``, once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from mcpclient.calls import CancelToken
from mcpclient.errors import FailureClass

__all__ = ["CallContext"]


@attrs.frozen(slots=True, kw_only=True)
class CallContext:
    """One call's deadline, cancel, progress and wire options. Thread safety: immutable.

    Attributes:
        op: The public operation (``"call_tool"``), named in its errors.
        deadline: The absolute ``time.monotonic()`` instant the call must end by.
        cancel: The token that cancels it (the caller's, or a submission's own).
        progress: What the session calls for each progress notification
            (``None``: no progress token is attached).
        deadline_class: The failure class of a passed deadline.
        indeterminate_on_loss: A lost connection after sending leaves the
            outcome unknown (``tools/call``) rather than failed.
        headers: The call's own HTTP headers (``Mcp-Name``, ``Mcp-Param-*``),
            computed when it was prepared; every round and a resend carry them.
    """

    op: str
    deadline: float
    cancel: CancelToken | None = None
    progress: Callable[[dict[str, Any]], None] | None = None
    deadline_class: FailureClass = FailureClass.DEADLINE
    indeterminate_on_loss: bool = False
    headers: Mapping[str, str] | None = None
