"""The one notation people read, everywhere: a card, a hand, a score, a result (docs/notation.md).

The wire, the journal and every ``--json`` keep the card *token* (``TS``, ``QH``); this module is what a
person reads: the CLI, the dealer's LCD where it can, the scoreboard, the pit and its table page. The pages use
``eventstream/static/notation.js``, which says the same; tests/game/test_notation.py holds the two together.

* A card is its rank (``A``, ``2`` ... ``9``, ``10``, ``J``, ``Q``, ``K``) then its suit's symbol
  (``♠ ♥ ♦ ♣``): ``10♠``, ``Q♥``. Pages colour hearts and diamonds red.
* Player always comes before Banker: the Player's hand and total first, as the cards are dealt and as the
  layout reads. A score is ``P 5 – B 7``.
* A result is the winner's words then the score: ``Banker wins · P 5 – B 7``; a tie is ``Tie · P 6 – B 6``.
  The short form (tiles, roads' titles) is ``B`` / ``P`` / ``T``.
* Colours: Banker red, Player blue, Tie green (the bead plate's beads and the big road's rings).
* In the big road a tie is a green slash across the cell of the result before it, with the number of ties
  written on it from the second (``2``, ``3`` ...). In the bead plate a tie is its own green bead.
* A Banker pair is a small red dot at a cell's top left, a Player pair a small blue dot at its bottom right.
* The derived roads: big eye boy a hollow ring, small road a filled dot, cockroach pig a slash (red or blue).
* Money is written as the casino writes it on its chips, its placards and its rule cards, and as the dealer
  calls it: dollars with thousands separated, the cents only when there are some (``$25``, ``$5,000``,
  ``$12.50``, ``-$50``): :func:`money_text`, from integer cents, for every person's text (the dealer's
  alarms, the LCD, the scoreboard, the CLI's reports, the floor's alerts, the pit's pages through
  notation.js's ``moneyText``). An amount is never rounded: a commission of $12.50 reads ``$12.50``. JSON
  keeps its integer cents.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from controller.game.cards import Card
from controller.game.rules import Bet

SUIT_SYMBOLS: Mapping[str, str] = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}
#: The short mark of each result (tiles, roads, a history line's first column).
RESULT_LETTERS: Mapping[str, str] = {"player": "P", "banker": "B", "tie": "T"}
RESULT_WORDS: Mapping[str, str] = {"player": "Player", "banker": "Banker", "tie": "Tie"}
#: The bilingual labels a scoreboard may show beside the words (``[scoreboard] bilingual``).
RESULT_WORDS_ZH: Mapping[str, str] = {"player": "閒", "banker": "莊", "tie": "和"}
#: Each wager in words, by its name (:class:`~controller.game.rules.Bet`'s value): labels, alerts, reports.
WAGER_WORDS: Mapping[str, str] = {
    Bet.BANKER.value: "Banker",
    Bet.PLAYER.value: "Player",
    Bet.TIE.value: "Tie",
    Bet.PLAYER_PAIR.value: "Player Pair",
    Bet.BANKER_PAIR.value: "Banker Pair",
    Bet.DRAGON_BONUS_PLAYER.value: "Dragon Bonus Player",
    Bet.DRAGON_BONUS_BANKER.value: "Dragon Bonus Banker",
    Bet.DRAGON_7.value: "Dragon 7",
    Bet.PANDA_8.value: "Panda 8",
}


def wager_text(bet: str) -> str:
    """A wager's name in words (:data:`WAGER_WORDS`: ``dragon_bonus_banker`` -> ``Dragon Bonus Banker``); a name
    it does not know, with spaces for ``_`` (notation.js's ``wagerWord`` says the same)."""
    return WAGER_WORDS.get(bet, bet.replace("_", " "))


def money_text(cents: int) -> str:
    """Integer cents as the casino writes money: 2500 -> ``$25``, 500000 -> ``$5,000``, 1250 -> ``$12.50``,
    5 -> ``$0.05``, -5000 -> ``-$50``."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}${whole:,}" + (f".{part:02d}" if part else "")


def card_text(token: str) -> str:
    """``TS`` -> ``10♠``; a token that is no card raises :class:`~controller.game.errors.CardError`."""
    card = Card.parse(token)
    rank = "10" if card.rank == 10 else card.token[:-1]
    return rank + SUIT_SYMBOLS[card.suit.value]


def hand_text(tokens: Iterable[str]) -> str:
    """A hand's cards in the order drawn, one space apart: ``10♠ 7♥``."""
    return " ".join(card_text(t) for t in tokens)


def score_text(player: int | None, banker: int | None) -> str:
    """``P 5 – B 7``, Player first; an unknown total (a coup not yet dealt) is ``–``."""
    return f"P {'–' if player is None else player} – B {'–' if banker is None else banker}"


def result_text(winner: str | None, player: int | None, banker: int | None) -> str:
    """``Banker wins · P 5 – B 7``, ``Tie · P 6 – B 6``; no winner yet is only the score."""
    score = score_text(player, banker)
    if winner is None:
        return score
    if winner == "tie":
        return f"Tie · {score}"
    return f"{RESULT_WORDS[winner]} wins · {score}"


def coup_text(coup: Mapping[str, Any]) -> str:
    """A coup as one line: ``Banker wins · P 5 – B 7 · P 10♠ 5♥ · B 7♦ K♣`` (a coup dict as the journal's
    ``coups()`` and the archive's recall give it: ``winner``, ``player_total``, ``banker_total``, ``player``,
    ``banker``)."""
    parts = [result_text(coup.get("winner"), coup.get("player_total"), coup.get("banker_total"))]
    parts.append("P " + hand_text(coup.get("player") or ()))
    parts.append("B " + hand_text(coup.get("banker") or ()))
    return " · ".join(parts)
