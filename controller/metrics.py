"""The table's health metrics, for Prometheus: ``[metrics] bind`` (loopback by default), ``GET /metrics``.

One :class:`TableMetrics` per daemon, with its own :class:`prometheus_client.CollectorRegistry` (never the
process-wide default one, so that two daemons in one process, as in the tests, do not share counters). The
table loop updates it in passing (a counter or a histogram is a lock and an add: well under a microsecond);
the HTTP server runs on prometheus_client's own thread and reads the values when scraped. What is exported:

====================================== ===========================================================================
``shoe_cards_read_total``              cards read from the shoe and applied (the ASCII and binary dialects alike)
``shoe_frames_rejected_total{reason}`` frames or lines the decoder rejected, by the decoder's reason
``shoe_link_up``                       1 while the shoe link is up, 0 while LINK DOWN shows
``shoe_events_dropped_total{kind}``    events the table loop's full queue dropped (the loop was stalled), by
                                       kind: the panel press's action (``declare``, ``new_shoe``, ``void``),
                                       ``link`` (a shoe port report), ``shoe_bytes``, ``floor_ack``, ``stop``,
                                       and with a bet-spot reader ``reader_link``, ``reader_bytes`` (with a
                                       chip tray ``tray_link``, ``tray_bytes``)
``shoe_journal_commit_seconds``        histogram: one journal transaction (the group commit before the ACK)
``shoe_card_to_led_seconds``           histogram: a card's bytes read from the port -> every sink updated (LEDs
                                       first: the panel is the first sink)
``shoe_journal_bytes``                 the journal file with its WAL, read from the file system when scraped
``shoe_spots_frames_total``            frames from the bet-spot reader the table took (reports, snapshots,
                                       status, heartbeats, duplicates alike; only with a reader)
``shoe_spots_frames_rejected_total``   the reader's frames its decoder rejected, by the decoder's reason
``{reason}``
``shoe_spots_snapshots_total{outcome}`` the reader's full snapshots: ``journaled`` (it changed what the wager
                                       book knew) or ``ignored`` (it did not: counted, not journaled)
``shoe_spots_link_up``                 1 while the reader's link is up, 0 while READER DOWN shows
``shoe_tray_frames_total``             frames from the chip tray the table took (only with a tray)
``shoe_tray_frames_rejected_total``    the tray's frames its decoder rejected, by the decoder's reason
``{reason}``
``shoe_tray_snapshots_total{outcome}`` the tray's full counts: ``applied``, or ``refused`` (they did not hold
                                       together: not applied, another asked for)
``shoe_tray_link_up``                  1 while the tray's link is up, 0 while TRAY DOWN shows
``shoe_tray_counts_total``             the tray's reconciliations (its count held to the expected tray)
``shoe_tray_variances_total``          variances a recount confirmed, by ``direction``: ``short`` or ``over``
``{direction}``
``shoe_tray_variance_cents_total``     their amounts in cents, by ``direction`` (``short``, ``over``)
``{direction}``
====================================== ===========================================================================

The table process has no network: it sends :meth:`TableMetrics.exposition` on its feed every second, and the
floor link's process (:class:`controller.link.process.LinkProcess`) serves it with the floor's own gauges
(``shoe_floor_outbox_records``, ``shoe_floor_connected``, ``shoe_table_feed_up``). :meth:`TableMetrics.start`
serves them directly, for tools and tests in one process. A failure to bind the HTTP port is logged and the
table deals on without metrics.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, start_http_server

log = logging.getLogger(__name__)

#: Latency buckets (seconds): from 100 microseconds (a card -> LED on a Pi is well under a millisecond) to a
#: second (a commit stalled by a slow SD card).
LATENCY_BUCKETS = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
)


def _file_bytes(path: str) -> float:
    total = 0
    for name in (path, f"{path}-wal"):
        with contextlib.suppress(OSError):  # no WAL (or no file yet): nothing to add
            total += os.stat(name).st_size
    return float(total)


#: What became of a buy-in entered for a seat (``shoe_buy_ins{outcome}``).
BUY_IN_OUTCOMES = ("taken", "refused", "not_kept")
#: What the dealer screen sends that the table may refuse before an approval asks
#: (``shoe_approval_requests_refused{what}``): a PIN with none due or while one is checked, a rating, a card keyed.
APPROVAL_REQUESTS = ("pin_none_due", "pin_busy", "rate", "key")


class TableMetrics:
    """The metrics of one table; :meth:`start` serves them over HTTP."""

    def __init__(self, journal_path: str | os.PathLike[str] | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.cards = Counter("shoe_cards_read", "Cards read from the shoe and applied.", registry=r)
        self.rejected = Counter(
            "shoe_frames_rejected", "Frames or lines the decoder rejected, by reason.", ["reason"], registry=r
        )
        self.dropped = Counter(
            "shoe_events_dropped",
            "Events the table loop's full queue dropped (the loop was stalled), by kind.",
            ["kind"],
            registry=r,
        )
        self.link_up = Gauge("shoe_link_up", "1 while the shoe link is up, 0 while LINK DOWN shows.", registry=r)
        self.commit_seconds = Histogram(
            "shoe_journal_commit_seconds",
            "One journal transaction (the group commit before the shoe's ACK).",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.card_to_led_seconds = Histogram(
            "shoe_card_to_led_seconds",
            "A card's bytes read from the port -> the panel's LEDs (and every other sink) updated.",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.journal_bytes = Gauge("shoe_journal_bytes", "The journal file and its WAL, in bytes.", registry=r)
        self.spots_frames = Counter("shoe_spots_frames", "Frames from the bet-spot reader taken.", registry=r)
        self.spots_rejected = Counter(
            "shoe_spots_frames_rejected", "The bet-spot reader's frames rejected, by reason.", ["reason"], registry=r
        )
        self.spots_snapshots = Counter(
            "shoe_spots_snapshots",
            "The bet-spot reader's full snapshots: journaled (news) or ignored (no news).",
            ["outcome"],
            registry=r,
        )
        self.spots_link_up = Gauge(
            "shoe_spots_link_up", "1 while the bet-spot reader's link is up, 0 while READER DOWN shows.", registry=r
        )
        self.tray_frames = Counter("shoe_tray_frames", "Frames from the chip tray taken.", registry=r)
        self.tray_rejected = Counter(
            "shoe_tray_frames_rejected", "The chip tray's frames rejected, by reason.", ["reason"], registry=r
        )
        self.tray_snapshots = Counter(
            "shoe_tray_snapshots", "The chip tray's full counts: applied or refused.", ["outcome"], registry=r
        )
        self.tray_link_up = Gauge(
            "shoe_tray_link_up", "1 while the chip tray's link is up, 0 while TRAY DOWN shows.", registry=r
        )
        self.tray_counts = Counter(
            "shoe_tray_counts", "The chip tray's reconciliations: its count held to the expected tray.", registry=r
        )
        self.tray_variances = Counter(
            "shoe_tray_variances", "Tray variances a recount confirmed, short or over.", ["direction"], registry=r
        )
        self.tray_variance_cents = Counter(
            "shoe_tray_variance_cents",
            "The amounts of the tray variances a recount confirmed, in cents, short or over.",
            ["direction"],
            registry=r,
        )
        self.buy_ins = Counter(
            "shoe_buy_ins",
            "Buy-ins entered for a seat (the dealer screen's): taken (journaled), refused (out of bounds or not a"
            " seat of the table), or not_kept (the journal refused the commit).",
            ["outcome"],
            registry=r,
        )
        for outcome in BUY_IN_OUTCOMES:
            self.buy_ins.labels(outcome=outcome)  # each at 0 from the start, so a rate can be taken at once
        self.approvals = Counter(
            "shoe_approval_steps",
            "Steps of what needs a supervisor, by action (void, new_shoe, key_card, rate_uncarded) and outcome: asked,"
            " approved, or why a step was refused (unknown_badge, not_supervisor, own_correction, locked, wrong_pin,"
            " locked_out, no_pin, withdrawn).",
            ["action", "outcome"],
            registry=r,
        )
        self.approval_requests_refused = Counter(
            "shoe_approval_requests_refused",
            "What the dealer screen sent for an approval that the table refused before any step (a PIN with none"
            " due or while one is checked, a rating or a card keyed the table cannot take now), by what.",
            ["what"],
            registry=r,
        )
        for what in APPROVAL_REQUESTS:
            self.approval_requests_refused.labels(what=what)
        if journal_path is not None:
            path = os.fspath(journal_path)
            self.journal_bytes.set_function(lambda: _file_bytes(path))
        self._endpoint = MetricsEndpoint(r)

    # -- what the table loop reports ---------------------------------------------------------------------
    def card_read(self, seconds_to_led: float) -> None:
        """A card was applied and the sinks updated ``seconds_to_led`` after its bytes were read."""
        self.cards.inc()
        self.card_to_led_seconds.observe(seconds_to_led)

    def frame_rejected(self, reason: str) -> None:
        self.rejected.labels(reason=reason).inc()

    def link(self, up: bool) -> None:
        self.link_up.set(1 if up else 0)

    def spots_frame(self) -> None:
        """A frame from the bet-spot reader was taken."""
        self.spots_frames.inc()

    def spots_frame_rejected(self, reason: str) -> None:
        self.spots_rejected.labels(reason=reason).inc()

    def spots_snapshot(self, journaled: bool) -> None:
        """A full snapshot from the reader: ``journaled`` when it was news, else ignored (counted only)."""
        self.spots_snapshots.labels(outcome="journaled" if journaled else "ignored").inc()

    def spots_link(self, up: bool) -> None:
        self.spots_link_up.set(1 if up else 0)

    def tray_frame(self) -> None:
        """A frame from the chip tray was taken."""
        self.tray_frames.inc()

    def tray_frame_rejected(self, reason: str) -> None:
        self.tray_rejected.labels(reason=reason).inc()

    def tray_snapshot(self, applied: bool) -> None:
        """A full count from the tray: ``applied``, or refused (it did not hold together)."""
        self.tray_snapshots.labels(outcome="applied" if applied else "refused").inc()

    def tray_link(self, up: bool) -> None:
        self.tray_link_up.set(1 if up else 0)

    def tray_count(self, variance_cents: int) -> None:
        """A reconciliation of the tray; ``variance_cents`` the variance a recount confirmed (0: none)."""
        self.tray_counts.inc()
        if variance_cents:
            direction = "short" if variance_cents < 0 else "over"
            self.tray_variances.labels(direction=direction).inc()
            self.tray_variance_cents.labels(direction=direction).inc(abs(variance_cents))

    def buy_in(self, outcome: str) -> None:
        """A buy-in entered for a seat was ``taken``, ``refused`` or ``not_kept`` (:data:`BUY_IN_OUTCOMES`)."""
        self.buy_ins.labels(outcome=outcome).inc()

    def approval(self, action: str, outcome: str) -> None:
        """A step of an approval: ``asked``, ``approved``, or a refusal's why (the records' words)."""
        self.approvals.labels(action=action, outcome=outcome).inc()

    def approval_request_refused(self, what: str) -> None:
        """A request from the dealer screen refused before it asked (:data:`APPROVAL_REQUESTS`)."""
        self.approval_requests_refused.labels(what=what).inc()

    def committed(self, seconds: float) -> None:
        self.commit_seconds.observe(seconds)

    def events_dropped(self, kind: str, count: int) -> None:
        """``count`` events of ``kind`` were dropped at the loop's full queue (reported by the loop)."""
        self.dropped.labels(kind=kind).inc(count)

    def exposition(self) -> str:
        """The metrics in Prometheus' text format: what the table process sends the floor link's process on
        its feed (the table has no network; the link serves them)."""
        return generate_latest(self.registry).decode()

    # -- serving ---------------------------------------------------------------------------------------
    def start(self, host: str, port: int) -> bool:
        """Serve ``/metrics`` on ``host:port`` (port 0: any free port, see :attr:`address`). A failure to bind
        is logged and returns False: the table deals on without metrics."""
        return self._endpoint.start(host, port, "the table runs without metrics")

    @property
    def address(self) -> tuple[str, int] | None:
        """``(host, port)`` served while started, else None."""
        return self._endpoint.address

    def stop(self) -> None:
        """Stop the HTTP server and join its thread (idempotent)."""
        self._endpoint.stop()


class MetricsEndpoint:
    """``GET /metrics`` of one registry over HTTP, on prometheus_client's own thread: the table's (for tools
    and tests in one process) and the link process's. Started once, stopped idempotently."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.address: tuple[str, int] | None = None

    def start(self, host: str, port: int, without: str) -> bool:
        """Serve on ``host:port`` (port 0: any free port, see :attr:`address`). A failure to bind is logged
        with ``without`` (what runs on without metrics) and returns False."""
        try:
            self._server, self._thread = start_http_server(port, addr=host, registry=self.registry)
        except OSError as exc:
            log.error("metrics: cannot serve on %s:%d (%s); %s", host, port, exc, without)
            return False
        bound = self._server.server_address
        self.address = (str(bound[0]), int(bound[1]))
        log.info("metrics on http://%s:%d/metrics", host, self.address[1])
        return True

    def stop(self) -> None:
        """Stop the HTTP server and join its thread (idempotent)."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        self.address = None
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=5)
