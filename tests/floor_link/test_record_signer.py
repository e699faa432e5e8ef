"""The floor link's signing process: its signatures are the ones the link would make itself (Ed25519 is
deterministic), a flush signs on another core, and a signing process killed mid-flush costs nothing but speed:
the link signs in its own process and every record still arrives, each with a signature that verifies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.link.record_signer import RecordSigner
from floor_protocol.signing import record_message, sign, verify
from tests.floor_link.floorside import TEST_TABLE_KEY, FloorSide
from tests.floor_link.test_publisher import Link
from tests.servers import Mosquitto


@pytest.mark.e2e
def test_the_childs_signatures_are_the_links_own() -> None:
    signer = RecordSigner(TEST_TABLE_KEY, "t1")
    signer.start()
    try:
        records = [(seq, f"{seq:064x}") for seq in range(1, 301)]
        signer.request(records)
        assert signer.busy and signer.asked_through == 300
        assert signer.collect(timeout=30)
        for seq, record_hash in records:
            assert signer.take(seq, record_hash) == sign(TEST_TABLE_KEY, record_message("t1", seq, record_hash))
        assert signer.take(1, records[0][1]) is None  # taken once
        signer.request([(7, "ab" * 32)])
        assert signer.collect(timeout=30)
        assert signer.take(7, "cd" * 32) is None  # a signature of another hash is not this record's
    finally:
        signer.close()
    assert not signer.running


@pytest.mark.e2e
def test_a_signing_process_killed_mid_flush_costs_nothing_but_speed(broker: Mosquitto, tmp_path: Path) -> None:
    link = Link(broker, tmp_path / "journal.db")
    link.write(20_000)
    side = FloorSide("127.0.0.1", broker.port, ack_interval=0.05)
    link.link.start()
    try:
        side.wait(lambda f: f.contiguous >= 2_000, 60, "the first records")
        signer = link.link.signer
        assert signer is not None and signer._process is not None
        os.kill(signer._process.pid, signal.SIGKILL)
        side.wait(lambda f: f.contiguous == 20_000, 120, "every record after the signer died")
    finally:
        link.close()
        side.close()
    assert link.link.signed_here > 0  # the link took over
    assert link.link.sent - link.link.signed_here > 2_000 - 256  # and the child had signed the first ones
    public = TEST_TABLE_KEY.public_key()
    assert all(verify(public, record_message("t1", r.seq, r.hash), r.sig) for r in side.by_seq.values())


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.e2e
def test_the_signing_process_ends_with_a_link_killed_outright(tmp_path: Path) -> None:
    """The link SIGKILLed: its signing process (holding the table's key) sees its input end and goes too."""
    script = (
        "import sys, time\n"
        "from controller.link.record_signer import RecordSigner\n"
        "from floor_protocol.signing import generate_key\n"
        "s = RecordSigner(generate_key(), 't1'); s.start()\n"
        "print(s._process.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    link = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert link.stdout is not None
        signer_pid = int(link.stdout.readline())
        assert _alive(signer_pid)
        link.send_signal(signal.SIGKILL)
        link.wait(10)
        deadline = time.monotonic() + 10
        while _alive(signer_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(signer_pid), "the signing process outlived the link"
    finally:
        if link.poll() is None:
            link.kill()
            link.wait(10)
