"""The one clock: UTC now, and the ISO 8601 forms the stored formats write it in.

Each format keeps its own precision (goldens and contracts compare them byte for byte):
whole seconds for context files, sessions, logs, project.yaml and the report; microseconds
for runs and proposals; as many fraction digits as needed for a cache's manifest."""

from __future__ import annotations

import time
from datetime import UTC, datetime


def now() -> datetime:
    """The current time, aware, in UTC (tests replace this one function to fix the clock)."""
    return datetime.now(UTC)


def stamp(at: datetime | None = None) -> str:
    """"2026-03-01T09:00:00Z": whole seconds; `at` (any zone) or now."""
    return (at or now()).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def stamp_us(t: float) -> str:
    """"2026-03-01T09:00:00.250000Z": a `time.time()` value, always six fraction digits."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def stamp_ns(ns: int) -> str:
    """A `time.time_ns()` value with as many fraction digits as needed (0, 3, 6 or 9), as the
    core's chrono writes it (RFC 3339)."""
    secs, frac = divmod(ns, 1_000_000_000)
    base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs))
    if frac == 0:
        return base + "Z"
    if frac % 1_000_000 == 0:
        return f"{base}.{frac // 1_000_000:03d}Z"
    if frac % 1000 == 0:
        return f"{base}.{frac // 1000:06d}Z"
    return f"{base}.{frac:09d}Z"


def parse(text: str) -> datetime:
    """A stored stamp as an aware datetime (one without a zone is read as UTC); ValueError
    when it is no ISO 8601 time."""
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
