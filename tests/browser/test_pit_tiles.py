"""The pit's tiles as a pit boss reads them, in headless Chromium at 1920x1080 and 800x480.

Four tables deal a real journal (``shoe-controller demo`` with its seven simulated players: real wagers,
settlements and advantage flags) into a real :class:`floor.pit.Pit` through :meth:`Pit.on_message` (the broker
callback's entry): one early in its shoe, two in the middle, one with the whole shoe on its big road. Sixty
tables with a whole shoe each fill one screen. Measured on the page: the big road's cells are at least the
legible minimum and every column of the shoe is on the road (the newest in view, the 6th row inside the box),
the tile's fields are labelled and none of its text overlaps another or leaves the tile, this shift's handle
and win on the tile equal the table's own account (``shoe-controller settle``'s fold of the same records), the
alert feed shows words and local time first and the record only when asked. Screenshots go to
test-output/pit-tiles-*.png.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from controller.game.records import TableRecord
from controller.game.roads import big_road_grid, compute_roads
from floor.archive import Archive
from floor.pit import Pit
from floor.shifts import ShiftPlan, parse_time
from tests.browser.conftest import OUTPUT, inside, overlap
from tests.pitload import SimTable, demo_journal, journal_records

pytestmark = pytest.mark.browser

#: The road's legible minimum (CSS px): the page's MIN_CELL.
MIN_CELL = 9
#: The tables' limits in cents, as the link puts them in the state.
LIMITS = {"minimum": 2500, "maximum": 500000, "side_minimum": 500, "side_maximum": 50000}
#: How far each of the four tables deals into the shoe (in coups); T3 deals the whole shoe.
DEALT = {"T1": 12, "T2": 40, "T3": 200, "T4": 55}

MEASURE = """() => {
  const box = (e) => { const r = e.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height, r: r.right, b: r.bottom}; };
  const tiles = [...document.querySelectorAll(".tile")].map((t) => {
    const road = t.querySelector(".mini");
    const cells = [...road.querySelectorAll(".c")];
    const leaves = [...t.querySelectorAll("*")].filter((e) => [...e.childNodes].some((n) => n.nodeType === 3 &&
      n.textContent.trim()) && e.getClientRects().length && !e.closest(".mini"));
    return {table: t.dataset.table, box: box(t), road: box(road), columns: +road.dataset.columns,
      pairs: cells.map((c) => [!!c.querySelector(".pair.player"), !!c.querySelector(".pair.banker")]),
      cell: cells.length ? box(cells[0]).w : 0, rows: Math.max(-1, ...cells.map((c) => Math.round(
        (c.getBoundingClientRect().top - road.querySelector(".grid").getBoundingClientRect().top) / box(c).h))) + 1,
      newest: cells.length ? box(t.querySelector(".c.newest")) : null,
      bottom: cells.filter((c) => c.style.top.includes("* 5")).map(box),
      texts: leaves.map((e) => ({text: e.textContent.trim().slice(0, 30), box: box(e),
        line: e.closest(".line") ? box(e.closest(".line")) : null, size: parseFloat(getComputedStyle(e).fontSize)})),
      fields: Object.fromEntries([...t.querySelectorAll(".f")].filter((f) => f.getClientRects().length).map((f) =>
        [f.querySelector(".k").textContent, f.querySelector(".v").textContent])),
      money: t.querySelector(".money").dataset,
      limits: t.querySelector(".limits") ? t.querySelector(".limits").textContent : null};
  });
  const de = document.documentElement;
  return {tiles, vw: innerWidth, vh: innerHeight, sw: de.scrollWidth, sh: de.scrollHeight,
    feed: box(document.querySelector(".feed"))};
}"""


class Floor4:
    """Four tables dealing one real journal, each as far as DEALT says, into one pit."""

    def __init__(self, tmp: Path) -> None:
        journal = demo_journal(tmp / "journal.db", shoes=1)
        self.url = f"sqlite:///{tmp}/archive.db"
        Archive(self.url).close()
        self.plan = ShiftPlan.parse()
        records = journal_records(journal, "T1")
        self.now = parse_time(records[-1].at)
        wall = int(self.now.timestamp() * 1000)
        self.pit = Pit(self.url, wall_ms=lambda: wall, plan=self.plan)
        self.sims: dict[str, SimTable] = {}
        for table, coups in DEALT.items():
            sim = SimTable("s1", table, journal_records(journal, table))
            self.sims[table] = sim
            self.pit.on_message(sim.topic("status"), b"online")
            dealt = 0
            while sim.sent < len(sim.records) and dealt < coups:
                r = sim.records[sim.sent]
                sim.sent += 1
                sim.follow(r)
                self.pit.on_message(sim.topic("record"), r.to_json().encode())
                if r.kind == "coup" and r.body.get("declared"):
                    dealt += 1
                    self.pit.on_message(sim.topic("state"), json.dumps(sim.state()).encode())
            state = {**sim.state(), "limits": LIMITS}  # as the table's link says them
            self.pit.on_message(sim.topic("state"), json.dumps(state).encode())
        for i, kind in enumerate(("dealer_errors", "advantage", "repeated_shoe")):
            record = self.sims["T2"].records[5].to_dict()
            item = {"v": 1, "id": 10 + i, "at": f"2026-11-30T12:00:0{i}.000Z", "site": "s1", "table": "T2",
                    "seq": record["seq"], "kind": kind, "detail": f"the {kind.replace('_', ' ')} said in words",
                    "record": record, "extra": {}}  # fmt: skip
            self.pit.on_message("baccarat/s1/floor/alert", json.dumps(item).encode())
        self.pit.start(("127.0.0.1", 0), None)
        host, port = self.pit.address
        self.base = f"http://{host}:{port}"

    def sent(self, table: str) -> list[TableRecord]:
        sim = self.sims[table]
        return sim.records[: sim.sent]


@pytest.fixture(scope="module")
def floor4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Floor4]:
    f = Floor4(tmp_path_factory.mktemp("pit4"))
    try:
        yield f
    finally:
        f.pit.close()


def own_account(records: list[TableRecord], plan: ShiftPlan, now: datetime) -> tuple[int, int]:
    """This shift's handle and the house's win from the table's own settlement and commission records."""
    shift = plan.shift_of(now)
    handle = win = 0
    for r in records:
        if not shift.contains(parse_time(r.at)):
            continue
        if r.kind == "settlement":
            handle += r.body["stake"]
            win -= r.body["net"]
        elif r.kind == "commission":
            win += r.body["collected"]
    return handle, win


