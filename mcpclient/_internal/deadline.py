"""Monotonic time, in one place (DESIGN.md §3 rule 4)."""

from __future__ import annotations

import time

#: The clock every deadline is measured on.
now = time.monotonic


def remaining(deadline: float) -> float:
    """Seconds left until ``deadline`` (never negative)."""
    return max(0.0, deadline - time.monotonic())


def expired(deadline: float) -> bool:
    """Whether ``deadline`` has passed."""
    return time.monotonic() >= deadline
