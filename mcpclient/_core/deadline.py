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


def for_people(seconds: float) -> str:
    """A duration as a message shows it: ``"2.7 s"``, ``"30 s"``, ``"0.5 s"``, ``"50 ms"``.

    Two significant digits are what a person reads (``2.69088 s`` is noise);
    under a tenth of a second it is milliseconds, from ten seconds whole seconds.
    """
    if seconds < 0.1:
        return f"{max(1, round(seconds * 1000))} ms"
    if seconds < 1:
        return f"{seconds:.2g} s"
    if seconds < 10:
        text = f"{seconds:.1f}"
        return f"{text[:-2] if text.endswith('.0') else text} s"
    return f"{round(seconds)} s"
