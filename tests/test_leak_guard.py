"""The suite's leak guard (tests/conftest.py) itself: it blames a test for a thread the test leaves running,
but not for the thread a GPIO library starts when it is imported (lgpio's notification thread, which runs
until the process ends).

Each case runs a real inner pytest session in a child process with tests/conftest.py as its plugin.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Does at import what lgpio 0.2.2 does (lgpio.py: ``_notify_thread = _callback_thread()``): start a daemon
# thread that never ends. Used where the real lgpio is not installed (it is only on a Raspberry Pi).
LGPIO_STAND_IN = """
import threading

_stop = threading.Event()
_notify_thread = threading.Thread(target=_stop.wait, daemon=True)
_notify_thread.start()
"""

INNER_TESTS = """
import threading


def test_imports_lgpio_first():
    import lgpio  # noqa: F401


def test_leaks_a_thread_of_its_own():
    stop = threading.Event()
    threading.Thread(target=stop.wait, args=(60,), name="our-own-leak", daemon=True).start()
"""


def _inner_session(tmp_path: Path, *, real_lgpio: bool, workers: int = 0) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(INNER_TESTS))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if not real_lgpio:
        stand_in = tmp_path / "stand_in"
        stand_in.mkdir()
        (stand_in / "lgpio.py").write_text(LGPIO_STAND_IN)
        env["PYTHONPATH"] = f"{stand_in}{os.pathsep}{ROOT}"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider", "-q", "-rA",
         "-n", str(workers), "--rootdir", str(tmp_path), str(tmp_path / "test_inner.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def _check(result: subprocess.CompletedProcess[str]) -> None:
    out = result.stdout
    assert "ERROR test_inner.py::test_imports_lgpio_first" not in out, out  # lgpio's thread is not blamed
    assert "ERROR at teardown of test_leaks_a_thread_of_its_own" in out, out  # ours is
    assert "test_leaks_a_thread_of_its_own left behind threads ['our-own-leak']" in out, out
    summary = [line for line in out.splitlines() if re.search(r"\d+ passed", line)][-1]  # may count warnings
    assert (re.findall(r"(\d+) passed", summary), re.findall(r"(\d+) errors?\b", summary)) == (["2"], ["1"]), out


@pytest.mark.e2e
@pytest.mark.parametrize("workers", [0, 2], ids=["one-process", "two-xdist-workers"])
def test_guard_blames_our_leaked_thread_but_not_the_thread_lgpio_starts_at_import(tmp_path: Path, workers: int) -> None:
    """In one process and in each pytest-xdist worker (scripts/test runs the suite so)."""
    _check(_inner_session(tmp_path, real_lgpio=False, workers=workers))


@pytest.mark.e2e
def test_guard_with_the_real_lgpio_where_it_is_installed(tmp_path: Path) -> None:
    if importlib.util.find_spec("lgpio") is None:
        pytest.skip("lgpio is not installed here (the [pi] extra, on a Raspberry Pi)")
    _check(_inner_session(tmp_path, real_lgpio=True))
    assert not list(tmp_path.glob(".lgd-nfy*")), "lgpio's pipe belongs in a temporary directory"
