"""Fixtures for end-to-end tests: a harness whose processes are always killed and reaped."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import Harness


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    h = Harness(tmp_path)
    try:
        yield h
    finally:
        h.close()
