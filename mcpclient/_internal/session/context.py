"""A call's context: what every layer below the public method needs of it.

Built once per call in the client's call path (from the public method's
``CallOpts`` and op), or by the code that sends an internal request
(``initialize``, a list page, ``logging/setLevel``, a legacy subscribe), and
passed whole down to the request table's entry. Each layer reads what it
enforces, once: the client's gates the deadline while the call waits for its
turn; the session the progress token and the cancel token; the request table
the deadline, its class, ``indeterminate_on_loss`` and ``cancel_on_wire``;
the HTTP transport the call's own headers. It is frozen: a layer that needs
a different value (a submission's own cancel token) makes a new one with
``attrs.evolve``, once.

A stream (``subscriptions/listen``) is not a call: its sender opens it with
:meth:`RpcSession.open_stream <mcpclient._internal.session.rpc.RpcSession.open_stream>`,
which makes its context (no deadline comes due) and sends it as a stream.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from mcpclient.calls import CancelToken
from mcpclient.errors import FailureClass

__all__ = ["CallContext", "startup_context"]


@attrs.frozen(slots=True, kw_only=True)
class CallContext:
    """One request's deadline, cancel, progress and wire options. Thread safety: immutable.

    Attributes:
        op: The public operation (``"call_tool"``), named in its errors.
        deadline: The absolute ``time.monotonic()`` instant the call must end by;
            ``None`` only for a stream (``subscriptions/listen``), which has none.
        cancel: The token that cancels it (the caller's, or a submission's own).
        progress: What the session calls for each progress notification
            (``None``: no progress token is attached).
        deadline_class: The failure class of a passed deadline
            (``startup_timeout`` for the requests of a connect).
        indeterminate_on_loss: A lost connection after sending leaves the
            outcome unknown (``tools/call``) rather than failed.
        cancel_on_wire: Whether the server is told when the request is
            cancelled or expires (never for ``initialize``, nor for the
            ``server/discover`` probe a legacy server does not know).
        headers: The call's own HTTP headers (``Mcp-Name``, ``Mcp-Param-*``),
            computed when it was prepared; every round and a resend carry them.
        idle_timeout: Seconds the request may go without a progress report
            before the table expires it early (``None``: only the deadline).
            It asks for progress: a token is attached.
    """

    op: str
    deadline: float | None
    cancel: CancelToken | None = None
    progress: Callable[[dict[str, Any]], None] | None = None
    deadline_class: FailureClass = FailureClass.DEADLINE
    indeterminate_on_loss: bool = False
    cancel_on_wire: bool = True
    headers: Mapping[str, str] | None = None
    idle_timeout: float | None = None


def startup_context(
    op: str, deadline: float, cancel: CancelToken | None = None, *, cancel_on_wire: bool = True
) -> CallContext:
    """The context of a request a connect sends: its passed deadline is ``startup_timeout``.

    ``initialize``, the ``server/discover`` probe, the first catalog's list
    pages and ``logging/setLevel`` share the connect's one budget.
    """
    return CallContext(
        op=op,
        deadline=deadline,
        cancel=cancel,
        deadline_class=FailureClass.STARTUP_TIMEOUT,
        cancel_on_wire=cancel_on_wire,
    )
