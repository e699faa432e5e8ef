"""Times as people read them on a command line: a record's UTC ``at`` as local time with its zone
(docs/notation.md), for the table's and the floor's commands alike. Not in the pure core: it reads the
system's time zone."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo


def local_time_text(at: str, zone: tzinfo | None = None) -> str:
    """A record's UTC ``at`` as local time with its zone: ``2026-12-01 18:04:05 CET`` (``zone`` None: the
    system's own zone, with the offset it had at that moment, daylight saving included). A text that is no
    time comes back as it was."""
    try:
        moment = datetime.fromisoformat(str(at).replace("Z", "+00:00"))
    except ValueError:
        return str(at)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    local = moment.astimezone(zone)
    return local.strftime("%Y-%m-%d %H:%M:%S ") + (local.tzname() or local.strftime("%z"))
