"""The pit's pages skip a malformed item and draw the rest, in headless Chromium.

The pit's server already refuses malformed messages (tests/pit/test_intake.py); these tests check the pages'
scripts on their own: a real pit serves the page, and its stream (or a table page's data, through
Playwright's routing) carries items that are not of their shape: a record's ``player: [1,2]``, an alert with a
numeric ``kind``, nulls. The well-formed ones are drawn, and the page says how many it skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from floor.archive import Archive
from floor.pit import Pit
from tests.pit.test_intake import ALERT, RECORD

pytestmark = pytest.mark.browser


@pytest.fixture
def pit(tmp_path: Path) -> Iterator[Pit]:
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    p = Pit(url)
    p.start(("127.0.0.1", 0), None)
    try:
        for table in ("T1", "T2"):
            p.on_message(f"baccarat/s1/{table}/status", b"online")
            p.on_message(f"baccarat/s1/{table}/record", json.dumps({**RECORD, "table": table}).encode())
        p.on_message("baccarat/s1/floor/alert", json.dumps(ALERT).encode())
        for junk in (b'{"shoe":1,"alarms":5}', b"[" * 6000):  # refused by the server: counted in the header
            p.on_message("baccarat/s1/T1/state", junk)
        yield p
    finally:
        p.close()


def publish_with_junk(pit: Pit, tables: list[Any], feed: list[Any]) -> None:
    """Publish the pit's snapshot with ``tables`` and ``feed`` added (past the server's own checks)."""
    snap = pit.snapshot()
    snap["tables"] += tables
    snap["feed"] += feed
    snap["version"] += 1000
    pit.board.publish_body(snap["version"], json.dumps(snap).encode())


def base(pit: Pit) -> str:
    host, port = pit.address
    return f"http://{host}:{port}"


def test_the_pit_page_skips_malformed_tiles_and_alerts_and_draws_the_rest(browser: Any, pit: Pit) -> None:
    good = pit.snapshot()["tables"][0]
    bad_tiles = [
        {**good, "table": "T8", "last": {**good["last"], "player": [1, 2]}},  # a record's player: [1, 2]
        {**good, "table": "T9", "alarms": [{"name": 5, "since": None}]},
        {**good, "table": 7},
        None,
    ]
    bad_alerts = [{**ALERT, "id": 9, "kind": 5}, None, {**ALERT, "id": 10, "record": "a record"}]
    publish_with_junk(pit, bad_tiles, bad_alerts)
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(base(pit) + "/")
        page.wait_for_function("() => window.pit && window.pit.renders >= 1", timeout=15_000)
        assert page.locator(".tile").evaluate_all("es => es.map(e => e.dataset.table)") == ["T1", "T2"]
        assert "Banker wins · P 5 – B 9" in page.locator('.tile[data-table="T2"] .result').text_content()
        assert page.locator('[data-testid="feed"] li').count() == 1
        # The second refusal came within a second of the first: a refusal alone publishes at most once a second,
        # and the count catches up with the next snapshot.
        assert page.locator('[data-testid="summary"]').text_content() == "2 tables, 2 online, 1 message refused"
        note = page.locator('[data-testid="skipped"]')
        assert note.is_visible() and note.text_content().startswith(f"{len(bad_tiles) + len(bad_alerts)} items skipped")
        # The next snapshot, well-formed: drawn, and the note goes.
        pit.on_message("baccarat/s1/T3/status", b"online")
        page.wait_for_function("() => document.querySelectorAll('.tile').length === 3", timeout=15_000)
        assert not note.is_visible()
        assert page.locator('[data-testid="summary"]').text_content() == "3 tables, 3 online, 2 messages refused"
        assert errors == []
    finally:
        page.close()


def test_a_table_page_skips_malformed_coups_alarms_and_alerts_and_draws_the_rest(browser: Any, pit: Pit) -> None:
    coup = {**RECORD["body"], "table": "T1", "ts": "2026-11-30T12:00:00Z", "void": False}
    data = {
        "table": "T1",
        "shoes": [1],
        "current": {
            "shoe": 1,
            "coups": [coup, {**coup, "coup": 5, "player": [1, 2]}, None],
            "roads": {
                "layout": {"rows": 6, "big_road": [[0, 0, "banker", 0], ["x"]], "bead_plate": [[0, 0, "banker"]]}
            },
            "alarms": [{"alarm": "link_down", "detail": "the link dropped"}, 5],
            "edges": {"coups": [1, 2], "ev": {"banker": [0.01, "x"]}},
        },
        "previous": {"shoe": "one"},
        "alerts": [{**ALERT, "detail": "banker flagged"}, {**ALERT, "kind": 5}],
    }
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.route("**/api/table/T1", lambda route: route.fulfill(status=200, content_type="application/json",
                                                              body=json.dumps(data)))  # fmt: skip
    try:
        page.goto(base(pit) + "/table/T1")
        page.wait_for_function("() => document.body.dataset.loads >= 1", timeout=15_000)
        rows = page.locator('[data-testid="coups-current"] tr[data-coup]')
        assert rows.evaluate_all("es => es.map(e => e.dataset.coup)") == ["4"]
        assert rows.first.locator(".card").count() == 4
        log = page.locator('[data-testid="alarm-log"]').text_content()
        assert "link down – the link dropped" in log and "banker flagged" in log  # the alarm in words
        assert page.locator('[data-testid="road-big_road"] .c').count() == 1
        assert page.locator('[data-testid="road-bead_plate"] .c').count() == 1
        # skipped: 2 coups, 1 road cell, 1 alarm, the edges, 1 alert, the previous shoe
        note = page.locator('[data-testid="skipped"]')
        assert note.is_visible() and note.text_content().startswith("7 items skipped")
        assert errors == []
    finally:
        page.close()
