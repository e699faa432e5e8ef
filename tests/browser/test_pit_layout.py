"""The pit page holds 1 to 60 tables on one 1920x1080 screen without scrolling, and stays legible at 800x480.

A real :class:`floor.pit.Pit` serves the page; the tables' state, records and the floor's alerts reach it
through :meth:`Pit.on_message` (the broker callback's entry), each table with most of a shoe on its big road,
some with alarms and advantage flags, and a feed of 30 alerts. At 1920x1080: no scrollbar, every tile inside
the viewport and none overlapping another or the feed, every text at least 10 CSS px and inside its tile (an
ellipsis allowed), the big road of each tile on screen. At 800x480: scrolling allowed, but nothing wider than
the screen and no text under 10 px. Screenshots go to test-output/pit-<n>-<width>x<height>.png.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from floor.archive import Archive
from floor.pit import Pit
from tests.browser.conftest import OUTPUT, inside, overlap

pytestmark = pytest.mark.browser

MEASURE = """() => {
  const box = (e) => { const r = e.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height, r: r.right, b: r.bottom}; };
  const tiles = [...document.querySelectorAll(".tile")].map((t) => ({table: t.dataset.table, box: box(t),
    road: box(t.querySelector(".mini")), cells: t.querySelectorAll(".mini .c").length}));
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode, e = node.parentElement;
    if (!node.textContent.trim() || !e.getClientRects().length || e.closest(".mini")) continue;  // the road scrolls
    const style = getComputedStyle(e);
    const tile = e.closest(".tile");
    texts.push({text: node.textContent.trim().slice(0, 30), size: parseFloat(style.fontSize), box: box(e),
                tile: tile ? box(tile) : null, feed: !!e.closest(".feed")});
  }
  const de = document.documentElement;
  return {vw: window.innerWidth, vh: window.innerHeight, sw: de.scrollWidth, sh: de.scrollHeight,
          bw: document.body.scrollWidth, bh: document.body.scrollHeight, tiles, texts,
          feed: box(document.querySelector(".feed"))};
}"""


def _state(table: str, rng: random.Random) -> bytes:
    bead = "".join(rng.choice("BBBBPPPPT") for _ in range(rng.randrange(20, 80)))
    alarms = ["misdraw"] if rng.random() < 0.15 else []
    return json.dumps(
        {
            "v": 1,
            "site": "s1",
            "table": table,
            "at": "2026-11-30T12:00:00.000Z",
            "shoe": 7,
            "coup": len(bead) + 1,
            "due": "deal",
            "cards_dealt": 0,
            "cards_remaining": 400 - 5 * len(bead),
            "cut_card_out": False,
            "last_coup": False,
            "alarms": alarms,
            "counts": {
                "coups": len(bead),
                "banker": bead.count("B"),
                "player": bead.count("P"),
                "tie": bead.count("T"),
                "natural": 0,
                "player_pair": 0,
                "banker_pair": 0,
            },
            "roads": {"bead": bead},
            "journal": {"head": 0, "acked": 0},
            "player": [],
            "banker": [],
            "result": None,
        }
    ).encode()


def _record(table: str, rng: random.Random) -> bytes:
    body = {"shoe": 7, "coup": 40, "declared": True, "void": False, "misdraw": False, "dummy_hand": [],
            "winner": "banker", "player": ["9H", "QS", "4C"], "banker": ["KD", "8C"], "player_total": 3,
            "banker_total": 8, "natural": True, "natural_hand": "banker", "player_pair": False,
            "banker_pair": False, "player_three_cards": True, "banker_three_cards": False, "margin": 5}  # fmt: skip
    return json.dumps(_envelope(table, "coup", 40, body)).encode()


def _envelope(table: str, kind: str, seq: int, body: dict[str, Any]) -> dict[str, Any]:
    """A table record as the table's journal sends it (the pit refuses anything less)."""
    return {
        "v": 3, "table": table, "seq": seq, "kind": kind, "at": "2026-11-30T12:00:00.000Z", "session": 1,
        "number": None, "cause": None, "prev": "0" * 64, "hash": "1" * 64, "body": body,
    }  # fmt: skip


