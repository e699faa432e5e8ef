"""The scoreboard page fits every screen from the Pi's 800x480 touch display to 3840x2160, landscape and
portrait, in a real headless Chromium.

The board is a real :class:`ScoreboardSink` serving a real table state: most of an eight-deck shoe dealt
(so every road has more columns than a small screen holds), a coup in progress and a standing alarm. At each size: no
scrollbar (the document is no larger than the viewport), the header, the alarm bar, the coup, the last
result, the counters and each of the five roads inside the viewport and not overlapping, no text cut off by its panel,
every text at least 10 CSS px, road cells square and never under their minimum, six rows of each road on
screen and the newest column visible. A screenshot of each size is saved as
``test-output/scoreboard-<width>x<height>.png``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from controller.board.scoreboard import ScoreboardSink
from controller.game.cards import DECK
from controller.game.table import CardDrawn, LinkChanged
from tests.browser.conftest import OUTPUT, inside, overlap
from tests.displays.test_scoreboard import Table, _coups_from, make_sink

pytestmark = pytest.mark.browser

SIZES = [(800, 480), (1280, 800), (1920, 1080), (1080, 1920), (3840, 2160), (480, 800), (1280, 720)]
COUPS = 70

#: Everything the test measures, read out by the page in one go.
MEASURE = """() => {
  const vw = window.innerWidth, vh = window.innerHeight;
  const box = (e) => { const r = e.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height, r: r.right, b: r.bottom}; };
  const parts = {};
  for (const id of ["coup", "last", "counters", "road-bead_plate", "road-big_road", "road-big_eye_boy",
                    "road-small_road", "road-cockroach_pig", "ask", "table-name", "limits", "shoe-number",
                    "notice"]) {
    parts[id] = box(document.querySelector('[data-testid="' + id + '"]'));
  }
  parts.header = box(document.querySelector("header.top"));
  const roads = {};
  for (const road of document.querySelectorAll(".road")) {
    const cells = [...road.querySelectorAll(".cell")];
    let newest = null, maxCol = -1;
    for (const c of cells) { const col = parseFloat(c.style.left); if (col >= maxCol) { maxCol = col; newest = c; } }
    roads[road.dataset.testid] = {box: box(road), cell: Number(road.dataset.cellPx),
      min: Number(road.dataset.minCell), cells: cells.length, newest: newest ? box(newest) : null};
  }
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode, e = node.parentElement;
    if (!node.textContent.trim() || !e.getClientRects().length) continue;
    const style = getComputedStyle(e);
    if (style.visibility === "hidden") continue;
    const range = document.createRange(); range.selectNodeContents(node);
    const r = range.getBoundingClientRect();
    const panel = e.closest(".panel, .road-box, .counters .c, header.top, .notice");
    texts.push({text: node.textContent.trim().slice(0, 30), size: parseFloat(style.fontSize), box: box(e),
                clip: panel ? box(panel) : null, ellipsis: style.textOverflow === "ellipsis",
                tx: {x: r.left, y: r.top, r: r.right, b: r.bottom}});
  }
  const de = document.documentElement;
  return {vw, vh, sw: de.scrollWidth, sh: de.scrollHeight, bw: document.body.scrollWidth,
          bh: document.body.scrollHeight, parts, roads, texts};
}"""


@pytest.fixture(scope="module")
def board() -> Iterator[ScoreboardSink]:
    sink = make_sink()
    table = Table(sink)
    deck = list(DECK) * 8
    random.Random(11).shuffle(deck)
    coups = list(_coups_from(deck))
    for coup in coups[:COUPS]:
        table.deal(" ".join(c.token for c in coup))
    for card in coups[COUPS][:3]:  # a coup in progress
        table.apply(CardDrawn(card))
    table.apply(LinkChanged(up=False))  # and an alarm: its bar takes room from the rest
    assert sink.snapshot()["alarms"]
    assert sink.start()
    try:
        yield sink
    finally:
        sink.close()


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_board_fits_the_screen(browser: Any, board: ScoreboardSink, width: int, height: int) -> None:
    host, port = board.address
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        page.goto(f"http://{host}:{port}/")
        page.wait_for_function(
            "n => document.querySelector('[data-testid=\"counter-coups\"]').textContent === String(n)", arg=COUPS
        )
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")  # settled
        m = page.evaluate(MEASURE)
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / f"scoreboard-{width}x{height}.png"))
    finally:
        page.close()
    viewport: dict[str, float] = {"x": 0, "y": 0, "r": width, "b": height}
    # No scrollbar: nothing reaches past the viewport.
    assert (m["vw"], m["vh"]) == (width, height)
    assert max(m["sw"], m["bw"]) <= width and max(m["sh"], m["bh"]) <= height, m
    parts = m["parts"]
    for name, rect in parts.items():
        assert rect["w"] > 0 and rect["h"] > 0, f"{name} is not shown"
        assert inside(rect, viewport), f"{name} {rect} is outside the {width}x{height} viewport"
    blocks = ["header", "notice", "coup", "last", "counters", "road-bead_plate", "road-big_road", "road-big_eye_boy",
              "road-small_road", "road-cockroach_pig", "ask"]  # fmt: skip
    for i, a in enumerate(blocks):
        for b in blocks[i + 1 :]:
            assert not overlap(parts[a], parts[b]), f"{a} {parts[a]} overlaps {b} {parts[b]}"
    # The roads: square cells no smaller than their minimum, six rows on screen, the newest column shown.
    for name, road in m["roads"].items():
        assert road["cell"] >= road["min"], name
        assert road["cell"] * 6 <= road["box"]["h"] + 1, f"{name}: six rows of {road['cell']} px do not fit"
        assert road["cells"] > 0, name
        assert inside(road["newest"], road["box"]), f"{name}: the newest column is off screen"
    # Every text legible (at least 10 CSS px) and not cut off by its panel (an ellipsis is allowed).
    for t in m["texts"]:
        assert t["size"] >= 10, f"{t['text']!r} is {t['size']} px"
        assert inside(t["box"], viewport), f"{t['text']!r} {t['box']} is off screen"
        if t["clip"] is not None and not t["ellipsis"]:
            assert inside(t["tx"], t["clip"], slack=1), f"{t['text']!r} {t['tx']} is cut off by {t['clip']}"
