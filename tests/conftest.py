"""Suite-wide guards: no test may leave a thread or a child process behind (STYLE.md, practice 9), and no test
starts a process without the marker that keeps it out of ``scripts/test --fast`` (tests/processes.py)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import threading
import time
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests import processes
from tests.e2e.harness import Harness
from tests.shipped_broker import SecureBroker

#: Hypothesis's per-example deadline (200 ms) is a timed unit test: a property that takes 0.2 ms failed at 321 ms
#: when the machine paused the worker (a fresh Debian root building beside the suite). Speed lives in the
#: benchmarks; the properties assert behaviour only.
settings.register_profile("shoe-controller", deadline=None)
settings.load_profile("shoe-controller")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--serial",
        choices=("with", "skip", "only"),
        default="with",
        help="the tests marked serial: run them with the rest (default), leave them out, or run only them "
        "(scripts/test runs the rest in parallel, then these alone)",
    )


sys.addaudithook(processes.note)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    processes.WATCH.unmarked = not any(item.get_closest_marker(name) for name in processes.MARKERS)
    processes.WATCH.started.clear()
    try:
        return (yield)
    finally:
        processes.WATCH.unmarked = False


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """An unmarked test that started a process fails at its teardown, naming the first one."""
    report: pytest.TestReport = yield
    started = processes.WATCH.started
    if call.when == "teardown" and started and report.passed:
        report.outcome = "failed"
        more = f" (and {len(started) - 1} more)" if len(started) > 1 else ""
        report.longrepr = (
            f"{item.nodeid} starts a process without a marker ({', '.join(processes.MARKERS)}): "
            f"scripts/test --fast would run it. It started {started[0]}{more}"
        )
    return report


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests of a module that share a module-scoped fixture (a floor dealt once, a demo journal, a browser's
    pages) run on one worker, not spread over every worker that would each build it (``--dist loadgroup``: the
    module's name is their group; a test with its own group keeps it; pytest below 9.2, see pyproject.toml).
    A test that starts processes or a browser (``e2e``, ``browser``, ``systemd``) is not measured by coverage
    (pytest-cov's ``no_cover``): what it tries runs in the processes it starts, which coverage does not follow, and
    its tracer only slowed the in-process servers such tests also run. Then ``--serial``'s choice of tests."""
    for item in items:
        if any(item.get_closest_marker(m) is not None for m in ("e2e", "browser", "systemd")):
            item.add_marker(pytest.mark.no_cover)
        if item.get_closest_marker("xdist_group") is not None:
            continue
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        for name in info.names_closure:
            defs = info.name2fixturedefs.get(name)
            if defs and defs[-1].scope == "module":
                item.add_marker(pytest.mark.xdist_group(f"module:{item.nodeid.split('::', 1)[0]}"))
                break
    # --serial: the tests marked serial with the rest, left out, or alone
    choice = config.getoption("--serial")
    if choice == "with":
        return
    keep = [item for item in items if (item.get_closest_marker("serial") is not None) == (choice == "only")]
    deselected = [item for item in items if item not in keep]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = keep


def _children() -> set[int]:
    """Live child processes of this process (zombies included: an unreaped child is a leak too)."""
    kids: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        try:
            kids.update(int(pid) for pid in task.read_text().split())
        except OSError:
            continue
    return kids


def _threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.is_alive()}


# Libraries that start a thread when they are first imported and never stop it: lgpio starts its
# notification thread at import (and rpi-lgpio's RPi.GPIO imports lgpio). A test that is the first to
# import one would be blamed for that thread, so they are imported once before any test: their threads are
# then in every test's "before", and the guard keeps counting every thread a test itself starts.
IMPORT_TIME_THREADS = ("lgpio",)


@pytest.fixture(scope="session", autouse=True)
def libraries_with_import_time_threads(tmp_path_factory: pytest.TempPathFactory) -> None:
    for name in IMPORT_TIME_THREADS:
        if importlib.util.find_spec(name) is None:
            continue
        # lgpio makes its notification pipe (.lgd-nfy0) in the working directory: not in the checkout.
        here = os.getcwd()
        os.chdir(tmp_path_factory.mktemp(name))
        try:
            importlib.import_module(name)
        except Exception:  # cannot load here; the panel's tests check how that reads
            continue
        finally:
            os.chdir(here)


@pytest.fixture(autouse=True)
def no_leaked_threads_or_children(request: pytest.FixtureRequest) -> Iterator[None]:
    threads_before = _threads()
    children_before = _children()
    yield
    deadline = time.monotonic() + 3.0
    while True:
        leaked_threads = {t for t in _threads() - threads_before if not t.name.startswith("pydevd")}
        leaked_children = _children() - children_before
        if not leaked_threads and not leaked_children:
            return
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    names = sorted(t.name for t in leaked_threads)
    pytest.fail(f"{request.node.nodeid} left behind threads {names} and child processes {sorted(leaked_children)}")


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    """A temporary table of real processes (the simulated shoe, the daemon), always killed and reaped."""
    h = Harness(tmp_path)
    try:
        yield h
    finally:
        h.close()


@pytest.fixture
def sb(tmp_path: Path) -> Iterator[SecureBroker]:
    """A Mosquitto started from the shipped configuration and ACL (tests/shipped_broker.py), killed after."""
    from tests.shipped_broker import start_shipped_broker

    broker = start_shipped_broker(tmp_path)
    try:
        yield broker
    finally:
        broker.broker.kill()