def road_columns(bead: str) -> int:
    return max((c for c, _r, _cell in big_road_grid(compute_roads(bead).big_road)), default=-1) + 1


def measure(browser: Any, base: str, width: int, height: int, name: str, zone: str = "UTC") -> dict[str, Any]:
    context = browser.new_context(viewport={"width": width, "height": height}, timezone_id=zone)
    page = context.new_page()
    try:
        page.goto(base + "/")
        page.wait_for_function(
            "() => window.pit && window.pit.renders > 0 && document.querySelectorAll('.tile').length"
        )
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        m = dict(page.evaluate(MEASURE))
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / f"pit-tiles-{name}-{width}x{height}.png"))
        m["feed_text"] = page.locator('[data-testid="feed"]').inner_text()
        total = page.locator('[data-testid="shift-total"]')
        m["shift_total"] = total.evaluate(
            "e => ({hidden: e.hidden, data: {...e.dataset}, text: e.innerText, right: e.getBoundingClientRect().right,"
            " width: e.getBoundingClientRect().width})"
        )
        m["feed_items"] = page.locator('[data-testid="feed"] li').evaluate_all(
            "es => es.map(e => [e.dataset.kind, e.querySelector('.kind').textContent,"
            " e.querySelector('.when').textContent])"
        )
        m["record_shown"] = None
        if page.locator('[data-testid="feed"] li details').count():
            details = page.locator('[data-testid="feed"] li details').first
            details.locator("summary").click()
            m["record_shown"] = details.locator("pre").inner_text()
    finally:
        context.close()
    return m


def check_tiles(m: dict[str, Any], width: int) -> None:
    for t in m["tiles"]:
        name = t["table"]
        assert t["cell"] >= MIN_CELL, f"{name}: road cells of {t['cell']} px"
        assert t["box"]["x"] >= 0 and t["box"]["r"] <= width, f"{name} is wider than the screen"
        assert t["newest"] is not None and inside(t["newest"], t["road"], slack=1), f"{name}: newest result not in view"
        for cell in t["bottom"]:  # the 6th row of the road, where the newest column's tail runs
            assert cell["b"] <= t["road"]["b"] + 1, f"{name}: the road's 6th row is cut off"
        assert inside(t["road"], t["box"], slack=1), f"{name}: its road leaves the tile"
        texts = t["texts"]
        for i, a in enumerate(texts):
            assert a["size"] >= 10, f"{name}: {a['text']!r} is {a['size']} px"
            assert inside(a["box"], t["box"], slack=1), f"{name}: {a['text']!r} leaves its tile"
            if a["line"] is not None:  # a line clips what does not fit
                assert inside(a["box"], a["line"], slack=1), f"{name}: {a['text']!r} is cut off by its line"
            assert not overlap(a["box"], t["road"]), f"{name}: {a['text']!r} lies on the road"
            for b in texts[i + 1 :]:
                nested = inside(a["box"], b["box"]) or inside(b["box"], a["box"])
                assert nested or not overlap(a["box"], b["box"]), f"{name}: {a['text']!r} overlaps {b['text']!r}"


