"""How a server-initiated request is refused, and how a host handler is called.

Shared by :mod:`interactions` (sampling, roots, the handler threads) and
:mod:`elicitation`: the refusal a gate or a failed handler raises, the shape
of a served request, and the one way a host handler is invoked.

Threads: none of its own (runs on the handler thread that serves a request).
Locks: none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpclient.errors import FailureClass, InteractionError

__all__ = ["INTERNAL", "INVALID_PARAMS", "RefusedError", "Served", "call_handler", "nothing"]

INVALID_PARAMS = -32602
INTERNAL = -32603


class RefusedError(Exception):
    """A request the gates or the handler refused.

    ``code``/``message`` answer a legacy server; ``failure_class`` is what an
    MRTR round reports when it cannot continue; ``answer`` (elicitation) is
    the result to send instead of an error.
    """

    def __init__(
        self,
        code: int,
        message: str,
        failure_class: FailureClass,
        answer: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.failure_class = failure_class
        self.answer = answer
        self.after: Callable[[], None] = nothing


def nothing() -> None:
    """Nothing to do once the answer is sent."""
    return None


#: A served request: the wire answer, and what to do once it has been sent
#: (emit the ``*Resolved`` event: events follow the wire, never precede it).
Served = tuple[dict[str, Any], Callable[[], None]]


def call_handler(handler: Any, method: str, args: tuple[Any, ...], failure: FailureClass) -> Any:
    """Run a host handler; its exception becomes a refusal (a sampling denial passes)."""
    fn = handler if callable(handler) else getattr(handler, method)
    try:
        return fn(*args)
    except RefusedError:
        raise
    except InteractionError as exc:
        if method == "sample" and exc.failure_class is FailureClass.SAMPLING_DENIED:
            raise  # the sampling gate answers it as a denial
        raise _handler_failed(method, exc, failure) from exc
    except Exception as exc:
        raise _handler_failed(method, exc, failure) from exc


def _handler_failed(method: str, exc: Exception, failure: FailureClass) -> RefusedError:
    answer = {"action": "cancel"} if method == "elicit" else None
    refused = RefusedError(
        INTERNAL, f"the host's {method} handler failed: {type(exc).__name__}", failure, answer
    )
    refused.__cause__ = exc
    return refused
