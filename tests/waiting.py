"""Waiting in tests for something another thread or process does: poll, and fail naming what never came."""

from __future__ import annotations

import time
from collections.abc import Callable


def until(check: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``check`` every 50 ms until it is true; after ``timeout`` seconds fail with "timed out waiting for
    <what>"."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")
