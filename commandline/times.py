"""Times as people read them on a command line: a record's UTC ``at`` as local time with its zone
(docs/notation.md), for the table's and the floor's commands alike; and the one stamp the floor writes on what
it stores and sends (:func:`utc_stamp`). Not in the pure core: it reads the system's time zone and clock."""

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


def utc_stamp(moment: datetime | None = None) -> str:
    """The floor's stamp (an alert's ``at``, an archive row's time, a cutoff compared with them): UTC, ISO 8601
    to the millisecond with ``Z``, ``2026-12-01T17:04:05.123Z``; ``moment`` None: now. One form, so that the
    stamps compare as text in the archive's SQL."""
    when = datetime.now(UTC) if moment is None else moment.astimezone(UTC)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
