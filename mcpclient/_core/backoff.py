"""Full-jitter exponential backoff with an attempt and a time budget.

Shared by catalog refresh and reconnect (origin-client.md §7.12): the first
attempt has no delay; attempt n ≥ 2 waits a uniform random time in
[0, ceiling), where the ceiling is ``base_delay`` doubled n - 2 times and
capped at ``max_delay``. The loop stops once ``attempts`` tries have
started, or when the next delay would end past ``max_total`` from the start.
"""

from __future__ import annotations

import random

__all__ = ["Budget"]

_random = random.SystemRandom()


class Budget:
    """The retry budget of one loop. Not thread-safe: one loop owns it."""

    def __init__(
        self,
        *,
        attempts: int,
        base_delay: float,
        max_delay: float,
        max_total: float,
        start: float,
    ) -> None:
        self.attempts = attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.max_total = max_total
        self.start = start
        self.started = 0

    def ceiling(self, attempt: int) -> float:
        """The delay ceiling before attempt number ``attempt`` (1-based)."""
        if attempt <= 1:
            return 0.0
        ceiling = self.base_delay
        for _ in range(attempt - 2):
            if ceiling >= self.max_delay:
                break
            ceiling *= 2
        return min(ceiling, self.max_delay)

    def next_delay(self, now: float) -> float | None:
        """Consume one attempt: its delay, or ``None`` when the budget is spent."""
        if self.started >= self.attempts:
            return None
        ceiling = self.ceiling(self.started + 1)
        delay = _random.uniform(0.0, ceiling) if ceiling > 0 else 0.0
        if self.started > 0 and now + delay - self.start > self.max_total:
            return None
        self.started += 1
        return delay
