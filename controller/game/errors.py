"""Typed errors of the game core, split by who is at fault.

``CardError`` is bad input (a token that is not a card). ``RulesViolation`` is a card or button the
rules do not allow now; the state that raised it is unchanged.
"""

from __future__ import annotations


class GameError(Exception):
    """Base of every error the game core raises."""


class CardError(GameError, ValueError):
    """A card token that does not name a card."""

    def __init__(self, token: str, reason: str = "not a card") -> None:
        super().__init__(f"{token!r}: {reason}")
        self.token = token
        self.reason = reason


class RulesViolation(GameError):
    """A card or action that the rules do not allow now. The state is left unchanged."""


class CardNotDue(RulesViolation):
    """A card was offered to a coup that has no card due (a misdraw)."""

    def __init__(self, card: object) -> None:
        super().__init__(f"card {card} offered but no card is due: the coup is complete")
        self.card = card
