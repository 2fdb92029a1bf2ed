"""What the session needs from a framed, blocking transport."""

from __future__ import annotations

from typing import Protocol

__all__ = ["FrameTransport"]


class FrameTransport(Protocol):
    """A bidirectional stream of frames (one JSON-RPC message or batch each).

    One reader thread calls :meth:`read_frame`; one writer at a time calls
    :meth:`write_frame` / :meth:`try_write_frame`; any thread may call
    :meth:`close`.
    """

    def read_frame(self) -> bytes | None:
        """Block for the next frame; ``None`` at end of stream."""

    def write_frame(self, data: bytes) -> None:
        """Write one frame completely (may block)."""

    def try_write_frame(self, data: bytes) -> bool:
        """Write one frame at once if that cannot block; else write nothing."""

    def loss_reason(self) -> str:
        """A bounded, credential-free description of why the stream ended."""

    def close(self, timeout: float | None = None) -> None:
        """Release everything; idempotent."""
