"""`shoe-controller --version` says the version pyproject.toml gives, the one place it is written."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import controller

ROOT = Path(__file__).resolve().parents[2]


def _pyproject_version() -> str:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return str(tomllib.load(f)["project"]["version"])


def test_the_package_version_is_pyprojects() -> None:
    # A stale editable install fails here: run scripts/setup-venv again.
    assert controller.__version__ == _pyproject_version()


@pytest.mark.e2e
def test_version_option_prints_pyprojects_version() -> None:
    script = Path(sys.executable).parent / "shoe-controller"
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == f"shoe-controller {_pyproject_version()}"


def test_no_module_writes_a_version_of_its_own() -> None:
    source = (ROOT / "controller" / "__init__.py").read_text()
    assert _pyproject_version() not in source
