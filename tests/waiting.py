"""Waiting in tests for something another thread or process does: poll, and fail naming what never came.

The suite's one way to wait: a test that must see that something did *not* happen waits for the event that
shows the other side has had its chance (a log line, a counter, a tick of the loop), then checks; never a
bare sleep.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def until(check: Callable[[], object], timeout: float, what: str, *, every: float = 0.05) -> None:
    """Poll ``check`` every ``every`` seconds (50 ms) until it is true; after ``timeout`` seconds fail with
    "timed out waiting for <what>"."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(every)
    if check():  # once more: the last sleep may have ended past the deadline just as it came
        return
    raise AssertionError(f"timed out waiting for {what}")
