"""The health metrics, scraped over HTTP from a real table process's feed: the table (a Daemon, in this
process) dealt cards over a real pseudo-terminal keeps them, its link (a LinkProcess, in this process too,
reading the feed's real Unix socket) serves them; the counters and histograms move by exactly what was dealt,
and a port that cannot be bound is a logged fault, never the end of the table."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import tty
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from controller.config import MetricsSection, default_settings
from controller.journal import Journal
from controller.link.floor_trouble import Cause, Trouble, TroubleLog
from controller.link.process import LinkProcess
from controller.metrics import TableMetrics
from controller.table.daemon import Daemon
from tests.servers import free_port
from tests.waiting import until


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``GET /metrics``, keyed by (name, sorted labels)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@dataclass
class Table:
    daemon: Daemon
    master: int
    journal: Path

    def send(self, *lines: bytes) -> None:
        for line in lines:
            os.write(self.master, line + b"\r\n")
            time.sleep(0.01)

    def wait_for(self, what: str, check: Callable[[], object], timeout: float = 20.0) -> None:
        until(check, timeout, what, every=0.02)


@contextmanager
def running_table(tmp_path: Path, bind: str) -> Iterator[Table]:
    master, slave = os.openpty()
    tty.setraw(slave)
    port_path = os.ttyname(slave)
    os.close(slave)
    journal = tmp_path / "journal.db"
    settings = default_settings().with_overrides(
        port=port_path, dialect="ascii", journal=str(journal), pin_factory="mock"
    )
    settings = settings.model_copy(update={"metrics": MetricsSection.model_validate({"enabled": True, "bind": bind})})
    ready = threading.Event()
    daemon = Daemon(settings, on_ready=lambda _d: ready.set())
    runner = threading.Thread(target=daemon.run, name="test-daemon")
    runner.start()
    link = LinkProcess(settings)
    try:
        assert ready.wait(20), "the daemon did not get ready"
        assert daemon.link is not None and daemon.link.wait_open(10)
        link.open()
        yield Table(daemon, master, journal)
    finally:
        link.close()
        daemon.stop()
        runner.join(20)
        os.close(master)
    assert not runner.is_alive()


def cards_in(journal: Path) -> int:
    with Journal.open(journal, read_only=True) as j:
        return sum(1 for _i, body in j.inputs() if body["kind"] == "card")


CARDS = [b"H9", b"S2", b"DK", b"C5", b"HA", b"D3", b"ST"]


def test_the_endpoint_counts_what_the_table_dealt(tmp_path: Path) -> None:
    port = free_port()
    with running_table(tmp_path, f"127.0.0.1:{port}") as table:
        table.wait_for("link up", lambda: value(scrape(port), "shoe_link_up") == 1)
        before = scrape(port)
        assert value(before, "shoe_cards_read_total") == 0
        assert value(before, "shoe_floor_connected") == -1  # no floor link: unknown
        assert value(before, "shoe_table_feed_up") == 1
        table.send(*CARDS[:4], b"hello there", b"\x01\x02bad", *CARDS[4:], b"nonsense")
        table.wait_for("the cards journaled", lambda: cards_in(table.journal) == len(CARDS))
        # the table sends its metrics on the feed every second
        table.wait_for("all counted", lambda: value(scrape(port), "shoe_cards_read_total") == len(CARDS))
        table.wait_for(
            "the commits counted",
            lambda: value(scrape(port), "shoe_journal_commit_seconds_count") == table.daemon.loop.commit.stats.commits,  # type: ignore[union-attr]
        )
        after = scrape(port)
        loop = table.daemon.loop
        assert loop is not None
        assert value(after, "shoe_cards_read_total") == len(CARDS)
        assert value(after, "shoe_card_to_led_seconds_count") == len(CARDS)
        assert 0 < value(after, "shoe_card_to_led_seconds_sum") < len(CARDS) * 1.0
        assert value(after, "shoe_frames_rejected_total", reason="not_a_card") == 2
        assert value(after, "shoe_frames_rejected_total", reason="bad_bytes") == 1
        commits = value(after, "shoe_journal_commit_seconds_count") - value(before, "shoe_journal_commit_seconds_count")
        assert commits >= 1
        assert value(after, "shoe_journal_commit_seconds_count") == loop.commit.stats.commits
        size = value(after, "shoe_journal_bytes")
        files = os.path.getsize(table.journal) + os.path.getsize(f"{table.journal}-wal")
        assert 0 < size <= files  # read when sent; the journal only grows while we look


def test_a_port_in_use_is_a_logged_fault_and_the_table_deals_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        with (
            caplog.at_level(logging.ERROR, logger="controller.link.process"),
            running_table(tmp_path, f"127.0.0.1:{port}") as table,
        ):
            table.send(*CARDS)
            table.wait_for("the cards journaled", lambda: cards_in(table.journal) == len(CARDS))
        assert any("metrics: cannot serve" in r.getMessage() for r in caplog.records)
    finally:
        taken.close()


def test_metrics_off_by_default_serve_nothing(tmp_path: Path) -> None:
    assert default_settings().metrics.enabled is False
    assert default_settings().metrics.bind == "127.0.0.1:9108"


def test_two_tables_in_one_process_keep_their_own_counts() -> None:
    a, b = TableMetrics(), TableMetrics()
    a.card_read(0.001)
    assert b.cards._value.get() == 0
    assert a.start("127.0.0.1", 0) and b.start("127.0.0.1", 0)
    try:
        assert a.address is not None and b.address is not None
        assert value(scrape(a.address[1]), "shoe_cards_read_total") == 1
        assert value(scrape(b.address[1]), "shoe_cards_read_total") == 0
    finally:
        a.stop()
        b.stop()


def test_the_floor_gauges_read_the_floor_link_when_scraped() -> None:
    from prometheus_client import CollectorRegistry, generate_latest

    from controller.journal.ack import AckRefusals
    from controller.link.metrics import link_gauges

    @dataclass
    class LinkState:  # the attributes FloorLink keeps on its own thread
        connected: bool = False
        head: int = 0
        acked: int = 0
        ack_refusals: AckRefusals = field(default_factory=lambda: AckRefusals("test"))
        troubles: TroubleLog = field(default_factory=TroubleLog)
        failures: int = 0
        states_unsent: int = 0

    @dataclass
    class Feed:
        connected: bool = True

    registry = CollectorRegistry()
    link = LinkState()
    link_gauges(registry, link, Feed())

    def scrape() -> str:
        return generate_latest(registry).decode()

    assert "shoe_floor_connected 0.0" in scrape() and "shoe_floor_outbox_records 0.0" in scrape()
    link.connected, link.head, link.acked = True, 120, 100
    text = scrape()
    assert "shoe_floor_connected 1.0" in text and "shoe_floor_outbox_records 20.0" in text
    assert "shoe_table_feed_up 1.0" in text
    assert 'shoe_floor_acks_refused_total{reason="signature"} 0.0' in text
    link.ack_refusals.refuse("signature", None)
    assert 'shoe_floor_acks_refused_total{reason="signature"} 1.0' in scrape()
    assert 'shoe_floor_link_trouble{cause="dns"} 0.0' in text and 'shoe_floor_link_trouble{cause="tls"} 0.0' in text
    link.troubles.failed(Trouble(Cause.TLS, "TLS failed"), 0.0)
    text = scrape()
    assert 'shoe_floor_link_trouble{cause="tls"} 1.0' in text
    assert 'shoe_floor_connect_failures_total{cause="tls"} 1.0' in text
    assert "shoe_floor_link_failures_total 0.0" in text and "shoe_floor_states_unsent_total 0.0" in text
    link.failures, link.states_unsent = 2, 3
    text = scrape()
    assert "shoe_floor_link_failures_total 2.0" in text and "shoe_floor_states_unsent_total 3.0" in text


def test_the_link_refuses_metrics_that_do_not_parse_and_keeps_the_last_good_ones() -> None:
    from controller.link.metrics import TableFamilies

    families = TableFamilies()
    families.take("shoe_cards_read_total 3\n")
    families.take("shoe_cards_read_total {{{ not prometheus\n")
    assert families.refused == 1
    assert [m.samples[0].value for m in families.collect()] == [3.0]
