"""Build ahead what the container tests boot and install: the cached Debian root and the dependencies' wheels
(tests/systemd/machine.py), this tree's package and the previous release's (test_package_under_systemd.py).

``scripts/test`` runs ``python -m tests.systemd.prepare`` in the background while the parallel pass runs, and
waits for it before the serial pass, where the container tests run alone: on a new machine (CI) the builds
(debootstrap about a minute and a half, the two packages about a minute) then cost the serial pass nothing.
Each build is cached by what goes into it and made atomically (a test that finds it missing builds it itself),
so running this is never needed for correctness; it exits 0 having built nothing where no container can boot.
"""

from __future__ import annotations

import sys
import time

from tests.systemd.machine import base_root, wheels
from tests.systemd.test_package_under_systemd import current_package, previous_package
from tests.systemd.test_under_systemd import unavailable


def main() -> int:
    reason = unavailable()
    if reason is not None:
        print(f"tests.systemd.prepare: nothing built: {reason}")
        return 0
    for what, build in (
        ("the Debian root", base_root),
        ("the wheels", wheels),
        ("this tree's package", current_package),
        ("the previous release's package", previous_package),
    ):
        started = time.monotonic()
        built = build()
        print(f"tests.systemd.prepare: {what} in {time.monotonic() - started:.0f} s: {built}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
