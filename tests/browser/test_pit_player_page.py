"""A player's page on the pit (/player/<ref>) in headless Chromium at 1280x800 and 800x480: two real table
journals (tests/slip_journal.py; player B plays at T2 while away from T1) are archived and a real
:class:`floor.pit.Pit` serves the page. B's one visit shows a slip at each table, its figures those of
``shoe-floor slips --player B`` in the notation; A's page lists A's buy-in; a malformed ref is no page. Screenshots
go to test-output/pit-player-page-*.png."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from controller.game.notation import money_text
from controller.journal import Journal
from floor.archive import Archive
from floor.pit import Pit
from floor.slips import floor_slips
from tests.browser.conftest import OUTPUT
from tests.slip_journal import CARD_A, CARD_B, START, slip_journal

pytestmark = pytest.mark.browser


class Setup:
    def __init__(self, tmp: Path) -> None:
        slip_journal(tmp / "t1.db").close()
        slip_journal(
            tmp / "t2.db", (CARD_B, "E0040150D0000004", "E0040150E0000005"), START + timedelta(minutes=5)
        ).close()
        self.url = f"sqlite:///{tmp}/archive.db"
        with Archive(self.url) as archive:
            for name in ("t1", "t2"):
                with Journal.open(tmp / f"{name}.db", create=False, read_only=True) as j:
                    archive.store([r.for_floor(name.upper()) for r in j.records()])
            self.b_slips = floor_slips(archive, player=CARD_B, include_open=True)
        self.pit = Pit(self.url)
        self.pit.start(("127.0.0.1", 0), None)
        host, port = self.pit.address
        self.base = f"http://{host}:{port}"


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    s = Setup(tmp_path_factory.mktemp("player-page"))
    try:
        yield s
    finally:
        s.pit.close()


SLIPS = """() => [...document.querySelectorAll('[data-testid="slip"]')].map((tr) => ({
  table: tr.dataset.table, cells: [...tr.children].map((td) => td.textContent),
  right: tr.getBoundingClientRect().right, font: parseFloat(getComputedStyle(tr.children[0]).fontSize)}))"""


@pytest.mark.parametrize("size", [(1280, 800), (800, 480)], ids=["1280x800", "800x480"])
def test_a_players_visit_across_two_tables_with_its_slips(browser: Any, setup: Setup, size: tuple[int, int]) -> None:
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height}, timezone_id="UTC")
    page = context.new_page()
    try:
        page.goto(f"{setup.base}/player/{CARD_B}")
        page.wait_for_function("() => window.playerPage && window.playerPage.loads >= 1")
        assert page.locator('[data-testid="visit"]').count() == 1  # one visit across the two tables
        assert page.locator('[data-testid="visit"] h2').inner_text() == "Visit from 2026-12-01 20:00:12 UTC"
        rows = page.evaluate(SLIPS)
        assert [r["table"] for r in rows] == [s.table for s in setup.b_slips] == ["T1", "T2"]
        for r, s in zip(rows, setup.b_slips, strict=True):
            cells = r["cells"]
            assert cells[1] == ", ".join(str(n) for n in s.seats)
            assert cells[6] == str(s.coups)
            assert cells[8] == money_text(s.handle_cents)
            assert cells[12] == ("+" if s.win_cents > 0 else "") + money_text(s.win_cents)
            assert r["font"] >= 11
        spill = page.evaluate(
            "() => { const p = document.querySelector('.visits-panel'); return p.scrollWidth - p.clientWidth; }"
        )
        assert spill <= 0, "the slips spill out of their panel"
        assert page.locator('[data-testid="skipped"]').is_hidden()
        assert (
            page.locator('[data-testid="player-summary"]').inner_text() == "2 slips, 1 buy-in ($500)"
        )  # at T2, where B sat down first
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / f"pit-player-page-{width}x{height}.png"), full_page=True)
    finally:
        context.close()


def test_the_buy_ins_and_a_ref_that_is_no_card(browser: Any, setup: Setup) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 800}, timezone_id="UTC")
    page = context.new_page()
    try:
        page.goto(f"{setup.base}/player/{CARD_A}")
        page.wait_for_function("() => window.playerPage && window.playerPage.loads >= 1")
        buy_ins = page.locator('[data-testid="buy-in"]').all_inner_texts()
        assert [b.split("\t") for b in buy_ins] == [["2026-12-01 20:00:18 UTC", "T1", "1", "$500", "cash"]]
        assert page.locator('[data-testid="slip"]').count() == 1
    finally:
        context.close()
    with urllib.request.urlopen(f"{setup.base}/api/player/{CARD_A}") as resp:
        data = json.loads(resp.read())
    assert [b["cents"] for b in data["buy_ins"]] == [50_000]
    for bad in ("/player/nobody", "/api/player/e0040150a0000001"):
        with pytest.raises(urllib.error.HTTPError) as got:
            urllib.request.urlopen(setup.base + bad)
        assert got.value.code == 404
