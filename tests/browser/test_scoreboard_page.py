"""The scoreboard page in a real headless Chromium while the software shoe deals through the daemon.

Real processes: the simulated shoe (``hw_sim``) on a pty and the daemon with the scoreboard on. The page's
DOM is checked against the journal (what the daemon recorded) and the simulator's record of truth (what
really happened): totals, result, counters, road cells and their colours. In a squeeze game a
MutationObserver hands every DOM state to the test the moment it changes, and no card of a coup may appear
before the simulator's declare of that coup. The same detector, run on an ordinary game, must find cards
before their declare: that proves it would catch a leak.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from controller.game.roads import DERIVED_ROADS, compute_roads
from tests.browser.conftest import OUTPUT, start_scoreboard_daemon, wait_state, write_config
from tests.e2e.harness import Harness
from tests.servers import free_port

pytestmark = pytest.mark.browser

#: Hands every DOM change to the test (``window.__capture``), with the parts that matter read out.
OBSERVER = """
window.addEventListener("DOMContentLoaded", () => {
  const text = (id) => {
    const e = document.querySelector('[data-testid="' + id + '"]');
    return e ? e.textContent : "";
  };
  const send = () => window.__capture({
    html: document.body.innerHTML,
    state: document.querySelector('[data-testid="coup"]').dataset.state,
    player_total: text("player-total"), banker_total: text("banker-total"), due: text("due"),
    version: document.body.dataset.version,
  });
  new MutationObserver(send).observe(document.body, {subtree: true, childList: true, characterData: true,
                                                     attributes: true});
});
"""
CARD = re.compile(r'data-card="([0-9TJQKA]{1,2}[SHDC])"')


def _declared(truth: Path) -> set[tuple[int, int]]:
    """The (shoe, coup) pairs the simulated dealer has declared so far, from the record of truth."""
    import json

    out: set[tuple[int, int]] = set()
    if not truth.exists():
        return out
    for line in truth.read_text().splitlines():
        if not line.endswith("}"):
            continue
        event = json.loads(line)
        if event["event"] == "declare" and not event.get("early"):
            out.add((int(event["shoe"]), int(event["coup"])))
    return out


def _run_shoe(browser: Any, harness: Harness, tmp: Path, reveal: str, seed: int) -> tuple[Any, list[Any], list[Any]]:
    """Deal one single-deck shoe with the page open; return the page, the DOM captures (each with the
    declares the truth showed when it arrived) and the journal's coups."""
    port = free_port()
    config = write_config(tmp, port, reveal)
    harness.start_sim("--decks", "1", "--shoes", "1", seed=seed, pace="0.12")
    start_scoreboard_daemon(harness, config)
    wait_state(port)
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    captures: list[tuple[dict[str, Any], set[tuple[int, int]]]] = []
    page.expose_function("__capture", lambda c: captures.append((c, _declared(harness.truth))))
    page.add_init_script(OBSERVER)
    page.goto(f"http://127.0.0.1:{port}/")
    assert harness.sim is not None
    deadline = time.monotonic() + 120
    while harness.sim.poll() is None:  # let the page's callbacks through while the shoe deals
        assert time.monotonic() < deadline, "the shoe took too long"
        page.wait_for_timeout(30)
    declared = _declared(harness.truth)
    coups: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        coups = [c for c in harness.journal_coups() if c["declared"]]
        if len(coups) >= len(declared):
            break
        page.wait_for_timeout(100)
    assert {(c["shoe"], c["coup"]) for c in coups} == declared  # the journal agrees with the truth
    page.wait_for_function(
        "n => document.querySelector('[data-testid=\"counter-coups\"]').textContent === String(n)", arg=len(coups)
    )
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / f"scoreboard-{reveal}.png"))
    return page, captures, coups


def _cells(page: Any, road: str, attr: str) -> list[str]:
    return list(
        page.eval_on_selector_all(f'[data-testid="road-{road}"] .cell', f"els => els.map(e => e.dataset.{attr})")
    )


def _text(page: Any, testid: str) -> str:
    return str(page.text_content(f'[data-testid="{testid}"]')).strip()


