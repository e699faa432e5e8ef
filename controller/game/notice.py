"""The base of every notice the pure core reports (:class:`Notice`): the table's and the money's alike.

Its own module so that :mod:`controller.game.table` and :mod:`controller.game.wagers` (which the table state
holds) can both subclass it without importing each other; :mod:`controller.game.table` re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Notice"]


@dataclass(frozen=True)
class Notice:
    """Base of everything :meth:`~controller.game.table.TableState.apply` reports."""
