"""The suite's process guard (tests/processes.py, installed by tests/conftest.py) itself: a test that starts a
process without ``e2e``, ``browser`` or ``systemd`` fails, naming what it started; a marked test may; and the
demo journal a session fixture deals once (``dealing_data``) is not charged to the test that set it up, nor
ctypes' ``ldconfig -p`` lookup of a C library.

Each case runs in a real inner pytest session in a child process with tests/conftest.py as its plugin.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

INNER_TESTS = """
import os
import subprocess

import pytest

from tests.processes import dealing_data


def test_runs_a_command_unmarked():
    subprocess.run(["true"], check=True)


def test_forks_unmarked():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


@pytest.mark.e2e
def test_runs_a_command_marked():
    subprocess.run(["true"], check=True)


@pytest.fixture(scope="session")
def dealt():
    with dealing_data():
        subprocess.run(["true"], check=True)


def test_reads_data_a_session_fixture_dealt(dealt):
    pass


def test_starts_nothing():
    pass


def test_looks_up_a_c_library():
    import ctypes.util

    ctypes.util.find_library("c")
"""


@pytest.mark.e2e
@pytest.mark.parametrize("workers", [0, 2], ids=["one-process", "two-xdist-workers"])
def test_an_unmarked_test_that_starts_a_process_fails_naming_it(tmp_path: Path, workers: int) -> None:
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(INNER_TESTS))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider", "-q", "-rA",
         "-n", str(workers), "--rootdir", str(tmp_path), str(tmp_path / "test_inner.py")],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    out = result.stdout
    assert "test_runs_a_command_unmarked starts a process without a marker (e2e, browser, systemd)" in out, out
    assert "It started subprocess.Popen ['true']" in out, out
    assert "test_forks_unmarked starts a process without a marker" in out, out
    fine_tests = (
        "runs_a_command_marked",
        "reads_data_a_session_fixture_dealt",
        "starts_nothing",
        "looks_up_a_c_library",
    )
    for fine in (f"test_{name}" for name in fine_tests):
        assert f"PASSED test_inner.py::{fine}" in out, out
        assert f"teardown of test_inner.py::{fine}" not in out, out
    summary = [line for line in out.splitlines() if re.search(r"\d+ passed", line)][-1]
    assert (re.findall(r"(\d+) passed", summary), re.findall(r"(\d+) errors?\b", summary)) == (["6"], ["2"]), out
