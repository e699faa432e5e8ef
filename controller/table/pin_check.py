"""The table's PIN checker: a supervisor's PIN against the hash on the verified staff list, off the loop's thread.

An Argon2id verify takes tens of milliseconds on a Pi (64 MiB, three passes: argon2-cffi's recommended
parameters, which the floor's registry hashes with), far too long for the loop that acknowledges cards. So the
loop hands a PIN to :meth:`PinChecker.submit` and goes on; one worker thread checks it and hands the verdict
back through ``done`` (the loop's inbox: a :class:`~controller.table.loop.inbox.PinVerdict`). At most one PIN
is being checked at a time: another submitted meanwhile is refused (False), which the dealer screen says, so a
flood of PINs costs one check at a time and never a queue. The PIN is never logged, kept or journaled: the
verdict names the staff id and right or wrong, nothing else.

A hash that is not an Argon2 hash, or a PIN checked with argon2-cffi missing (the ``[table]`` extra has it),
is wrong: no approval is given on a check that could not be made (logged each time).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

__all__ = ["PIN_DIGITS", "PinChecker", "check_pin"]

#: A PIN's length in digits (the floor's registry takes the same: ``floor.archive.staff``).
PIN_DIGITS = (4, 12)


def check_pin(pin_hash: str, pin: str) -> bool:
    """Whether ``pin`` is the one ``pin_hash`` (an Argon2 PHC string) was made of; False when it cannot be told."""
    try:
        from argon2 import PasswordHasher
        from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
    except ImportError:
        log.error("a PIN cannot be checked: argon2-cffi is not installed (pip install 'shoe-controller[table]')")
        return False
    try:
        return PasswordHasher().verify(pin_hash, pin)
    except VerifyMismatchError:
        return False
    except (VerificationError, InvalidHashError) as exc:
        log.warning("a PIN hash on the staff list is not one: %s", type(exc).__name__)
        return False


class PinChecker:
    """One PIN checked at a time on a worker thread; :meth:`submit` never blocks the caller."""

    def __init__(self, check: Callable[[str, str], bool] = check_pin) -> None:
        self._check = check
        self._lock = threading.Lock()
        self._busy = False
        #: PINs checked, and refused because one was being checked already.
        self.checked = 0
        self.refused_busy = 0

    @property
    def busy(self) -> bool:
        with self._lock:
            return self._busy

    def submit(self, staff_id: str, pin_hash: str, pin: str, done: Callable[[str, bool], None]) -> bool:
        """Check ``pin`` against ``pin_hash`` on the worker thread and call ``done(staff_id, right)`` there;
        False (nothing checked) when a check is under way."""
        with self._lock:
            if self._busy:
                self.refused_busy += 1
                return False
            self._busy = True
        threading.Thread(target=self._run, args=(staff_id, pin_hash, pin, done), name="pin-check", daemon=True).start()
        return True

    def _run(self, staff_id: str, pin_hash: str, pin: str, done: Callable[[str, bool], None]) -> None:
        right = False
        try:
            right = self._check(pin_hash, pin)
        except Exception:  # a checker that fails says wrong; the loop goes on
            log.exception("the PIN check failed (taken as wrong)")
        finally:
            with self._lock:
                self._busy = False
                self.checked += 1
        done(staff_id, right)
