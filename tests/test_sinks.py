"""Sinks on their own threads: a slow sink never holds up the table loop; LatestViewSink ends on the latest
view, QueuedSink hands over every notice in order and stays bounded when its sink is stuck."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from controller.game.cards import Card
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import CardDrawn, Notice, TableRules, TableState, TableView
from controller.table.sinks import LatestViewSink
from tests.waiting import until


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
        assert time.perf_counter() - t0 < 1.0  # never waited for the inner sink (it is held for 5 s)
        inner.release.set()
        assert sink.flush()
        until(lambda: inner.views[-1:] == vs[-1:], 5, "the last view at the inner sink")
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
    from controller.table.sinks import QueuedSink

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


class HeldBatchSink(BatchSink):
    """A sink that is stuck until released, and records every notice it is handed."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.notices: list[Notice] = []

    def update_many(self, updates: Sequence[tuple[TableView, Sequence[Notice]]]) -> None:
        self.release.wait(10)
        super().update_many(updates)
        self.notices.extend(n for _, ns in updates for n in ns)


def test_queued_sink_at_its_bound_folds_updates_and_loses_no_notice() -> None:
    from controller.game.table import Alarm, AlarmCleared
    from controller.table.sinks import QueuedSink

    inner = HeldBatchSink()
    sink = QueuedSink(inner, max_pending=8)
    vs = views(5)
    sent: list[Notice] = []
    try:
        for i in range(200):
            notice = AlarmCleared(Alarm.MISDRAW if i % 2 else Alarm.LINK_DOWN)
            sent.append(notice)
            sink.update(vs[i % 5], [notice])
        assert len(sink._pending) <= 8  # the bound held while the sink was stuck
        assert sink.coalesced >= 200 - 2 * 8  # the stuck sink may hold a first batch of up to 8
        inner.release.set()
        assert sink.flush()
    finally:
        inner.release.set()
        sink.close()
    assert [id(n) for n in inner.notices] == [id(n) for n in sent]  # every notice, in order
    assert inner.batches[-1][-1] == vs[199 % 5]  # and the latest view last
