"""scripts/setup-venv installs only when something an install depends on changed (issue 18: the demo reinstalled
the project on every launch, 6.5 s and ten lines of setuptools warnings). Run against a stand-in venv whose
``python`` logs each call, so the test sees whether pip was asked, without installing anything."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FAKE_PYTHON = """#!/bin/sh
echo "$*" >> "{log}"
case "$1" in
    -m) [ -n "$FAIL_PIP" ] && {{ echo "pip: no network" >&2; exit 1; }}; exit 0 ;;
    *) exec "{python}" "$@" ;;
esac
"""


def fake_venv(tmp_path: Path) -> tuple[Path, Path]:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    log = tmp_path / "calls.log"
    python = venv / "bin" / "python"
    python.write_text(FAKE_PYTHON.format(log=log, python=sys.executable))
    python.chmod(0o755)
    entry = venv / "bin" / "shoe-controller"
    entry.write_text("#!/bin/sh\n")
    entry.chmod(0o755)
    return venv, log


def setup(venv: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROOT / "scripts" / "setup-venv"), *args],
        env={**os.environ, "VENV": str(venv), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def pip_calls(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if line.startswith("-m pip")] if log.exists() else []


@pytest.mark.e2e
def test_a_second_setup_with_nothing_changed_installs_nothing_and_says_nothing(tmp_path: Path) -> None:
    venv, log = fake_venv(tmp_path)
    first = setup(venv)
    assert first.returncode == 0, first.stderr
    assert len(pip_calls(log)) == 2  # pip itself, then the project
    log.unlink()
    second = setup(venv)
    assert second.returncode == 0 and second.stdout == "" and second.stderr == ""
    assert pip_calls(log) == []


@pytest.mark.e2e
def test_other_extras_or_a_forced_setup_install_again(tmp_path: Path) -> None:
    venv, log = fake_venv(tmp_path)
    assert setup(venv).returncode == 0
    log.unlink()
    assert setup(venv, "dev").returncode == 0
    assert any(".[dev]" in call for call in pip_calls(log))
    log.unlink()
    assert setup(venv, "dev", SETUP_VENV_FORCE="1").returncode == 0
    assert any(".[dev]" in call for call in pip_calls(log))


@pytest.mark.e2e
def test_a_changed_pyproject_installs_again(tmp_path: Path) -> None:
    venv, log = fake_venv(tmp_path)
    assert setup(venv).returncode == 0
    stamp = venv / ".shoe-controller-installed"
    stamp.write_text(stamp.read_text().replace(stamp.read_text()[:8], "00000000"))  # another pyproject's hash
    log.unlink()
    assert setup(venv).returncode == 0
    assert len(pip_calls(log)) == 2


@pytest.mark.e2e
def test_a_failed_install_shows_pips_words_and_leaves_no_stamp(tmp_path: Path) -> None:
    venv, log = fake_venv(tmp_path)
    failed = setup(venv, FAIL_PIP="1")
    assert failed.returncode == 1
    assert "pip: no network" in failed.stderr and "installing the project into" in failed.stderr
    assert not (venv / ".shoe-controller-installed").exists()
    log.unlink()
    assert setup(venv).returncode == 0 and len(pip_calls(log)) == 2  # tried again next time
