"""A pit table page as a pit boss and a dispute read it, in headless Chromium (1280x800 and 800x480).

A real journal (the demo's seven players) is archived through the real surveillance step with the real
accounting watch (floor/accounting.py), a real :class:`floor.pit.Pit` serves the page. Measured: the bead plate
and small road keep their 6th row inside their box, the derived roads use the standard marks (big eye boy a
hollow ring, small road a filled dot, cockroach pig a slash), the edge chart has axes, a zero line and the
wagers named in words, the open rating sessions are the accounting's, and a recalled coup shows its cards in
the notation, its totals Player first, its flags, its record's seq and hash, its local time with the zone, and
per seat each wager with what it was paid, equal to the table's own settlement records. Screenshots go to
test-output/pit-table-page-*.png.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.game.notation import card_text, result_text
from controller.game.records import TableRecord
from controller.game.roads import compute_roads, roads_layout
from floor.accounting import Accounting, ratings
from floor.archive import Archive
from floor.pit import Pit
from floor.shifts import ShiftPlan, parse_time
from floor.surveillance import Surveillance
from tests.browser.conftest import OUTPUT, recall_on_page
from tests.floor.feeding import archive_in_steps
from tests.pitload import demo_journal, journal_records

pytestmark = pytest.mark.browser

PLAN = ShiftPlan.parse("06:00,14:00,22:00", "UTC")


class Setup:
    def __init__(self, tmp: Path) -> None:
        journal = demo_journal(tmp / "journal.db", shoes=1)
        self.records = journal_records(journal, "T1")
        self.url = f"sqlite:///{tmp}/archive.db"
        with Archive(self.url) as archive:
            archive_in_steps(archive, Surveillance(archive, watches=[Accounting(PLAN)]), self.records, 200)
            self.open_sessions = [r.to_dict() for r in ratings(archive, "T1", open_only=True)]
            self.hashes = {r.seq: r.hash for r in self.records}
        wall = int(parse_time(self.records[-1].at).timestamp() * 1000)
        self.pit = Pit(self.url, wall_ms=lambda: wall, plan=PLAN)
        self.pit.start(("127.0.0.1", 0), None)
        host, port = self.pit.address
        self.base = f"http://{host}:{port}"

    def coup(self, pick: Any) -> TableRecord:
        return next(r for r in self.records if r.kind == "coup" and r.body.get("declared") and pick(r.body))

    def money(self, kind: str, coup: int) -> list[dict[str, Any]]:
        return [dict(r.body) for r in self.records if r.kind == kind and r.body.get("coup") == coup]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    s = Setup(tmp_path_factory.mktemp("table-page"))
    try:
        yield s
    finally:
        s.pit.close()


ROADS = """() => [...document.querySelectorAll('.road')].map((road) => {
  const top = road.getBoundingClientRect().top + road.clientTop;
  const cells = [...road.querySelectorAll('.c')];
  const mark = cells.length ? getComputedStyle(cells[0], '::before') : null;
  return {name: road.dataset.testid.slice(5), cells: cells.length, box_bottom: top + road.clientHeight,
    row5: cells.filter((c) => c.dataset.row === '5').map((c) => c.getBoundingClientRect().bottom),
    mark: mark && {background: mark.backgroundColor, border: parseFloat(mark.borderTopWidth),
      width: parseFloat(mark.width), height: parseFloat(mark.height), transform: mark.transform}};
})"""


@pytest.mark.parametrize("size", [(1280, 800), (800, 480)], ids=["1280x800", "800x480"])
def test_the_table_page(browser: Any, setup: Setup, size: tuple[int, int]) -> None:
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height}, timezone_id="Europe/Berlin")
    page = context.new_page()
    try:
        page.goto(setup.base + "/table/T1")
        page.wait_for_function("() => document.body.dataset.loads >= 1")
        roads = {r["name"]: r for r in page.evaluate(ROADS)}
        for name in ("bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig"):
            r = roads[name]
            assert r["cells"] > 0, name
            for bottom in r["row5"]:
                assert bottom <= r["box_bottom"] + 0.5, f"{name}: its 6th row is cut off"
        assert roads["bead_plate"]["row5"], "a whole shoe fills the bead plate's 6th row"
        # the big road's pair dots: those of the coups each cell stands for (its win and its ties)
        dots = page.eval_on_selector_all(
            '[data-testid="road-big_road"] .c',
            "es => es.map(e => [!!e.querySelector('.pair.player'), !!e.querySelector('.pair.banker')])",
        )
        coups = [r.body for r in setup.records if r.kind == "coup" and r.body.get("declared")]
        expected = [[c[4], c[5]] for c in roads_layout(compute_roads(coups))["layout"]["big_road"]]
        assert any(any(p) for p in expected), "the shoe dealt no pair: the check would prove nothing"
        assert dots == expected
        eye, small, pig = (roads[n]["mark"] for n in ("big_eye_boy", "small_road", "cockroach_pig"))
        assert eye["border"] >= 1.5 and eye["background"] == "rgba(0, 0, 0, 0)", "big eye boy: a hollow ring"
        assert small["border"] == 0 and small["background"] != "rgba(0, 0, 0, 0)", "small road: a filled dot"
        assert pig["width"] <= 3 and pig["height"] > 8 and pig["transform"] != "none", "cockroach pig: a slash"
        # the edge chart: two axes, the zero line, ticks in %, the wagers in words
        assert page.locator('[data-testid="edges"] svg line.axis').count() == 2
        assert page.locator('[data-testid="edge-zero"]').count() == 1
        ticks = page.locator('[data-testid="edges"] svg text.tick').all_text_contents()
        assert any(t.endswith("%") for t in ticks) and "0%" in ticks
        legend = page.locator('[data-testid="edges"] .legend span').all_text_contents()
        assert any(t.startswith("Dragon 7 ") for t in legend) and not any("_" in t for t in legend)
        # the coups: the notation, local time with its zone
        last = setup.coup(lambda b: True)
        row = page.locator('[data-testid="coups-current"] tr[data-coup="1"]').first
        assert row.locator(".result").text_content() == result_text(
            last.body["winner"], last.body["player_total"], last.body["banker_total"]
        )
        assert row.locator(".when").text_content().endswith(" CET")
        # the open rating sessions, as the accounting rates them
        seats = page.locator('[data-testid="ratings"] tr[data-seat]').evaluate_all("es => es.map(e => +e.dataset.seat)")
        assert seats == [s["seat"] for s in setup.open_sessions] and seats
        # recall a natural coup with wagers on it
        natural = setup.coup(lambda b: b.get("natural") and b["coup"] > 2)
        shoe, coup = natural.body["shoe"], natural.body["coup"]
        assert recall_on_page(page, shoe, coup) == (natural.body["player"], natural.body["banker"])
        recall = page.locator('[data-testid="recall"]')
        assert recall.locator(".result").text_content() == result_text(
            natural.body["winner"], natural.body["player_total"], natural.body["banker_total"]
        )
        assert recall.locator('[data-testid="recall-player"] .card').all_text_contents() == [
            card_text(c) for c in natural.body["player"]
        ]
        assert "natural" in recall.locator('[data-testid="recall-flags"]').text_content()
        record = recall.locator('[data-testid="recall-record"]').text_content()
        assert f"#{natural.seq}" in record and setup.hashes[natural.seq] in record
        assert recall.locator('[data-testid="recall-time"]').text_content().endswith(" CET")
        settlements = setup.money("settlement", coup)
        wagers = setup.money("wager", coup)
        assert wagers and len(settlements) == len(wagers)
        shown = recall.locator('[data-testid="recall-wagers"] tr[data-seat]').evaluate_all(
            "es => es.map(e => [+e.dataset.seat, e.dataset.bet, +e.dataset.net])"
        )
        assert sorted(shown) == sorted([s["seat"], s["bet"], s["net"]] for s in settlements)
        assert "{" not in recall.inner_text()
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / f"pit-table-page-{width}x{height}.png"), full_page=True)
    finally:
        context.close()