@pytest.mark.parametrize("size", [(1920, 1080), (800, 480)], ids=["1920x1080", "800x480"])
def test_four_tables_dealing(browser: Any, floor4: Floor4, size: tuple[int, int]) -> None:
    width, height = size
    m = measure(browser, floor4.base, width, height, "4", zone="Europe/Berlin")
    assert len(m["tiles"]) == 4
    check_tiles(m, width)
    if width == 1920:
        assert max(m["sw"], m["vw"]) <= 1920 and m["sh"] <= 1080, "the page scrolls"
        used = sum(t["box"]["w"] * t["box"]["h"] for t in m["tiles"])
        assert used >= 0.6 * (1920 - 330) * 1040, "the tiles leave most of the screen empty"
    for t in m["tiles"]:
        sim = floor4.sims[t["table"]]
        assert t["columns"] == road_columns(sim.bead), f"{t['table']}: not every column of the shoe is on its road"
        cells = big_road_grid(compute_roads(sim.shoe_coups()).big_road)
        assert t["pairs"] == [[cell.player_pair, cell.banker_pair] for _c, _r, cell in cells], "the pair dots"
        state = sim.state()
        assert t["fields"]["Shoe"] == str(state["shoe"]) and t["fields"]["Coup"] == str(state["coup"])
        assert t["fields"]["Left"] == str(state["cards_remaining"])
        counts = state["counts"]
        assert (t["fields"]["B"], t["fields"]["P"], t["fields"]["T"]) == tuple(
            str(counts[w]) for w in ("banker", "player", "tie")
        )
        assert t["limits"] == "$25–5,000", "the table's limits on its tile"
        handle, win = own_account(floor4.sent(t["table"]), floor4.plan, floor4.now)
        assert handle > 0, "the demo's players wagered"
        assert (int(t["money"]["handle"]), int(t["money"]["win"])) == (handle, win)
    # the floor's shift in the header: the four tables' own accounts summed, and on screen
    accounts = [own_account(floor4.sent(t), floor4.plan, floor4.now) for t in floor4.sims]
    total = m["shift_total"]
    handle, win = sum(h for h, _w in accounts), sum(w for _h, w in accounts)
    assert not total["hidden"] and total["data"]["tables"] == "4"
    assert (int(total["data"]["handle"]), int(total["data"]["win"])) == (handle, win)
    assert f"{100 * win / handle:.1f}%" in total["text"] and "Hold" in total["text"]
    assert total["width"] > 0 and total["right"] <= width, "the floor's shift total is cut off"
    whole = next(t for t in m["tiles"] if t["table"] == "T3")
    assert whole["columns"] >= 20, "a whole shoe's big road"
    assert any(any(p) for p in whole["pairs"]), "a whole shoe with no pair: the dots were not tried"
    # the feed: the kind in words and the local time with its zone; the record only when asked
    assert [k for k, _w, _t in m["feed_items"]] == ["repeated_shoe", "advantage", "dealer_errors"]
    assert [w for _k, w, _t in m["feed_items"]] == ["Repeated shoe", "Advantage", "Dealer errors"]
    assert m["feed_items"][0][2] == "2026-11-30 13:00:02 CET"
    assert "{" not in m["feed_text"] and '"' not in m["feed_text"], "raw JSON in the feed before it is asked for"
    assert m["record_shown"] is not None and '"kind"' in m["record_shown"]


def _state60(table: str, bead: str) -> bytes:
    return json.dumps({
        "v": 1, "site": "s1", "table": table, "at": "2026-11-30T12:00:00.000Z", "shoe": 7, "coup": len(bead) + 1,
        "due": "deal", "cards_dealt": 0, "cards_remaining": 416 - 4 * len(bead), "cut_card_out": False,
        "last_coup": False, "alarms": {"3": ["misdraw"], "7": ["link_down"]}.get(table[-1], []),
        "counts": {"coups": len(bead), "banker": bead.count("B"), "player": bead.count("P"), "tie": bead.count("T"),
                   "natural": 0, "player_pair": 0, "banker_pair": 0},
        "roads": {"bead": bead}, "journal": {"head": 0, "acked": 0}, "player": [], "banker": [], "result": None,
    }).encode()  # fmt: skip


def test_sixty_tables_on_one_screen(browser: Any, floor4: Floor4, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    pit = Pit(url, wall_ms=floor4.pit.wall_ms, plan=floor4.plan)
    rng = random.Random(60)
    records = floor4.sent("T3")
    beads = {}
    try:
        for i in range(60):
            name = f"Table-{i + 1:02d}" if i % 9 else f"VIP-Salon-Baccarat-{i + 1:02d}"
            beads[name] = "".join(rng.choice("BBBBPPPPT") for _ in range(rng.randrange(60, 86)))
            pit.on_message(f"baccarat/s1/{name}/status", b"online" if i % 11 else b"offline")
            for r in records[:: 1 if i == 0 else 40]:  # a shoe start and some of the money
                pit.on_message(f"baccarat/s1/{name}/record", replace(r, table=name).to_json().encode())
            pit.on_message(f"baccarat/s1/{name}/state", _state60(name, beads[name]))
        pit.start(("127.0.0.1", 0), None)
        host, port = pit.address
        m = measure(browser, f"http://{host}:{port}", 1920, 1080, "60")
    finally:
        pit.close()
    assert len(m["tiles"]) == 60
    assert m["sh"] <= 1080 and m["sw"] <= 1920, "the page scrolls"
    check_tiles(m, 1920)
    for t in m["tiles"]:
        assert t["columns"] == road_columns(beads[t["table"]]), f"{t['table']}: the shoe's columns are not all there"
        assert t["box"]["r"] <= m["feed"]["x"] + 0.5
