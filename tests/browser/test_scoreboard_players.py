"""What a player reads on the scoreboard (issue 17, section 5), measured in a real headless Chromium at the
sizes the layout test uses, landscape and portrait.

A real :class:`ScoreboardSink` serves a real table state: a whole eight-deck shoe dealt to its end (the cut
card out, the last coup declared, the shoe closed), and beside it a bilingual board in mid-shoe with the
link to the shoe down. At each size: the limits of each wager labelled and not clipped; the B/P/T shares and
the streak as the snapshot says; the payout notes whole (``scrollWidth <= clientWidth``, the word "ladder"
nowhere) and the Dragon Bonus pays drawn as pairs, each pair in one box; the whole shoe's columns present in
each derived road where the screen is large enough, a "◀ N earlier columns" sign that says how many are off
screen where it is not; exactly one newest cell on every road, on the road's last cell and on screen; the ask
marks gone once the shoe has ended; no technical state ("LINK DOWN") but "Table closed"; in portrait no
dead space beside the payout guide; 莊 閒 和 drawn with real glyphs. Screenshots:
``test-output/scoreboard-ended-<w>x<h>.png`` and ``test-output/scoreboard-bilingual-<w>x<h>.png``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from controller.board.scoreboard import ScoreboardSink
from controller.game.cards import DECK
from controller.game.table import CardDrawn, CutCardOut, LinkChanged
from tests.browser.conftest import OUTPUT, inside
from tests.browser.test_scoreboard_layout import SIZES
from tests.displays.test_scoreboard import Table, _coups_from, make_sink

pytestmark = pytest.mark.browser

ROADS = ["bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig"]
DERIVED = ["big_eye_boy", "small_road", "cockroach_pig"]
#: Sizes with room for a whole shoe in every road (the smaller ones show the sign instead).
WHOLE_SHOE_SIZES = [(1280, 720), (1280, 800), (1920, 1080), (1080, 1920), (3840, 2160)]
#: Sizes that show the Dragon Bonus pays (on shorter and narrower screens the rule card by the table does).
LADDER_SIZES = [(1280, 800), (1920, 1080), (1080, 1920), (3840, 2160)]

READ = """() => {
  const box = (e) => { const r = e.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height, r: r.right, b: r.bottom}; };
  const q = (id) => document.querySelector('[data-testid="' + id + '"]');
  const shown = (e) => e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
  const roads = {};
  for (const road of document.querySelectorAll(".road")) {
    const name = road.dataset.testid.slice(5);
    const newest = [...road.querySelectorAll(".cell.newest")];
    const sign = q("earlier-" + name);
    roads[name] = {box: box(road), cells: road.querySelectorAll(".cell").length, cell: Number(road.dataset.cellPx),
      columns: Number(road.dataset.columns), hidden: Number(road.dataset.hidden),
      newest: newest.map((c) => ({box: box(c), left: parseFloat(c.style.left), top: parseFloat(c.style.top),
                                  outline: getComputedStyle(c).outlineStyle})),
      sign: sign && !sign.hidden ? sign.textContent : null, signShown: shown(sign)};
  }
  const clipped = [];
  for (const e of document.querySelectorAll(".lim b, .lim .k, .guide td, .counters b, .counters i, .ladder .step *")) {
    if (shown(e) && e.scrollWidth > e.clientWidth + 1) clipped.push(e.textContent);
  }
  const steps = [...document.querySelectorAll(".ladder .step")].map((s) => ({
    box: box(s), parts: [...s.children].map((c) => ({text: c.textContent, box: box(c)}))}));
  const limits = [...document.querySelectorAll(".lim")].filter(shown).map((e) =>
    ({key: e.dataset.testid, label: e.querySelector(".k").textContent, range: e.querySelector("b").textContent}));
  const marks = [...document.querySelectorAll('[data-testid="ask"] .mark')].map((m) => m.dataset.colour);
  const askRows = [...document.querySelectorAll('[data-testid="ask"] .ask-row')].map(shown);
  const bigPairs = [...document.querySelectorAll('[data-testid="road-big_road"] .cell')].map((e) =>
    [!!shown(e.querySelector(".pp")), !!shown(e.querySelector(".bp"))]);
  const text = (id) => q(id) ? q(id).textContent : null;
  return {roads, clipped, steps, limits, marks, askRows, bigPairs, body: document.body.innerText,
          ladderShown: shown(q("ladder")), ladder: box(q("ladder")), last: box(q("last")), coup: box(q("coup")),
          counters: box(q("counters")), bead: box(q("road-bead_plate")),
          viewport: {x: 0, y: 0, r: innerWidth, b: innerHeight},
          notice: q("notice").hidden ? null : q("notice").textContent,
          streak: text("streak"), percent: ["banker", "player", "tie"].map((k) => text("percent-" + k)),
          notes: [...document.querySelectorAll(".guide td.note, .guide td.pays")].filter(shown)
            .map((e) => e.textContent),
          left: box(document.querySelector(".left")),
          guideRows: [...document.querySelectorAll(".guide tr")].filter(shown).map((r) => box(r))};
}"""

#: Draws a character on a canvas in the page's own font and returns its pixels' checksum and ink count: two
#: different characters drawn with real glyphs differ, while missing glyphs are the same box ("tofu").
GLYPH = """(ch) => {
  const font = getComputedStyle(document.body).fontFamily;
  const c = document.createElement("canvas"); c.width = 64; c.height = 64;
  const g = c.getContext("2d"); g.fillStyle = "#fff"; g.fillRect(0, 0, 64, 64);
  g.fillStyle = "#000"; g.font = "48px " + font; g.textBaseline = "top"; g.fillText(ch, 4, 4);
  const px = g.getImageData(0, 0, 64, 64).data;
  let ink = 0, sum = 0;
  for (let i = 0; i < px.length; i += 4) { if (px[i] < 128) { ink += 1; sum = (sum * 31 + i) % 1000000007; } }
  return {ink, sum, width: g.measureText(ch).width};
}"""


def _deal_whole_shoe(sink: ScoreboardSink, seed: int) -> Table:
    """A whole eight-deck shoe to the cut card, then its last coup: the shoe ends (coup state shoe_closed)."""
    table = Table(sink)
    deck = list(DECK) * 8
    random.Random(seed).shuffle(deck)
    coups = list(_coups_from(deck[: len(deck) - 14]))
    for coup in coups[:-2]:
        table.deal(" ".join(c.token for c in coup))
    table.apply(CutCardOut())  # between coups: one more coup, and the shoe ends
    for coup in coups[-2:]:
        if sink.snapshot()["coup"]["state"] == "shoe_closed":
            break
        table.deal(" ".join(c.token for c in coup))
    assert sink.snapshot()["coup"]["state"] == "shoe_closed"
    return table


@pytest.fixture(scope="module")
def ended() -> Iterator[ScoreboardSink]:
    sink = make_sink()
    _deal_whole_shoe(sink, seed=11)
    assert sink.start()
    try:
        yield sink
    finally:
        sink.close()


@pytest.fixture(scope="module")
def bilingual() -> Iterator[ScoreboardSink]:
    sink = make_sink(bilingual=True)
    table = Table(sink)
    deck = list(DECK) * 8
    random.Random(3).shuffle(deck)
    coups = list(_coups_from(deck))
    for coup in coups[:40]:
        table.deal(" ".join(c.token for c in coup))
    table.apply(CardDrawn(coups[40][0]))
    table.apply(LinkChanged(up=False))
    assert sink.snapshot()["alarms"][0]["text"] == "LINK DOWN"
    assert sink.start()
    try:
        yield sink
    finally:
        sink.close()


def _open(browser: Any, sink: ScoreboardSink, width: int, height: int, shot: str) -> tuple[dict[str, Any], Any]:
    host, port = sink.address
    page = browser.new_page(viewport={"width": width, "height": height})
    coups = sink.snapshot()["counters"]["coups"]
    page.goto(f"http://{host}:{port}/")
    page.wait_for_function(
        "n => document.querySelector('[data-testid=\"counter-coups\"]').textContent === String(n)", arg=coups
    )
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    m = page.evaluate(READ)
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / f"scoreboard-{shot}-{width}x{height}.png"))
    return m, page


def _check_common(m: dict[str, Any], snapshot: dict[str, Any], width: int, height: int) -> None:
    # Nothing a player reads is clipped: limits, payout notes and pays, counters, the Dragon Bonus pays.
    assert m["clipped"] == [], m["clipped"]
    assert not any("ladder" in n.lower() for n in m["notes"]), m["notes"]
    # ... nor cut off at the bottom of its panel: every row of the payout guide shown lies inside the panel.
    for row in m["guideRows"]:
        assert row["b"] <= m["left"]["b"] + 1, (row, m["left"])
    # The limits: Banker and Player, then Tie and the pairs apart, each labelled (the widest screens show
    # every offered side wager's; every screen shows the main, Tie and pairs).
    keys = [x["key"] for x in m["limits"]]
    assert keys[:3] == ["limit-main", "limit-tie", "limit-pairs"], keys
    rows = {f"limit-{r['key']}": r for r in snapshot["table"]["limits"]["rows"]}
    for x in m["limits"]:
        row = rows[x["key"]]
        assert x["label"] == row["label"] and x["range"] == f"{row['minimum']}–{row['maximum']}", x
    # The shares of the shoe and the current streak, as the snapshot counts them.
    stats = snapshot["stats"]
    assert m["percent"] == [f"{stats['percent'][k]}%" for k in ("banker", "player", "tie")]
    streak = stats["streak"]
    assert streak is not None
    assert m["streak"].endswith(f"{streak['winner'].capitalize()} ×{streak['count']}"), m["streak"]
    # Every road: exactly one newest cell, outlined, on the road's last cell (the layout's last item) and on
    # screen; a sign that says how many columns are off to the left whenever some are.
    layout = snapshot["roads"]["layout"]
    for name in ROADS:
        road = m["roads"][name]
        assert road["cells"] == len(layout[name]), name
        assert len(road["newest"]) == 1, f"{name}: {len(road['newest'])} newest cells"
        newest = road["newest"][0]
        col, row = layout[name][-1][0], layout[name][-1][1]
        assert (newest["left"], newest["top"]) == (col * road["cell"], row * road["cell"]), name
        assert newest["outline"] != "none", name
        assert inside(newest["box"], road["box"], slack=4), f"{name}: the newest cell is off screen"
        if road["hidden"]:
            assert road["signShown"] and road["sign"].startswith(f"◀ {road['hidden']}"), (name, road["sign"])
        else:
            assert not road["signShown"], name
    # The Dragon Bonus pays, where shown: every way to win over its pay in one box (a pair never split),
    # inside the viewport.
    if m["ladderShown"]:
        ladder = snapshot["table"]["ladder"]
        assert [s["parts"][1]["text"] for s in m["steps"][1:]] == [r["pays"] for r in ladder]
        for step in m["steps"]:
            win, pays = step["parts"]
            assert inside(win["box"], step["box"], slack=1) and inside(pays["box"], step["box"], slack=1), step
            assert win["box"]["b"] <= pays["box"]["y"] + 1, step  # the way to win above its pay
        assert inside(m["ladder"], m["viewport"]), m["ladder"]
    elif (width, height) in LADDER_SIZES:
        pytest.fail(f"the Dragon Bonus pays are not shown at {width}x{height}")


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_a_whole_shoe_as_players_read_it(browser: Any, ended: ScoreboardSink, width: int, height: int) -> None:
    snapshot = ended.snapshot()
    m, page = _open(browser, ended, width, height, "ended")
    page.close()
    _check_common(m, snapshot, width, height)
    # The shoe has ended: no ask marks (there is no next coup to ask about); the players read "Shoe change".
    assert m["marks"] and set(m["marks"]) == {"none"}, m["marks"]
    assert m["askRows"] == [False, False], "the ask box still shows its B and P with nothing to ask"
    # The big road's pair dots: those of the coups each cell stands for (a shoe of 80 coups has some).
    pairs = [[bool(c[4]), bool(c[5])] for c in snapshot["roads"]["layout"]["big_road"]]
    assert any(any(p) for p in pairs), "the shoe dealt no pair: the test would prove nothing"
    assert m["bigPairs"] and m["bigPairs"] == pairs[-len(m["bigPairs"]) :]
    assert m["notice"] == "Shoe change"
    # A whole shoe's columns in every road (the bead plate, the big road and each derived road) where the
    # screen has room for it.
    layout = snapshot["roads"]["layout"]
    for name in ROADS:
        road = m["roads"][name]
        columns = max(c[0] for c in layout[name]) + 1
        assert columns >= 14, f"{name}: only {columns} columns: not a whole shoe"
        if (width, height) in WHOLE_SHOE_SIZES:
            assert road["hidden"] == 0 and road["columns"] >= columns, (name, road["columns"], columns)
    # Portrait: no dead space beside the payout guide (the counters fill the column under the coup).
    if height > width and width > 720:
        assert m["last"]["b"] - m["counters"]["b"] < 40, (m["last"], m["counters"])
        assert m["bead"]["y"] - m["last"]["b"] < 60, (m["bead"], m["last"])


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_bilingual_board_with_the_link_down(browser: Any, bilingual: ScoreboardSink, width: int, height: int) -> None:
    snapshot = bilingual.snapshot()
    m, page = _open(browser, bilingual, width, height, "bilingual")
    try:
        # 莊 閒 和 drawn with real glyphs: ink, and two different characters drawn differently (missing
        # glyphs would all be the same box).
        glyphs = {ch: page.evaluate(GLYPH, ch) for ch in "莊閒和"}
        labels = {k: page.text_content(f'[data-testid="label-counter-{k}"]') for k in ("banker", "player", "tie")}
        guide = {k: page.text_content(f'[data-testid="payouts"] tr[data-bet="{k}"] td.bet') for k in ("banker", "tie")}
        beads = page.eval_on_selector_all('[data-testid="road-bead_plate"] .cell', "els => els.map(e => e.textContent)")
        label_width = page.evaluate(
            "() => document.querySelector('[data-testid=\"label-counter-banker\"]').getBoundingClientRect().width"
        )
    finally:
        page.close()
    _check_common(m, snapshot, width, height)
    assert labels == {"banker": "莊 Banker", "player": "閒 Player", "tie": "和 Tie"}
    assert guide == {"banker": "莊 Banker", "tie": "和 Tie"}
    assert label_width > 0
    assert all(g["ink"] > 50 and g["width"] > 0 for g in glyphs.values()), glyphs
    assert len({g["sum"] for g in glyphs.values()}) == 3, f"the CJK glyphs are missing (tofu): {glyphs}"
    assert set(beads) <= {"莊", "閒", "和"} and beads
    # The link is down: the players read "Table closed", never the technical state.
    assert m["notice"] == "Table closed"
    assert "LINK DOWN" not in m["body"].upper()
    # Mid-shoe, the ask marks are there (so the test of their absence after the shoe's end means something).
    assert any(c != "none" for c in m["marks"]), m["marks"]
    assert m["askRows"] == [True, True]


def test_a_board_that_loses_the_table_says_table_closed(browser: Any) -> None:
    """The page's event stream gone (the board's server stopped) for more than a few seconds: the players read
    "Table closed" (never RECONNECTING or any technical word); the picture they had stays."""
    sink = make_sink()
    table = Table(sink)
    table.deal("2H 3S AD KC 8D")
    assert sink.start()
    host, port = sink.address
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    try:
        page.goto(f"http://{host}:{port}/")
        page.wait_for_function("() => document.querySelector('[data-testid=\"counter-coups\"]').textContent === '1'")
        assert page.is_hidden('[data-testid="notice"]')
        sink.close()
        page.wait_for_function(
            "() => document.querySelector('[data-testid=\"notice\"]').textContent === 'Table closed'", timeout=20_000
        )
        body = page.inner_text("body").upper()
        assert "RECONNECTING" not in body and "LINK" not in body
        assert page.text_content('[data-testid="counter-banker"]') == "1"  # the last picture stays
    finally:
        page.close()
        sink.close()
