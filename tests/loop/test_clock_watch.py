"""The table records whether its clock is synchronised (issue 18 section 2): the kernel's first answer and each
change are journaled as a ``clock`` input and said on the log (a WARNING while it is not), read at quiet moments,
never more than once a minute; a real daemon journals what the kernel says here."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from controller.game.table import TableRules, TableState
from controller.journal import Journal
from controller.table.clock import ClockStatus, read_clock_status
from controller.table.loop import LoopConfig, ShoePort, TableLoop
from controller.table.wire import AsciiWire
from tests.e2e.harness import Harness
from tests.waiting import until


def clock_records(journal: Journal) -> list[dict[str, object]]:
    return [b for _id, b in journal.inputs() if b["kind"] == "clock"]


def test_the_first_answer_and_each_change_are_journaled_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    answers = [ClockStatus(False, 16_000_000, "not synchronised")] * 3 + [ClockStatus(True, 1_200, "synchronised")] * 2
    asked: list[ClockStatus] = []
    now = [0.0]

    def kernel() -> ClockStatus:
        asked.append(answers[min(len(asked), len(answers) - 1)])
        return asked[-1]

    with Journal.open(tmp_path / "j.db") as journal:
        loop = TableLoop(
            TableState(TableRules(decks=1)),
            journal,
            [ShoePort(AsciiWire(), lambda b: None)],
            config=LoopConfig(clock=lambda: now[0], clock_status=kernel),
        )
        with caplog.at_level(logging.INFO, logger="controller.table.loop.loop"):
            for t in (0.0, 1.0, 59.0, 60.0, 120.0, 180.0, 240.0):
                now[0] = t
                loop._quiet_time()  # what the loop runs after an iteration with nothing read
        assert len(asked) == 5  # at 0, 60, 120, 180, 240: once a minute, not on every quiet moment
        records = clock_records(journal)
    assert [(r["synchronised"], r["max_error_us"]) for r in records] == [(False, 16_000_000), (True, 1_200)]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "not synchronised" in warnings[0] and "NTP" in warnings[0]
    assert any("synchronised again" in r.getMessage() for r in caplog.records if r.levelno == logging.INFO)


@pytest.mark.e2e
def test_a_daemon_journals_what_the_kernel_says_of_its_clock(tmp_path: Path) -> None:
    kernel = read_clock_status()
    with Harness(tmp_path / "t") as h:
        h.tmp.mkdir()
        h.start_sim("--decks", "1", pace="0.05")
        h.start_daemon()
        h.wait_daemon_log("ready in")
        until(lambda: any(b.get("kind") == "clock" for b in h.journal_inputs()), 30, "the clock record")
        record = next(b for b in h.journal_inputs() if b.get("kind") == "clock")
        assert record["synchronised"] == kernel.synchronised
        if kernel.synchronised is False:
            until(lambda: "clock is not synchronised" in h.daemon_logs[-1].read_text(), 10, "the warning")
        assert h.wait_sim(120) == 0
