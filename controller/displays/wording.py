"""How both displays write money and odds: one formatter, so the LCD and the scoreboard never disagree.

The convention is the one printed on casino baccarat rule cards: odds are "N to 1" with an exact decimal
where the pay is not whole (a Banker win less 5% commission is ``0.95:1``, not ``19:20``), and a pay of one
unit for several is written the other way round (Super 6's half pay is ``1:2``). Exact arithmetic only:
integers and fractions, never a float.
"""

from __future__ import annotations

from fractions import Fraction

from controller.game.notation import money_text as money  # the one money text (docs/notation.md)

__all__ = ["decimal", "money", "odds", "percent"]


def odds(pays: Fraction) -> str:
    """A pay as the rule card writes it: 8 -> ``"8:1"``, 1/2 -> ``"1:2"``, 19/20 -> ``"0.95:1"``,
    3/2 -> ``"1.5:1"``; a pay with no exact short decimal stays a fraction, 2/3 -> ``"2/3:1"``."""
    if pays.denominator == 1:
        return f"{pays.numerator}:1"
    if pays.numerator == 1:
        return f"1:{pays.denominator}"
    return f"{decimal(pays)}:1"


def decimal(value: Fraction) -> str:
    """Exact decimal text of a fraction, to six places: 19/20 -> ``"0.95"``, 5 -> ``"5"``; a fraction
    without an exact short decimal is written ``a/b``."""
    whole, rest = divmod(value.numerator, value.denominator)
    digits = ""
    for _ in range(6):
        if not rest:
            break
        rest *= 10
        digit, rest = divmod(rest, value.denominator)
        digits += str(digit)
    if rest:
        return f"{value.numerator}/{value.denominator}"
    return f"{whole}.{digits}" if digits else str(whole)


def percent(rate: Fraction) -> str:
    """A rate as a percentage: 1/20 -> ``"5%"``, 1/40 -> ``"2.5%"``."""
    return f"{decimal(rate * 100)}%"
