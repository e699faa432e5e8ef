"""What the floor server's ``/metrics`` says, for the casino's Prometheus: the collector's counts (records taken
off the broker, archived, duplicates, refused, alerts, acks, transactions) and the pit's (messages refused by
kind, errors).

Exposed as the table's link exposes its own (controller/companions.py): custom collectors that read the
counts the threads already keep when Prometheus scrapes, on a registry of the server's own (never
prometheus_client's global one); nothing is pushed into a metric object as it happens.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import CounterMetricFamily, Metric

from floor.collector import Stats

__all__ = ["COLLECTOR_COUNTS", "CollectorCounts", "PitCounts", "exposition"]

#: The collector's counts (:class:`floor.collector.Stats` fields) and what each counts.
COLLECTOR_COUNTS: Sequence[tuple[str, str]] = (
    ("received", "records taken off the broker"),
    ("archived", "records archived (first copies)"),
    ("duplicates", "records already archived"),
    ("refused", "messages refused (not a record, altered, conflicting, forged)"),
    ("alerts", "alerts raised"),
    ("acks", "acks published"),
    ("batches", "transactions"),
)


class CollectorCounts:
    """``shoe_floor_<count>_total`` for each of :data:`COLLECTOR_COUNTS`, read from the collector's
    :class:`~floor.collector.Stats` at scrape."""

    def __init__(self, stats: Callable[[], Stats]) -> None:
        self.stats = stats

    def collect(self) -> Iterable[Metric]:
        stats = self.stats()
        families = []
        for name, help_text in COLLECTOR_COUNTS:
            family = CounterMetricFamily(f"shoe_floor_{name}", help_text)
            family.add_metric([], float(getattr(stats, name)))
            families.append(family)
        return families

    def describe(self) -> Iterable[Metric]:
        return []


class PitCounts:
    """``shoe_floor_pit_refused_total{message}`` (every message kind listed from the start),
    ``shoe_floor_pit_errors_total``, read from the pit's ``stats`` at scrape, and
    ``shoe_floor_pit_actions_refused_total{why}`` (every one of ``reasons`` listed from the start:
    floor.pit_auth.REFUSALS), the POSTs its door refused (``actions``, the gate's counts)."""

    def __init__(
        self,
        stats: Counter[str],
        messages: Sequence[str],
        actions: Counter[str] | None = None,
        reasons: Sequence[str] = (),
    ) -> None:
        self.stats = stats
        self.messages = messages
        self.actions = actions
        self.reasons = reasons

    def collect(self) -> Iterable[Metric]:
        refused = CounterMetricFamily(
            "shoe_floor_pit_refused", "messages the pit refused (not of their shape), by message", labels=["message"]
        )
        for message in self.messages:
            refused.add_metric([message], float(self.stats[f"refused_{message}"]))
        errors = CounterMetricFamily(
            "shoe_floor_pit_errors", "messages whose handling failed (logged at most once a minute)"
        )
        errors.add_metric([], float(self.stats["errors"]))
        if self.actions is None:
            return [refused, errors]
        actions = CounterMetricFamily(
            "shoe_floor_pit_actions_refused",
            "POSTs the pit refused (no session, no valid CSRF token, not the role's, a bad body, no such alert)",
            labels=["why"],
        )
        for why in self.reasons:
            actions.add_metric([why], float(self.actions[why]))
        return [refused, errors, actions]

    def describe(self) -> Iterable[Metric]:
        return []


def exposition(*collectors: CollectorCounts | PitCounts) -> Callable[[], bytes]:
    """What ``/metrics`` answers: the collectors on a registry of their own, in Prometheus' text format."""
    registry = CollectorRegistry(auto_describe=False)
    for collector in collectors:
        registry.register(collector)
    return lambda: bytes(generate_latest(registry))
