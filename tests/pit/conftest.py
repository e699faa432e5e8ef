"""Fixtures for the pit's tests: a real journal (the demo deals one shoe through the real table loop) and a
real Mosquitto. Apart from tests/floor/conftest.py, which brings in the collector: the pit needs none of it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.game.records import TableRecord
from tests.pitload import demo_journal, journal_records
from tests.servers import Mosquitto


@pytest.fixture(scope="session")
def journal(tmp_path_factory: pytest.TempPathFactory) -> list[TableRecord]:
    """Every record of a real one-shoe journal, as table T1 publishes it."""
    return journal_records(demo_journal(tmp_path_factory.mktemp("journal") / "journal.db"), "T1")


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    server = Mosquitto(tmp_path / "mosquitto").start()
    yield server
    server.stop()
