"""The journal's timestamps: every record's ``ts`` is wall-clock UTC, ISO 8601 with milliseconds (the table's
default stamp, :func:`utc_now`), or a caller's ISO 8601 string checked by :func:`check_ts`. Shared by the writer
(the chain, the floor's ack) and the link (the state message's ``at``), which writes nothing."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["check_ts", "utc_now"]


def utc_now() -> str:
    """The journal's default stamp: wall-clock UTC, ISO 8601 with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def check_ts(ts: str) -> str:
    """``ts`` if it is an ISO 8601 string, else a TypeError or ValueError naming it."""
    if not isinstance(ts, str):
        raise TypeError(f"ts must be an ISO 8601 string, not {type(ts).__name__}")
    try:
        datetime.fromisoformat(ts)
    except ValueError:
        raise ValueError(f"ts {ts!r} is not an ISO 8601 timestamp") from None
    return ts
