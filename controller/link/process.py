"""The link process (``shoe-controller link``): the floor link (the journal read-only, every record to the
floor's broker) and the table's Prometheus metrics, fed by the table process's ``link.sock``; it hands the
floor's ack back to the table there (the table stores it: it stays the journal's one writer), and the floor's
signed staff list, verified (the table verifies it again and keeps it).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from prometheus_client import CollectorRegistry

from controller.companions import Companion, CompanionError
from controller.config import Settings
from controller.feed.client import FeedClient
from controller.feed.messages import Commit, Hello, Metrics, TableMessage, Update
from controller.feed.server import socket_paths
from controller.link.floor_trouble import Trouble
from controller.link.metrics import TableFamilies, link_gauges
from controller.metrics import MetricsEndpoint
from controller.notify import Notifier

log = logging.getLogger(__name__)


class LinkProcess(Companion):
    """The floor link and the metrics, in their own process, fed by the table's link socket."""

    def __init__(self, settings: Settings, notifier: Notifier | None = None) -> None:
        s = settings
        if not s.floor.enabled and not s.metrics.enabled:
            raise CompanionError("link: nothing to do: [floor] and [metrics] are both off")
        self.settings = s
        self.notifier = notifier or Notifier()
        self.stop_event = threading.Event()
        _public, link_path = socket_paths(s.feed_dir())
        self.feed = FeedClient(link_path, self._on_message, name="link")
        self.floor: Any = None
        if s.floor.enabled:
            from controller.link.floor_link import FloorLink

            lim = s.table.limits
            limits = {"minimum": lim.minimum_cents, "maximum": lim.maximum_cents,
                      "side_minimum": lim.side_minimum_cents, "side_maximum": lim.side_maximum_cents}  # fmt: skip
            self.floor = FloorLink(
                s.floor,
                s.journal.path,
                self.feed.send_ack,
                post_staff=self.feed.send_staff,  # the floor's staff list, verified, to the table
                on_trouble=self._on_trouble,
                limits=limits,
            )
        self.table_metrics = TableFamilies()
        self.registry: CollectorRegistry | None = None
        self._endpoint: MetricsEndpoint | None = None

    def _on_message(self, message: TableMessage) -> None:
        floor = self.floor
        if isinstance(message, Update):
            if floor is not None:
                floor.show(message.update.view)
        elif isinstance(message, Commit):
            if floor is not None:
                floor.wake()
        elif isinstance(message, Hello):
            if floor is not None:
                floor.show(message.view)
                floor.wake()
        elif isinstance(message, Metrics):
            self.table_metrics.take(message.text)

    def _on_trouble(self, trouble: Trouble | None) -> None:
        """The floor link's trouble changed (on paho's thread): the service's Status line says it."""
        broker = self.settings.floor.broker
        self.notifier.status(f"floor: {trouble.text}" if trouble is not None else f"floor: connected to {broker}")

    def _open_metrics(self) -> None:
        s = self.settings
        r = self.registry = CollectorRegistry(auto_describe=False)
        r.register(self.table_metrics)
        link_gauges(r, self.floor, self.feed)
        self._endpoint = MetricsEndpoint(r)
        self._endpoint.start(s.metrics.host, s.metrics.port, "the link runs without them")

    @property
    def address(self) -> tuple[str, int] | None:
        """``(host, port)`` of ``/metrics`` while served, else None."""
        return self._endpoint.address if self._endpoint is not None else None

    def open(self) -> None:
        if self.settings.metrics.enabled:
            self._open_metrics()
        self.feed.start()
        if self.floor is not None:
            self.floor.start()
            self.notifier.status(f"floor: connecting to {self.settings.floor.broker}")
        self.notifier.ready()

    def close(self) -> None:
        self.notifier.stopping()
        self.feed.close()
        if self.floor is not None:
            self.floor.close()
        if self._endpoint is not None:
            self._endpoint.stop()
