"""A shoe whose HELLO strings are not printable text (a serial padded with NUL bytes, a control byte in the
firmware version): the table refuses the HELLO as a protocol error (docs/protocol.md 2.4, BAD_PAYLOAD),
says so once on its log, counts it like any rejected frame, and journals nothing of it; the shoe's cards
still play. Against the real simulator over a real pty and a real table process, and the wire itself."""

from __future__ import annotations

import pytest

from controller.table.wire import BinaryWire, WireInput, WireLink, WireNoise
from firmware_protocol.binary import encode
from firmware_protocol.messages import Heartbeat, Hello
from firmware_protocol.session import ControllerSession
from tests.e2e.harness import Harness
from tests.e2e.test_daemon_e2e import assert_matches_truth

SESSION = 0x1A2B3C4D


@pytest.mark.e2e
def test_a_hello_with_a_nul_padded_serial_is_refused_said_once_and_never_journaled(harness: Harness) -> None:
    harness.start_sim("--decks", "1", "--serial-number", "SH-00417\\x00\\x00", seed=7)
    harness.start_daemon()
    assert harness.wait_sim(timeout=120) == 0
    assert harness.stop_daemon() == 0
    assert not [b for b in harness.journal_inputs() if b["kind"] == "hello"]
    texts = [str(r.body) for r in harness.journal_records()]  # each body as the journal holds it (JSON text)
    assert texts and not [t for t in texts if "\x00" in t or "\\u0000" in t or "SH-00417" in t]
    assert_matches_truth(harness, sequenced=True)  # every card still played, once
    log = harness.daemon_logs[-1].read_text()
    refused = [line for line in log.splitlines() if "HELLO refused" in line]
    assert len(refused) == 1, log
    assert "serial number is not printable text: byte 8 is 0x00" in refused[0]
    assert "Traceback" not in log


@pytest.mark.e2e
def test_a_printable_hello_is_journaled_as_before(harness: Harness) -> None:
    harness.start_sim("--decks", "1", "--serial-number", "SH-00417", "--firmware-version", "4.2 (B)", seed=7)
    harness.start_daemon()
    assert harness.wait_sim(timeout=120) == 0
    assert harness.stop_daemon() == 0
    [hello] = [b for b in harness.journal_inputs() if b["kind"] == "hello"]
    assert (hello["serial_number"], hello["firmware_version"]) == ("SH-00417", "4.2 (B)")
    assert "HELLO refused" not in harness.daemon_logs[-1].read_text()


def test_the_wire_counts_a_refused_hello_like_any_rejected_frame_and_passes_no_hello_on() -> None:
    wire = BinaryWire(ControllerSession())
    data = encode(1, Hello("1.4.2\x1b[2J", "SH-00417", 1, SESSION)) + encode(0, Heartbeat(SESSION))
    events = wire.receive(data, 0.0)
    noise = [e for e in events if isinstance(e, WireNoise)]
    assert [(n.reason, n.message_type) for n in noise] == [("bad_payload", 0x01)]
    assert "firmware version is not printable text: byte 5 is 0x1b" in noise[0].detail
    assert wire.noise.rejected_total == 1
    assert not [e for e in events if isinstance(e, WireInput) and e.body.get("kind") == "hello"]
    assert not [e for e in events if isinstance(e, WireLink) and e.up]  # no HELLO: the link waits to join
