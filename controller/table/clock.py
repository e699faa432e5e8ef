"""Whether the table's clock is synchronised, as the kernel says (what ``timedatectl`` reports).

In a dispute the journal's times are set against the casino's CCTV, so the table records whether its clock
was synchronised: at start, and whenever that changes (the table loop asks every minute). A Raspberry Pi 4
has no real-time clock: until NTP has synchronised it after a boot, its clock may be hours off.

The kernel keeps the answer: ``adjtimex(2)`` with no change requested returns the clock's state, and its
``status`` holds ``STA_UNSYNC`` while no time daemon (systemd-timesyncd, chrony, ntpd) has disciplined the
clock; ``maxerror`` is its error bound. ``timedatectl``'s ``System clock synchronized`` is the same test
(systemd's ``ntp_synced()``): the state is not ``TIME_ERROR`` and ``STA_UNSYNC`` is clear. Read through ctypes
(Linux only); elsewhere the status is unknown, and said so.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from dataclasses import dataclass

__all__ = ["ClockStatus", "read_clock_status", "synchronised"]

#: adjtimex(2)'s return value when the clock is not synchronised.
TIME_ERROR = 5
#: ``status`` bit: the clock is not synchronised.
STA_UNSYNC = 0x0040


class _Timex(ctypes.Structure):
    # struct timex (linux/timex.h): the fields up to ``tai``, then room for the kernel's padding.
    _fields_ = [
        ("modes", ctypes.c_uint),
        ("offset", ctypes.c_long),
        ("freq", ctypes.c_long),
        ("maxerror", ctypes.c_long),
        ("esterror", ctypes.c_long),
        ("status", ctypes.c_int),
        ("constant", ctypes.c_long),
        ("precision", ctypes.c_long),
        ("tolerance", ctypes.c_long),
        ("time_sec", ctypes.c_long),
        ("time_usec", ctypes.c_long),
        ("tick", ctypes.c_long),
        ("ppsfreq", ctypes.c_long),
        ("jitter", ctypes.c_long),
        ("shift", ctypes.c_int),
        ("stabil", ctypes.c_long),
        ("jitcnt", ctypes.c_long),
        ("calcnt", ctypes.c_long),
        ("errcnt", ctypes.c_long),
        ("stbcnt", ctypes.c_long),
        ("tai", ctypes.c_int),
        ("_padding", ctypes.c_int * 11),
    ]


@dataclass(frozen=True, slots=True)
class ClockStatus:
    """What the kernel says of the clock. ``synchronised`` is None when it cannot be asked."""

    synchronised: bool | None
    #: The kernel's bound on the clock's error, in microseconds (None when unknown).
    max_error_us: int | None = None
    #: Why the status is unknown, or the kernel's words for it.
    detail: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"synchronised": self.synchronised, "max_error_us": self.max_error_us, "detail": self.detail}


def synchronised(state: int, status: int) -> bool:
    """``timedatectl``'s test: the clock state is not TIME_ERROR and STA_UNSYNC is clear."""
    return state != TIME_ERROR and not status & STA_UNSYNC


def read_clock_status() -> ClockStatus:
    """Ask the kernel (adjtimex with ``modes`` 0: read only, needs no privilege)."""
    if not sys.platform.startswith("linux"):
        return ClockStatus(None, detail=f"cannot ask the kernel on {sys.platform}")
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        adjtimex = libc.adjtimex
    except (OSError, AttributeError) as exc:
        return ClockStatus(None, detail=f"no adjtimex: {exc}")
    timex = _Timex()
    timex.modes = 0
    state = adjtimex(ctypes.byref(timex))
    if state < 0:
        return ClockStatus(None, detail=f"adjtimex failed: errno {ctypes.get_errno()}")
    synced = synchronised(state, timex.status)
    detail = "synchronised" if synced else "not synchronised (no time server has set the clock since boot)"
    return ClockStatus(synced, int(timex.maxerror), detail)
