"""The casino's shifts: where a shift begins and ends, in the casino's own local time (``--shifts``, ``--zone``).

A casino closes its books per shift (graveyard, day, swing). A :class:`ShiftPlan` is the shifts' start times in a
day, in one IANA time zone (``06:00,14:00,22:00`` in ``Europe/London``); a shift runs from one start to the
next, across midnight where it must, and a daylight-saving change makes that day's shift an hour shorter or
longer, as the casino's own clocks do. The floor stores its money in quarter-hour buckets of UTC time
(:func:`bucket_of`), so any plan whose starts fall on a quarter hour can be reported on the same archive; the
plan is chosen when the report is asked for, never fixed at archiving time. Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

#: The default plan: three eight-hour shifts (graveyard, day, swing), in UTC unless a zone is given.
DEFAULT_SHIFTS = "06:00,14:00,22:00"
DEFAULT_ZONE = "UTC"
#: The floor's accounting granule: a bucket of UTC time this many minutes long.
BUCKET_MINUTES = 15
_HHMM = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


class ShiftError(ValueError):
    """A shift plan that cannot be used, in one line naming what is wrong."""


def parse_time(text: str) -> datetime:
    """An ISO date or date-time (``2026-12-01``, ``2026-12-01T06:00Z``, ``...+01:00``) as an aware UTC
    datetime; a naive one is UTC. :class:`ShiftError` names a text that is neither."""
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ShiftError(f"{text!r:.40} is not an ISO date or time (e.g. 2026-12-01T06:00Z)") from None
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)


def bucket_of(at: str | datetime) -> str:
    """The quarter-hour UTC bucket holding ``at`` (a record's ``at``): ``2026-12-01T17:45Z``."""
    moment = parse_time(at) if isinstance(at, str) else at.astimezone(UTC)
    minute = moment.minute - moment.minute % BUCKET_MINUTES
    return moment.strftime("%Y-%m-%dT%H:") + f"{minute:02d}Z"


def bucket_time(bucket: str) -> datetime:
    """A bucket's start as an aware UTC datetime (the inverse of :func:`bucket_of`)."""
    return parse_time(bucket)


@dataclass(frozen=True)
class Shift:
    """One shift: its name (``2026-12-01 06:00 UTC``), its start and end (aware, UTC; end excluded)."""

    start: datetime
    end: datetime
    name: str

    def contains(self, moment: datetime) -> bool:
        return self.start <= moment < self.end

    def buckets(self) -> tuple[str, str]:
        """The first bucket in the shift and the first after it (``bucket >= a AND bucket < b`` in SQL)."""
        return bucket_of(self.start), bucket_of(self.end)

    def to_dict(self) -> dict[str, str]:
        iso = "%Y-%m-%dT%H:%M:%SZ"
        return {"shift": self.name, "start": self.start.strftime(iso), "end": self.end.strftime(iso)}


@dataclass(frozen=True)
class ShiftPlan:
    """The shifts' start times in a day, in one time zone."""

    starts: tuple[time, ...]
    zone: str = DEFAULT_ZONE

    @classmethod
    def parse(cls, shifts: str = DEFAULT_SHIFTS, zone: str = DEFAULT_ZONE) -> ShiftPlan:
        """``"06:00,14:00,22:00"`` and ``"Europe/London"``; :class:`ShiftError` names what is wrong."""
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ShiftError(f"unknown time zone {zone!r:.40} (an IANA name such as Europe/London)") from None
        starts: list[time] = []
        for part in shifts.split(","):
            m = _HHMM.match(part.strip())
            if m is None:
                raise ShiftError(f"shift start {part.strip()!r:.20} is not HH:MM (e.g. 06:00,14:00,22:00)")
            if int(m.group(2)) % BUCKET_MINUTES:
                raise ShiftError(f"shift start {part.strip()} is not on a quarter hour (:00, :15, :30, :45)")
            starts.append(time(int(m.group(1)), int(m.group(2))))
        if len(set(starts)) != len(starts):
            raise ShiftError(f"shift starts {shifts!r:.60} name one time twice")
        return cls(tuple(sorted(starts)), zone)

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.zone)

    def _starts_on(self, day: date) -> list[datetime]:
        return [datetime.combine(day, t, self.tz).astimezone(UTC) for t in self.starts]

    def _name(self, start: datetime) -> str:
        local = start.astimezone(self.tz)
        return local.strftime("%Y-%m-%d %H:%M ") + (local.tzname() or self.zone)

    def shift_of(self, moment: datetime) -> Shift:
        """The shift holding ``moment`` (aware)."""
        moment = moment.astimezone(UTC)
        local_day = moment.astimezone(self.tz).date()
        candidates = [s for d in (-1, 0, 1) for s in self._starts_on(local_day + timedelta(days=d))]
        candidates.sort()
        start = max(s for s in candidates if s <= moment)
        end = min(s for s in candidates if s > start)
        return Shift(start, end, self._name(start))

    def shifts(self, start: datetime, end: datetime) -> Iterator[Shift]:
        """Every shift that overlaps ``[start, end)``, in order."""
        shift = self.shift_of(start)
        while shift.start < end:
            yield shift
            shift = self.shift_of(shift.end)
