"""The third-card tableau: the one table of drawing rules that the engine, docs and messages read.

From the casino rule card. A two-card 8 or 9 in either hand is a natural and both stand. Otherwise the
Player draws on 0-5 and stands on 6-7. If the Player stood, the Banker draws on 0-5 and stands on 6-7.
If the Player drew, the Banker's action depends on its total and the Player's third card, as in
:data:`TABLEAU.banker_draws_against`.

Everything else (the coup machine, the vectorised odds engine, ``docs/`` and the error messages) reads
this table; nothing restates it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

_ALL = frozenset(range(10))


@dataclass(frozen=True)
class Tableau:
    """Drawing rules of Punto Banco as data."""

    #: Two-card totals that are naturals (both hands stand).
    natural_totals: frozenset[int]
    #: Player two-card totals on which the Player draws a third card.
    player_draws_on: frozenset[int]
    #: Banker two-card totals on which the Banker draws when the Player stood.
    banker_draws_when_player_stood: frozenset[int]
    #: Banker two-card total -> Player third-card values against which the Banker draws.
    banker_draws_against: Mapping[int, frozenset[int]]

    def is_natural(self, two_card_total: int) -> bool:
        return two_card_total in self.natural_totals

    def player_draws(self, player_total: int, banker_total: int) -> bool:
        """Whether the Player takes a third card, given both two-card totals."""
        if player_total in self.natural_totals or banker_total in self.natural_totals:
            return False
        return player_total in self.player_draws_on

    def banker_draws(self, player_total: int, banker_total: int, player_third: int | None) -> bool:
        """Whether the Banker takes a third card.

        ``player_total`` and ``banker_total`` are two-card totals; ``player_third`` is the value of the
        Player's third card, or ``None`` when the Player stood.
        """
        if player_total in self.natural_totals or banker_total in self.natural_totals:
            return False
        if player_third is None:
            return banker_total in self.banker_draws_when_player_stood
        return player_third in self.banker_draws_against[banker_total]

    def banker_rule_text(self, banker_total: int) -> str:
        """The rule card's line for a Banker two-card total when the Player drew."""
        against = self.banker_draws_against.get(banker_total, frozenset())
        if banker_total in self.natural_totals:
            return f"Banker {banker_total}: natural, stands"
        if against == _ALL:
            return f"Banker {banker_total}: always draws"
        if not against:
            return f"Banker {banker_total}: stands"
        missing = sorted(_ALL - against)
        if len(missing) == 1:
            return f"Banker {banker_total}: draws unless the Player's third card is {missing[0]}"
        return f"Banker {banker_total}: draws when the Player's third card is {_ranges(sorted(against))}"

    def rule_card(self) -> list[str]:
        """The whole tableau as the lines of a rule card (used by the docs and the command line)."""
        everything = set(range(10))
        nat = self.natural_totals
        naturals = " or ".join(str(t) for t in sorted(self.natural_totals))
        lines = [
            f"Natural: a two-card {naturals} in either hand; both hands stand.",
            f"Player draws on {_ranges(sorted(self.player_draws_on))}, "
            f"stands on {_ranges(sorted(everything - self.player_draws_on - self.natural_totals))}.",
            f"Player stood: Banker draws on {_ranges(sorted(self.banker_draws_when_player_stood))}, "
            f"stands on {_ranges(sorted(everything - self.banker_draws_when_player_stood - nat))}.",
            "Player drew:",
        ]
        lines += ["  " + self.banker_rule_text(t) for t in sorted(self.banker_draws_against)]
        return lines


def _ranges(values: list[int]) -> str:
    """Render sorted ints as ``0-5`` / ``6, 7``-style text."""
    if not values:
        return "none"
    runs: list[tuple[int, int]] = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], v)
        else:
            runs.append((v, v))
    parts = [f"{a}-{b}" if b > a + 1 else (f"{a}, {b}" if b == a + 1 else f"{a}") for a, b in runs]
    return ", ".join(parts)


#: The Punto Banco tableau.
TABLEAU = Tableau(
    natural_totals=frozenset({8, 9}),
    player_draws_on=frozenset(range(6)),
    banker_draws_when_player_stood=frozenset(range(6)),
    banker_draws_against=MappingProxyType(
        {
            0: _ALL,
            1: _ALL,
            2: _ALL,
            3: _ALL - {8},
            4: frozenset(range(2, 8)),
            5: frozenset(range(4, 8)),
            6: frozenset({6, 7}),
            7: frozenset(),
        }
    ),
)
