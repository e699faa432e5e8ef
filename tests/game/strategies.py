"""Hypothesis strategies for the table's inputs, shared by the pure replay's tests and the loop's resume tests."""

from __future__ import annotations

from hypothesis import strategies as st

from controller.game.cards import DECK
from controller.game.table import (
    CardDrawn,
    CutCardOut,
    DeclarePressed,
    LineNoise,
    LinkChanged,
    NewShoePressed,
    UnreadableCard,
    VoidPressed,
)

#: Any input a table takes: cards, the panel's buttons, the shoe's faults, the link and the line.
inputs = st.one_of(
    st.sampled_from(DECK).map(CardDrawn),
    st.sampled_from(
        [
            DeclarePressed(),
            VoidPressed(),
            UnreadableCard(),
            CutCardOut(),
            NewShoePressed(),
            LinkChanged(up=False),
            LinkChanged(up=True),
            LineNoise(noisy=True),
            LineNoise(noisy=False),
        ]
    ),
)
