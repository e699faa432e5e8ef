"""The fast tier starts no process: a guard that fails any test which starts one without a marker.

A test that starts a process (a server, a command, the simulator, a container) carries ``e2e``, ``browser``
or ``systemd``: the markers ``scripts/test --fast`` leaves out. tests/conftest.py installs :func:`note` as an
audit hook (``subprocess.Popen``, ``os.fork``, ``os.exec*``, ``os.posix_spawn``, ``os.system``) and fails an
unmarked test that started one, naming it. Two exceptions, stated in docs/performance.md: :func:`dealing_data`,
the demo journal some session fixtures deal once per worker (one process run to completion before the tests
that read it, no server), and ctypes' ``ldconfig -p`` lookup of a C library.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

#: The markers of the tests that may start a process.
MARKERS = ("e2e", "browser", "systemd")

_EVENTS = frozenset({"subprocess.Popen", "os.fork", "os.forkpty", "os.exec", "os.posix_spawn", "os.spawn", "os.system"})


class _Watch:
    """What the audit hook reads: whether the running test is unmarked, and what it started."""

    def __init__(self) -> None:
        self.unmarked = False
        self.data = 0  # > 0 inside dealing_data()
        self.started: list[str] = []
        self.lock = threading.Lock()


WATCH = _Watch()


#: Not counted: ``ctypes.util.find_library`` asks ``ldconfig -p`` where a C library is (the clock's libc, a
#: few milliseconds inside a call), which is a lookup of the library, not a process the test runs.
_LOOKUPS = (["/sbin/ldconfig", "-p"], ["ldconfig", "-p"])


def note(event: str, args: tuple[object, ...]) -> None:
    """The audit hook: note a process started while an unmarked test runs (outside :func:`dealing_data`)."""
    if event in _EVENTS and WATCH.unmarked and not WATCH.data:
        what = args[1] if event == "subprocess.Popen" and len(args) > 1 else args[:1]
        if isinstance(what, list | tuple) and list(what) in _LOOKUPS:
            return
        with WATCH.lock:
            WATCH.started.append(f"{event} {what!r}"[:200])


@contextlib.contextmanager
def dealing_data() -> Iterator[None]:
    """A session fixture's process that deals test data once (the demo journal), or stops its server at the
    session's end: not charged to the test that happens to set the fixture up first, or to tear it down last
    (starting the server is charged: the tests that ask for it are marked)."""
    WATCH.data += 1
    try:
        yield
    finally:
        WATCH.data -= 1
