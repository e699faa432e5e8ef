"""The link process's Prometheus collectors: the table's own metrics as the table sends them on its feed
(:class:`TableFamilies`), and the floor link's gauges and counters read when scraped (:func:`link_gauges`).

The table's metrics themselves are kept by the table process (:mod:`controller.metrics`), which has no
network: the link serves them.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.parser import text_string_to_metric_families

from controller.journal.ack import REFUSAL_REASONS, AckRefusals
from controller.link.floor_trouble import Cause, TroubleLog

log = logging.getLogger(__name__)


class TableFamilies:
    """A Prometheus collector of the table's own metrics, as the table last sent them on its feed (text
    format, parsed and checked here: a text that does not parse is refused and the last good one kept)."""

    def __init__(self) -> None:
        self._families: list[Metric] = []
        self.refused = 0

    def take(self, text: str) -> None:
        try:
            families = list(text_string_to_metric_families(text))
        except (ValueError, TypeError, IndexError) as exc:
            self.refused += 1
            log.warning("link: refused the table's metrics: %s", str(exc)[:120])
            return
        self._families = families

    def collect(self) -> Iterable[Metric]:
        return list(self._families)

    def describe(self) -> Iterable[Metric]:
        return []


class FloorState(Protocol):
    """What the gauges read of the floor link (:class:`controller.link.floor_link.FloorLink`, on its own thread)."""

    connected: bool
    head: int  # the journal's last record id as the link last read it
    acked: int  # the floor's ack as the link last believed it
    ack_refusals: AckRefusals  # the acks it did not believe
    troubles: TroubleLog  # why it is not connected, and its failed attempts by cause
    failures: int  # times its publishing failed unforeseen and started again
    states_unsent: int  # table views the state message's model refused


class FeedState(Protocol):
    connected: bool


class AckRefusalCounts:
    """``shoe_floor_acks_refused_total{reason}``: the floor acks the link did not believe, by reason (every
    reason of :data:`controller.journal.ack.REFUSAL_REASONS` is there, 0 until one comes)."""

    def __init__(self, floor: FloorState) -> None:
        self.floor = floor

    def collect(self) -> Iterable[Metric]:
        family = CounterMetricFamily(
            "shoe_floor_acks_refused", "Floor acks not believed (not signed, not this table's ...).", labels=["reason"]
        )
        counts = dict(self.floor.ack_refusals.counts)
        for reason in REFUSAL_REASONS:
            family.add_metric([reason], float(counts.get(reason, 0)))
        return [family]

    def describe(self) -> Iterable[Metric]:
        return []


#: Why the link refuses a floor staff list (controller.link.floor_link.FloorLink._staff_heard).
STAFF_REFUSAL_REASONS = ("too_long", "malformed", "wrong_site", "bad_signature", "stale")


@runtime_checkable
class StaffState(Protocol):
    """What the staff lists' counter reads of the floor link."""

    staff_refusals: Counter[str]  # the staff lists it did not believe, by reason


class StaffRefusalCounts:
    """``shoe_floor_staff_lists_refused_total{reason}``: the floor staff lists the link did not believe."""

    def __init__(self, floor: StaffState) -> None:
        self.floor = floor

    def collect(self) -> Iterable[Metric]:
        family = CounterMetricFamily(
            "shoe_floor_staff_lists_refused",
            "Floor staff lists not believed (too long, malformed, another site's, not signed, older than believed).",
            labels=["reason"],
        )
        counts = dict(self.floor.staff_refusals)
        for reason in STAFF_REFUSAL_REASONS:
            family.add_metric([reason], float(counts.get(reason, 0)))
        return [family]

    def describe(self) -> Iterable[Metric]:
        return []


class TroubleFamilies:
    """``shoe_floor_link_trouble{cause}`` (1 for the cause the link is not connected for now, 0 for the others)
    and ``shoe_floor_connect_failures_total{cause}`` (failed connection attempts), every cause of
    :class:`controller.link.floor_trouble.Cause` listed from the start."""

    def __init__(self, floor: FloorState) -> None:
        self.floor = floor

    def collect(self) -> Iterable[Metric]:
        troubles = self.floor.troubles
        current = troubles.current
        now = GaugeMetricFamily(
            "shoe_floor_link_trouble", "1 for why the floor link is not connected now, by cause.", labels=["cause"]
        )
        failures = CounterMetricFamily(
            "shoe_floor_connect_failures", "Failed connections to the floor's broker, by cause.", labels=["cause"]
        )
        counts = dict(troubles.failures)
        for cause in Cause:
            now.add_metric([cause.value], 1.0 if current is not None and current.cause is cause else 0.0)
            failures.add_metric([cause.value], float(counts.get(cause, 0)))
        return [now, failures]

    def describe(self) -> Iterable[Metric]:
        return []


class LinkGauges:
    """``shoe_floor_outbox_records`` (records the floor has not acknowledged), ``shoe_floor_connected`` (1, 0,
    or -1 without a floor link), ``shoe_table_feed_up`` (1 while the table process's feed is heard), and with
    a floor link ``shoe_floor_link_failures_total`` (its publishing failed unforeseen and started again: a
    bug to report) and ``shoe_floor_states_unsent_total`` (table views that made no state message), read
    from the link's threads when scraped."""

    def __init__(self, floor: FloorState | None, feed: FeedState) -> None:
        self.floor = floor
        self.feed = feed

    def collect(self) -> Iterable[Metric]:
        floor = self.floor
        outbox = GaugeMetricFamily("shoe_floor_outbox_records", "Journal records the floor has not acknowledged yet.")
        outbox.add_metric([], 0.0 if floor is None else float(max(floor.head - floor.acked, 0)))
        connected = GaugeMetricFamily(
            "shoe_floor_connected", "1 connected to the floor's broker, 0 not, -1 unknown or no floor link."
        )
        connected.add_metric([], -1.0 if floor is None else (1.0 if floor.connected else 0.0))
        table_up = GaugeMetricFamily("shoe_table_feed_up", "1 while the link hears the table process's feed, 0 not.")
        table_up.add_metric([], 1.0 if self.feed.connected else 0.0)
        if floor is None:
            return [outbox, connected, table_up]
        failures = CounterMetricFamily(
            "shoe_floor_link_failures", "Times the floor link's publishing failed unforeseen and started again."
        )
        failures.add_metric([], float(floor.failures))
        unsent = CounterMetricFamily("shoe_floor_states_unsent", "Table views that made no state message.")
        unsent.add_metric([], float(floor.states_unsent))
        return [outbox, connected, table_up, failures, unsent]

    def describe(self) -> Iterable[Metric]:
        return []


def link_gauges(registry: CollectorRegistry, floor: FloorState | None, feed: FeedState) -> None:
    """The link's own metrics on ``registry``, each a collector that reads the threads' state when scraped
    (nothing is pushed): :class:`LinkGauges`, and with a floor link :class:`AckRefusalCounts`,
    :class:`StaffRefusalCounts` and :class:`TroubleFamilies`."""
    registry.register(LinkGauges(floor, feed))
    if floor is not None:
        registry.register(AckRefusalCounts(floor))
        if isinstance(floor, StaffState):
            registry.register(StaffRefusalCounts(floor))
        registry.register(TroubleFamilies(floor))
