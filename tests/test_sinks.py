"""LatestViewSink: a slow sink never holds up the table loop and always ends on the latest view."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from controller.game.cards import Card
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import CardDrawn, Notice, TableRules, TableState, TableView
from controller.sinks import LatestViewSink


class SlowSink:
    name = "slow"

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.views: list[TableView] = []
        self.closed = False
        self.release = threading.Event()

    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        self.release.wait(5)
        time.sleep(self.delay)
        self.views.append(view)

    def close(self) -> None:
        self.closed = True


def views(n: int) -> list[TableView]:
    state = TableState(TableRules(burn_rule=BurnRule(BurnMode.NONE)))
    out = []
    for token in ["2H", "3S", "AD", "KC", "8D"][:n]:
        state.apply(CardDrawn(Card.parse(token)))
        out.append(state.view())
    return out


def test_updates_return_at_once_and_the_last_view_wins() -> None:
    inner = SlowSink(delay=0.05)
    sink = LatestViewSink(inner)
    try:
        vs = views(5)
        t0 = time.perf_counter()
        for v in vs:
            sink.update(v, ())
        assert time.perf_counter() - t0 < 0.04  # never waited for the slow inner sink
        inner.release.set()
        assert sink.flush()
        time.sleep(0.1)
        assert inner.views[-1] == vs[-1]
        assert len(inner.views) < len(vs)  # coalesced
    finally:
        inner.release.set()
        sink.close()
    assert inner.closed
    assert not any(t.name == "sink-slow" for t in threading.enumerate())


class BatchSink:
    name = "batch"

    def __init__(self) -> None:
        self.batches: list[list[TableView]] = []
        self.closed = False

    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        self.batches.append([view])

    def update_many(self, updates: Sequence[tuple[TableView, Sequence[Notice]]]) -> None:
        self.batches.append([v for v, _ in updates])

    def close(self) -> None:
        self.closed = True


def test_queued_sink_hands_over_every_update_in_order_gathered() -> None:
    from controller.sinks import QueuedSink

    inner = BatchSink()
    sink = QueuedSink(inner, gather_seconds=0.05)
    vs = views(5)
    for v in vs:
        sink.update(v, ())
    assert sink.flush()
    sink.close()
    assert [v for batch in inner.batches for v in batch] == vs  # all of them, in order
    assert len(inner.batches) < len(vs)  # gathered
    assert inner.closed