def _pit(tmp: Path, n: int) -> Pit:
    url = f"sqlite:///{tmp}/archive.db"
    Archive(url).close()
    pit = Pit(url)
    rng = random.Random(n)
    for i in range(n):
        name = f"T{i + 1:02d}" if i % 7 else f"VIP-Salon-Baccarat-{i + 1:02d}"  # table ids, a long one too
        pit.on_message(f"baccarat/s1/{name}/status", b"online" if i % 9 else b"offline")
        pit.on_message(f"baccarat/s1/{name}/state", _state(name, rng))
        pit.on_message(f"baccarat/s1/{name}/record", _record(name, rng))
        if i % 10 == 3:
            adv = _envelope(name, "advantage", 10, {"shoe": 7, "coup": 40, "bet": "dragon_bonus_player", "ev": 0.021})
            item = {"v": 1, "id": i, "at": "2026-11-30T12:00:00.000Z", "site": "s1", "table": name, "seq": 10,
                    "kind": "advantage", "detail": "dragon_bonus_player EV +2.10% at coup 40", "record": adv,
                    "extra": {}}  # fmt: skip
            pit.on_message("baccarat/s1/floor/alert", json.dumps(item).encode())
    for i in range(30 - len(pit.feed)):
        item = {"v": 1, "id": 100 + i, "at": "2026-11-30T12:01:00.000Z", "site": "s1", "table": "T02",
                "seq": 50 + i, "kind": "dealer_errors", "detail": "5 misdraws in the last hour (floor: 0.4)",
                "record": None, "extra": {}}  # fmt: skip
        pit.on_message("baccarat/s1/floor/alert", json.dumps(item).encode())
    assert not pit.stats["refused"] and not pit.stats["alert_records_dropped"], f"messages refused: {pit.stats}"
    pit.start(("127.0.0.1", 0), None)
    return pit


@pytest.fixture(scope="module", params=[60, 1], ids=["60-tables", "1-table"])
def pit(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pit]:
    p = _pit(tmp_path_factory.mktemp("pit"), request.param)
    try:
        yield p
    finally:
        p.close()


def _measure(browser: Any, pit: Pit, width: int, height: int) -> dict[str, Any]:
    host, port = pit.address
    n = len(pit.tiles)
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        page.goto(f"http://{host}:{port}/")
        page.wait_for_function("n => document.querySelectorAll('.tile').length === n", arg=n)
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        m = dict(page.evaluate(MEASURE))
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / f"pit-{n}-{width}x{height}.png"))
    finally:
        page.close()
    return m


def test_every_table_on_one_full_hd_screen(browser: Any, pit: Pit) -> None:
    m = _measure(browser, pit, 1920, 1080)
    viewport: dict[str, float] = {"x": 0, "y": 0, "r": 1920, "b": 1080}
    assert max(m["sw"], m["bw"]) <= 1920 and max(m["sh"], m["bh"]) <= 1080, "the page scrolls"
    tiles = m["tiles"]
    assert len(tiles) == len(pit.tiles)
    for i, t in enumerate(tiles):
        assert inside(t["box"], viewport), f"{t['table']} {t['box']} is off screen"
        assert not overlap(t["box"], m["feed"]), f"{t['table']} overlaps the feed"
        assert t["box"]["h"] >= 90 and t["box"]["w"] >= 150, f"{t['table']} is too small to read: {t['box']}"
        assert t["cells"] > 0 and inside(t["road"], t["box"], slack=1), f"{t['table']}: its big road is cut off"
        for u in tiles[i + 1 :]:
            assert not overlap(t["box"], u["box"]), f"{t['table']} overlaps {u['table']}"
    for text in m["texts"]:
        assert text["size"] >= 10, f"{text['text']!r} is {text['size']} px"
        if text["tile"] is not None:
            assert inside(text["box"], text["tile"], slack=1), f"{text['text']!r} is cut off by its tile"
        elif not text["feed"]:  # the feed scrolls inside its own column
            assert inside(text["box"], viewport), f"{text['text']!r} is off screen"


def test_legible_on_the_800x480_screen(browser: Any, pit: Pit) -> None:
    m = _measure(browser, pit, 800, 480)
    assert max(m["sw"], m["bw"]) <= 800, "the page scrolls sideways"
    for t in m["tiles"]:
        assert t["box"]["x"] >= 0 and t["box"]["r"] <= 800, t
    small = [t for t in m["texts"] if t["size"] < 10]
    assert not small, small
