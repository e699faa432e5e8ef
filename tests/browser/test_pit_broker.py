"""The pit page says when its server cannot reach the broker (it read "0 tables" and nothing else while
``shoe-floor serve`` tried in silence), in headless Chromium: a real pit following a broker port nothing listens
on shows the line at once, and a line that is not text is not drawn."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from floor.archive import Archive
from floor.pit import Pit

pytestmark = pytest.mark.browser


@pytest.fixture
def pit(tmp_path: Path) -> Iterator[tuple[Pit, int]]:
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    holder = socket.socket()  # bound, not listening: refused, and taken by nothing else meanwhile
    holder.bind(("127.0.0.1", 0))
    port = holder.getsockname()[1]
    p = Pit(url)
    p.start(("127.0.0.1", 0), f"mqtt://127.0.0.1:{port}")
    try:
        yield p, port
    finally:
        p.close()
        holder.close()


def test_the_pit_page_says_the_broker_cannot_be_reached(browser: Any, pit: tuple[Pit, int]) -> None:
    p, port = pit
    host, http = p.address
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto(f"http://{host}:{http}/")
        line = page.locator('[data-testid="broker"]')
        line.wait_for(state="visible", timeout=15_000)
        assert line.text_content() == f"cannot reach the broker mqtt://127.0.0.1:{port} (Connection refused); retrying"
        assert page.locator('[data-testid="summary"]').text_content() == "0 tables, 0 online"
        snap = p.snapshot()
        snap["broker"], snap["version"] = {"not": "text"}, snap["version"] + 1000
        p.board.publish_body(snap["version"], json.dumps(snap).encode())
        line.wait_for(state="hidden", timeout=15_000)
    finally:
        page.close()
