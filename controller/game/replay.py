"""Replay: the table's state rebuilt from its journaled inputs, through the same pure core that made them.

The journal stores the inputs (cards, presses, link events) and what they produced; after a restart the table
state is what applying the stored inputs again gives (:func:`replay`): there is no second state file to
drift. A new shoe resets the table but for the link's and the line's state (and the bet-spot reader's link:
the money's book forgets the rest, boxes closed and readings told again by the reader's next snapshot), so a
replay may begin at the input that started the newest shoe (:class:`ShoeStart`, with the links and the line
as they were then) and ends in exactly the state a replay from the first input gives. The live exact edge is
rebuilt the same way from the derived records (:func:`replay_edges`).

Pure: plain values in (stored bodies as mappings, ``(kind, body)`` pairs), state out. The shell reads the
journal (:mod:`controller.table.loop.resume`); nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from controller.game.edges import EdgeWatch
from controller.game.records import KEPT_ACROSS_SHOES, InputKind, RecordKind, buy_in_from_input, input_from_body
from controller.game.table import LineNoise, LinkChanged, TableRules, TableState
from controller.game.tray import TrayLinkChanged
from controller.game.wagers import ReaderLinkChanged


@dataclass(frozen=True)
class ShoeStart:
    """Where a replay may begin: the newest shoe's number, and the link and the line as the table had them
    when that shoe started (a new shoe keeps LINK DOWN and NOISY LINE), with ``order``, the kept kinds in the
    order their inputs came (the alarms stand in the order they were raised)."""

    number: int
    link_up: bool = True
    line_noisy: bool = False
    order: tuple[InputKind, ...] = KEPT_ACROSS_SHOES
    #: The bet-spot reader's link (a table without a reader ignores it).
    reader_up: bool = True
    #: The bet spots' readings the shoe kept (its start record's ``spots``: the chips still on the layout).
    spots: tuple[Mapping[str, Any], ...] = ()
    #: The cards in the seats' readers the shoe kept (its start record's ``players``).
    players: tuple[Mapping[str, Any], ...] = ()
    #: The chip tray's link (a table without a tray reader ignores it), and the tray's book the shoe kept (its
    #: start record's ``tray``).
    tray_up: bool = True
    tray: Mapping[str, Any] | None = None

    @classmethod
    def of(
        cls,
        number: int,
        kept: Mapping[InputKind, Mapping[str, Any] | None],
        ids: Mapping[InputKind, int | None] | None = None,
        spots: Iterable[Mapping[str, Any]] = (),
        players: Iterable[Mapping[str, Any]] = (),
        tray: Mapping[str, Any] | None = None,
    ) -> ShoeStart:
        """From the shoe's number and, for each kind in :data:`~controller.game.records.KEPT_ACROSS_SHOES`, the
        last input body of that kind before its start (None when there was none) and, in ``ids``, the record
        id of the input that set the value standing then (the first of a run of equal inputs: a LINK DOWN
        journaled again raised nothing), for their order."""
        assert set(kept) == set(KEPT_ACROSS_SHOES), f"the kinds a new shoe keeps are {KEPT_ACROSS_SHOES}"
        link, line_noise, reader = kept[InputKind.LINK], kept[InputKind.LINE_NOISE], kept[InputKind.READER_LINK]
        tray_link = kept[InputKind.TRAY_LINK]
        known = ids or {}
        order = tuple(sorted(KEPT_ACROSS_SHOES, key=lambda k: known.get(k) or 0))
        return cls(
            number,
            link_up=link is None or bool(link.get("up", True)),
            line_noisy=line_noise is not None and bool(line_noise.get("noisy", False)),
            order=order,
            reader_up=reader is None or bool(reader.get("up", True)),
            spots=tuple(spots),
            players=tuple(players),
            tray_up=tray_link is None or bool(tray_link.get("up", True)),
            tray=tray,
        )


@dataclass(frozen=True)
class Replayed:
    """What a replay rebuilt: the table state, and how many table inputs it applied."""

    state: TableState
    inputs: int


def replay(rules: TableRules, bodies: Iterable[Mapping[str, Any]], start: ShoeStart | None = None) -> Replayed:
    """The state of a table under ``rules`` after the stored input ``bodies`` (in journal order), applied from
    ``start`` (None: from a fresh table). Record-only bodies (hello, status, journal_fault, noise) are skipped;
    an unknown kind raises :class:`ValueError`, as :func:`~controller.game.records.input_from_body` does."""
    if start is None:
        state = TableState(rules)
    else:
        state = TableState.at_shoe_start(rules, start.number, start.spots, start.players, start.tray)
        for kind in start.order:  # in the order they came: the alarms stand in the order they were raised
            if kind is InputKind.LINK and not start.link_up:
                state.apply(LinkChanged(False))
            elif kind is InputKind.LINE_NOISE and start.line_noisy:
                state.apply(LineNoise(True))
            elif kind is InputKind.READER_LINK and not start.reader_up:
                state.apply(ReaderLinkChanged(False))
            elif kind is InputKind.TRAY_LINK and not start.tray_up:
                state.apply(TrayLinkChanged(False))
    applied = 0
    for body in bodies:
        table_input = input_from_body(body)
        if table_input is not None:
            state.apply(table_input)
            applied += 1
        elif state.tray is not None and (buy_in := buy_in_from_input(body)) is not None:
            state.buy_in(buy_in)  # a record only, but the chips it sold left the tray
    return Replayed(state, applied)


def replay_edges(watch: EdgeWatch, records: Iterable[tuple[str, Mapping[str, Any]]]) -> EdgeWatch:
    """A fresh edge watch with ``watch``'s threshold and defaults, fed the journal's ``(kind, body)`` records:
    the cards left and the flags standing as the journal leaves them (input records are skipped)."""
    fresh = EdgeWatch(
        watch.flags.threshold,
        watch.tracker.default_rules,
        watch.tracker.default_decks,
        watch.flags.per_bet,
        watch.flags.margin,
        watch.flags.step,
    )
    for kind, body in records:
        if kind != RecordKind.INPUT:
            fresh.replayed(kind, body)
    return fresh
