"""The journal's tests: each gets a fresh journal path in its own tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "journal.db"
