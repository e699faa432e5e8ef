"""Issue 8 through the real daemon on a real pty with the simulator: a HELLO right behind a card not yet
committed, a shoe that repeats its session id at every boot, and the rule that every card the shoe reads
ends up in the record exactly once (in a coup, a burn, or a set-aside/void record) across reboots."""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path

import pytest

from tests.e2e.harness import Harness

pytestmark = pytest.mark.e2e


def recorded_cards(h: Harness) -> Counter[str]:
    """Every card token the journal's derived records place: coups (hands, void cards, dummy hand) and burns."""
    out: Counter[str] = Counter()
    for r in h.journal_records():
        body = json.loads(r.body)
        if r.kind == "coup":
            for field in ("player", "banker", "cards", "dummy_hand"):
                out.update(body.get(field) or [])
        elif r.kind == "burn" and body.get("card"):
            out[body["card"]] += 1
    return out


def run(h: Harness, tmp: Path, *sim_args: str, reboots_at: tuple[int, ...]) -> None:
    script = tmp / "script.jsonl"
    script.write_text("".join(json.dumps({"at_card": n, "fault": "reboot"}) + "\n" for n in reboots_at))
    h.start_sim("--decks", "1", "--script", str(script), *sim_args, seed=5)
    h.start_daemon()
    assert h.wait_sim(timeout=180) == 0
    assert h.daemon is not None and h.daemon.poll() is None, "the daemon exited during the run"
    assert h.stop_daemon(signal.SIGTERM) == 0


@pytest.mark.parametrize("repeat", [False, True], ids=["fresh-ids", "repeated-id"])
def test_every_card_read_is_recorded_exactly_once_across_shoe_reboots(
    harness: Harness, tmp_path: Path, repeat: bool
) -> None:
    extra = ("--repeat-session-id",) if repeat else ()
    run(harness, tmp_path, *extra, reboots_at=(3, 14, 27, 40))
    truth = harness.truth_events()
    assert len([e for e in truth if e["event"] == "reboot"]) == 4
    hellos = {e["session"] for e in truth if e["event"] == "hello"}
    assert len(hellos) == (1 if repeat else 5)
    cards = Counter(e["card"] for e in truth if e["event"] == "card")
    assert recorded_cards(harness) == cards
    log = harness.daemon_logs[-1].read_text()
    assert "cannot acknowledge" not in log
    # the simulator dealt the whole shoe: the controller's ACKs reached every boot (no wedge)
    assert [e["reason"] for e in truth if e["event"] == "shoe_end"] == ["shoe closed"]
    keys = {r.session for r in harness.journal_records() if r.kind == "input" and r.session is not None}
    assert len(keys) == 5  # five boots, five journal sessions, even when the id repeats


def test_a_reboot_between_coups_halts_nothing(harness: Harness, tmp_path: Path) -> None:
    """Card 3 of a 1-deck shoe is a burn card: the reboot lands before the first coup; no coup is voided."""
    run(harness, tmp_path, reboots_at=(3,))
    coups = harness.journal_coups()
    assert coups and not [c for c in coups if c["void"]]
    alarms = [json.loads(r.body)["alarm"] for r in harness.journal_records() if r.kind == "alarm"]
    assert "shoe_rebooted" not in alarms
