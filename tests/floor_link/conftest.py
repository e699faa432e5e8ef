from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers import Mosquitto


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    server = Mosquitto(tmp_path / "mosquitto").start()
    try:
        yield server
    finally:
        server.kill()
