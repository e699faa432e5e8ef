"""controller/table/clock.py: the kernel's word on whether the clock is synchronised (timedatectl's test)."""

from __future__ import annotations

import ctypes
import sys

import pytest

from controller.table.clock import STA_UNSYNC, TIME_ERROR, _Timex, read_clock_status, synchronised


@pytest.mark.parametrize(
    ("state", "status", "expected"),
    [(0, 0, True), (0, STA_UNSYNC, False), (TIME_ERROR, 0, False), (1, 0x2001, True), (4, STA_UNSYNC | 1, False)],
)
def test_synchronised_is_timedatectls_test(state: int, status: int, expected: bool) -> None:
    assert synchronised(state, status) is expected


def test_the_struct_is_at_least_the_kernels() -> None:
    # struct timex is 208 bytes on 64-bit Linux and 128 on 32-bit: adjtimex writes all of it.
    assert ctypes.sizeof(_Timex) >= (208 if ctypes.sizeof(ctypes.c_long) == 8 else 128)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="adjtimex is Linux's")
def test_the_kernel_answers_without_privilege() -> None:
    status = read_clock_status()
    assert isinstance(status.synchronised, bool), status
    assert status.max_error_us is not None and status.max_error_us >= 0
    # An unsynchronised kernel's error bound grows to its cap (16 s); a synchronised one is far below it.
    if not status.synchronised:
        assert "not synchronised" in status.detail
