"""``shoe-sim --order FILE``: the shoe deals a given card order (what the floor's repeated-shoe check is tested
with); a bad file is one line naming its line, exit 2."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from controller.game.cards import DECK, Card
from hw_sim.cli import main, order_note, read_order
from hw_sim.core import ConfigError, DealerMode, ShoeSimulator, SimConfig
from tests.hw_sim.test_core import cards_of, converse


def _order(seed: int, decks: int = 1, count: int | None = None) -> list[Card]:
    cards = list(DECK) * decks
    random.Random(seed).shuffle(cards)
    return cards[:count] if count is not None else cards


def test_every_card_of_the_order_leaves_the_shoe_in_that_order() -> None:
    order = _order(11)
    sim = ShoeSimulator(SimConfig(decks=1, seed=5, pace=0.0, dealer=DealerMode.SELF, order=tuple(order)))
    converse(sim)
    dealt = [e["card"] for e in sim.truth.events if e["event"] in ("card", "unreadable")]
    assert len(dealt) > 30
    assert dealt == [c.token for c in order[: len(dealt)]]


def test_a_short_order_is_followed_by_the_rest_of_the_decks_shuffled() -> None:
    order = _order(12, decks=2, count=25)
    sims = [
        ShoeSimulator(SimConfig(decks=2, seed=seed, pace=0.0, dealer=DealerMode.SELF, order=tuple(order)))
        for seed in (1, 2)
    ]
    dealt = []
    for sim in sims:
        converse(sim)
        dealt.append(cards_of(sim.truth.events))
        assert sim.shoe is not None
        assert sorted(c.token for c in sim.shoe.cards) == sorted(c.token for c in list(DECK) * 2)  # a real shoe
    assert dealt[0][:25] == dealt[1][:25] == [c.token for c in order]
    assert dealt[0][25:] != dealt[1][25:]  # the rest comes from the seed


def test_an_order_the_shoe_cannot_hold_is_refused() -> None:
    with pytest.raises(ConfigError, match="AS copy 2 in a 1-deck shoe"):
        SimConfig(decks=1, order=(Card.parse("AS"), Card.parse("2H"), Card.parse("AS")))


def test_the_file_allows_comments_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "order.txt"
    path.write_text("# shoe 4 of table T1\n\n9H\n  ts  # the ten of spades\nKd\n")
    assert [c.token for c in read_order(path, 8)] == ["9H", "TS", "KD"]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("9H\nKD\nXX\n", "order.txt:3: "),
        ("9H\n\n# c\nH9\n", "order.txt:4: "),
        ("AS\n2H\nAS\n", "order.txt:3: AS copy 2 in a 1-deck shoe"),
        ("# nothing\n\n", "no cards"),
        ("".join(f"{c.token}\n" for c in DECK) + "2C\n", "order.txt:53: "),
    ],
)
def test_a_bad_order_file_is_one_line_naming_the_line_exit_2(
    tmp_path: Path, text: str, names: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "order.txt"
    path.write_text(text)
    assert main(["--link", str(tmp_path / "shoe"), "--decks", "1", "--order", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("shoe-sim: error: --order ")
    assert names in err


def test_a_missing_order_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--link", str(tmp_path / "shoe"), "--order", str(tmp_path / "nope.txt")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--order" in err


def test_an_order_shorter_than_the_deal_says_so() -> None:
    short = tuple(_order(3, count=20))
    note = order_note(short, SimConfig(decks=1, seed=9, cut_card=14, order=short))
    assert note is not None and "holds 20 cards" in note and "deals 38 before its cut card" in note
    whole = tuple(_order(3))
    assert order_note(whole, SimConfig(decks=1, seed=9, order=whole)) is None
