"""The whole floor link, end to end, with nothing played by the test: two table daemons (``shoe-controller run
--floor``) dealing from simulated shoes over ptys, a real Mosquitto, and two ``shoe-floor serve`` collectors
sharing the load into one archive (PostgreSQL and SQLite). After the shoes, and a collector SIGKILLed on the
way and restarted, the archive equals each table's journal record for record, its chains verify, and each
table has stored the floor's ack of its last record."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.e2e.harness import Harness
from tests.floor.conftest import (
    Keys,
    archived,
    archived_count,
    journal_of,
    serve_process,
    shoe_floor,
    stored_ack,
    trusted,
)
from tests.servers import Mosquitto
from tests.waiting import until

pytestmark = pytest.mark.e2e


def journal(path: Path) -> list[dict[str, object]]:
    return journal_of(path, path.parent.name)


@pytest.mark.dialects
def test_two_tables_two_collectors_one_killed_the_archive_is_every_journal(
    broker: Mosquitto, archive_url: str, tmp_path: Path, keys: Keys
) -> None:
    logs = [tmp_path / "floor-a.log", tmp_path / "floor-b.log"]
    collectors = [serve_process(broker, archive_url, f"floor-{i}", log, "--site", "s1") for i, log in enumerate(logs)]
    tables = [Harness(tmp_path / name) for name in ("t1", "t2")]
    try:
        for log in logs:
            until(lambda log=log: "subscribed" in log.read_text(), 30, f"{log.name} to subscribe")  # type: ignore[misc]
        for seed, h in enumerate(tables, start=3):
            h.tmp.mkdir()
            h.start_sim("--decks", "1", seed=seed, pace="0.005")
            h.start_daemon(
                "--floor", broker.url, "--site", "s1", "--table-id", h.tmp.name, *trusted(keys, archive_url, h.tmp.name)
            )
        until(lambda: archived_count(archive_url) >= 60, 60, "the first records archived")
        collectors[0].send_signal(signal.SIGKILL)  # mid-shoe
        collectors[0].wait(10)
        # systemd restarts it (Restart=always): its persistent session gets back what the broker had queued for
        # it (Mosquitto keeps a dead member's share of a shared subscription in that member's session)
        collectors[0] = serve_process(broker, archive_url, "floor-0", logs[0], "--site", "s1")
        for h in tables:
            assert h.wait_sim(timeout=180) == 0
        # The daemons go on journaling once their shoe has gone (the link down 3 s after the sim's end): wait for
        # the archive to hold the journal as it is then, record for record, nothing doubled, and its ack stored.
        for h in tables:

            def caught_up(h: Harness = h) -> bool:
                records = journal(h.journal)
                return archived(archive_url, h.tmp.name) == records and stored_ack(h.journal) == len(records)

            try:
                until(caught_up, 90, f"{h.tmp.name}'s journal archived and acknowledged", every=0.5)
            except AssertionError:
                assert archived(archive_url, h.tmp.name) == journal(h.journal)  # the difference, said
                raise
        # The daemons still journal (their shoes have gone), so a record may be archived by one collector before
        # the one before it by the other: verify until that fills, as it does (a real gap never would).
        said: list[str] = []

        def verified() -> bool:
            verify = shoe_floor("verify", "--archive", archive_url)
            said[:] = [verify.stdout + verify.stderr]
            return verify.returncode == 0

        try:
            until(verified, 60, "shoe-floor verify to pass", every=1.0)
        except AssertionError:
            raise AssertionError(said[0]) from None
        history = shoe_floor("history", "--archive", archive_url, "--json")
        coups = [json.loads(line) for line in history.stdout.splitlines()]
        assert {c["table"] for c in coups} == {"t1", "t2"} and all(c["declared"] or c["void"] for c in coups)
    finally:
        for proc in collectors:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(20)
        for h in tables:
            h.close()
