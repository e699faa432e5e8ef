"""The daemon and the software shoe as real processes over a real pty, compared with the record of truth."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.game.cards import Card
from controller.game.coup import play_coups
from tests.e2e.harness import Harness
from tests.waiting import until

pytestmark = pytest.mark.e2e


wait_for = until  # tests/waiting.py


def journal_cards(h: Harness) -> list[str]:
    return [b["card"] for b in h.journal_inputs() if b.get("kind") == "card"]


def truth_cards(h: Harness) -> list[dict]:  # type: ignore[type-arg]
    return [e for e in h.truth_events() if e["event"] == "card"]


def assert_matches_truth(h: Harness, *, sequenced: bool) -> None:
    truth = truth_cards(h)
    assert truth, "the simulator dealt nothing"
    # every card that left the shoe, exactly once and in order
    assert journal_cards(h) == [e["card"] for e in truth]
    if sequenced:
        keyed = [(r.session, r.number) for r in h.journal_records() if r.kind == "input" and r.number is not None]
        assert len(keyed) == len(set(keyed))
        card_keys = {(e["session"], e["number"]) for e in truth}
        assert card_keys <= set(keyed)
    # every coup result, exactly once
    coup_cards = [Card.parse(e["card"]) for e in truth if e.get("role") == "coup"]
    expected, leftover = play_coups(coup_cards)
    assert not leftover
    declared = [c for c in h.journal_coups() if c["declared"]]
    assert len(declared) == len(expected)
    for got, want in zip(declared, expected, strict=True):
        assert got["player"] == [c.token for c in want.player]
        assert got["banker"] == [c.token for c in want.banker]
        assert got["winner"] == want.winner.value
        assert got["player_total"] == want.player_total


def test_binary_shoe_every_card_and_coup_exactly_once(harness: Harness) -> None:
    harness.start_sim("--decks", "8", seed=11)
    harness.start_daemon()
    assert harness.wait_sim(timeout=120) == 0
    assert harness.stop_daemon() == 0
    assert_matches_truth(harness, sequenced=True)
    log = harness.daemon_logs[-1].read_text()
    assert "Traceback" not in log


def test_ascii_shoe_every_card_and_coup_exactly_once(harness: Harness, tmp_path: Path) -> None:
    config = tmp_path / "ascii.toml"
    config.write_text('[table]\nauto_declare = true\n[shoe]\ndialect = "ascii"\n[scoreboard]\nenabled = false\n')
    harness.start_sim("--decks", "2", "--pace", "0.002", dialect="ascii", seed=5)
    harness.start_daemon("--config", str(config), dialect="ascii")
    assert harness.wait_sim(timeout=120) == 0
    n = len(truth_cards(harness))
    wait_for(lambda: len(journal_cards(harness)) >= n, 30, "the daemon to journal every card")
    assert harness.stop_daemon() == 0
    assert_matches_truth(harness, sequenced=False)


def test_binary_shoe_under_wire_faults(harness: Harness) -> None:
    """1 % corrupted and dropped bytes, duplicated and split frames: still every card exactly once."""
    harness.start_sim(
        "--decks", "2",
        "--fault", "corrupt=0.01", "--fault", "drop=0.01", "--fault", "duplicate=0.01", "--fault", "split=0.05",
        seed=23,
    )  # fmt: skip
    harness.start_daemon()
    assert harness.wait_sim(timeout=180) == 0
    assert harness.stop_daemon() == 0
    assert_matches_truth(harness, sequenced=True)


@pytest.mark.e2e
def test_a_table_that_declares_by_itself_deals_the_whole_shoe_with_the_prompt_dealer(tmp_path: Path) -> None:
    """issue 18: with ``auto_declare = true`` and the simulator's default (prompt) dealer, the demo stopped after
    coup 1 with no message (the dealer waited for a NOTHING the table never sent). Now every coup is dealt."""
    with Harness(tmp_path) as h:
        h.tmp.mkdir(exist_ok=True)
        config = h.tmp / "auto.toml"
        config.write_text("[table]\nauto_declare = true\ndecks = 1\n")
        h.start_sim("--decks", "1", pace="0.01")
        h.start_daemon("--config", str(config))
        assert h.wait_sim(120) == 0
        declared = [e for e in h.truth_events() if e["event"] == "table_declared"]
        coups = [c for c in h.journal_coups() if c.get("declared")]
        assert len(coups) >= 5 and len(declared) == len(coups)  # a 1-deck shoe to its cut card, each coup once