def _check_against_journal(page: Any, coups: list[dict[str, Any]]) -> None:
    winners = [c["winner"] for c in coups]
    last = coups[-1]
    for key in ("banker", "player", "tie"):
        assert _text(page, f"counter-{key}") == str(winners.count(key)), key
    assert _text(page, "counter-player_pair") == str(sum(c["player_pair"] for c in coups))
    assert _text(page, "counter-banker_pair") == str(sum(c["banker_pair"] for c in coups))
    assert _text(page, "counter-natural") == str(sum(bool(c["natural"]) for c in coups))
    assert page.get_attribute('[data-testid="last"]', "data-winner") == last["winner"]
    assert _text(page, "last-player-total") == str(last["player_total"])
    assert _text(page, "last-banker-total") == str(last["banker_total"])
    shown = page.eval_on_selector_all('[data-testid="last-player-cards"] .card', "els => els.map(e => e.dataset.card)")
    assert shown == last["player"]
    assert _cells(page, "bead_plate", "winner") == winners
    big = [w for w in winners if w != "tie"]
    assert _cells(page, "big_road", "winner") == big
    if big:
        assert sum(int(t) for t in _cells(page, "big_road", "ties")) == winners.count("tie")
    # the pair dots on the big road: those of the coups each cell stands for (its win and its ties)
    dots = page.eval_on_selector_all(
        '[data-testid="road-big_road"] .cell',
        "els => els.map(e => [!!e.querySelector('.pp'), !!e.querySelector('.bp')])",
    )
    assert dots == [[c.player_pair, c.banker_pair] for col in compute_roads(coups).big_road for c in col]
    roads = compute_roads(winners)
    for name, k in DERIVED_ROADS:
        expected = [mark.value for column in roads.derived(k) for mark in column]
        assert _cells(page, name, "colour") == expected, name
    # The ask marks ask about the next coup: once the shoe has ended there is none, and they are gone.
    ended = page.get_attribute('[data-testid="coup"]', "data-state") == "shoe_closed"
    for side, marks in roads.ask.to_dict().items():
        shown = page.eval_on_selector_all(
            f'[data-testid="ask-{side}"] .mark',
            "els => Object.fromEntries(els.map(e => [e.dataset.road, e.dataset.colour]))",
        )
        assert shown == {name: "none" if ended else colour or "none" for name, colour in marks.items()}, side
    assert _text(page, "table-name") == "Browser Table"


def _card_coups(coups: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Card token -> the (shoe, coup) it was dealt to (one deck: every token once)."""
    return {t: (c["shoe"], c["coup"]) for c in coups for t in (*c["player"], *c["banker"])}


def _early_cards(captures: list[Any], coups: list[dict[str, Any]]) -> list[str]:
    """Cards that were in the DOM before the truth showed their coup declared."""
    owner = _card_coups(coups)
    early = []
    for capture, declared in captures:
        for token in CARD.findall(capture["html"]):
            coup = owner.get(token)
            if coup is not None and coup not in declared:
                early.append(f"{token} of coup {coup[1]} at version {capture['version']}")
    return early


def test_page_follows_the_shoe_on_read(browser: Any, harness: Harness, tmp_path: Path) -> None:
    page, captures, coups = _run_shoe(browser, harness, tmp_path, "on_read", seed=5)
    try:
        assert len(coups) >= 5
        _check_against_journal(page, coups)
        # The leak detector works: in an ordinary game the cards are on the screen before the declare.
        assert _early_cards(captures, coups)
        assert any(c["state"] in ("dealing", "complete") and c["player_total"] for c, _ in captures)
    finally:
        page.close()


def test_squeeze_page_shows_no_card_before_its_declare(browser: Any, harness: Harness, tmp_path: Path) -> None:
    page, captures, coups = _run_shoe(browser, harness, tmp_path, "on_declare", seed=5)
    try:
        _check_against_journal(page, coups)
        assert _early_cards(captures, coups) == []
        in_play = [c for c, _ in captures if c["state"] == "in_play"]
        assert in_play, "no coup was seen in play"
        for capture in in_play:
            assert capture["player_total"] == capture["banker_total"] == capture["due"] == ""
        assert {c["state"] for c, _ in captures} <= {"starting", "burn", "waiting", "in_play", "shoe_closed"}
        assert page.get_attribute("body", "data-reveal") == "on_declare"
    finally:
        page.close()
