"""The record of truth: one JSON object per line, flushed at once, readable back."""

from __future__ import annotations

import json
from pathlib import Path

from hw_sim.truth import TruthLog, read_truth


def test_each_event_is_one_flushed_line(tmp_path: Path) -> None:
    path = tmp_path / "truth.jsonl"
    log = TruthLog(path.open("w", encoding="utf-8"))
    log.write("card", 10.0, shoe=1, seq=2, card="TH", role="burn")
    # flushed: visible to another reader before close
    assert json.loads(path.read_text()) == {
        "event": "card",
        "shoe": 1,
        "seq": 2,
        "card": "TH",
        "role": "burn",
        "t": 0.0,
    }
    log.write("declare", 10.25, shoe=1, coup=1)
    log.close()
    events = read_truth(str(path))
    assert [e["event"] for e in events] == ["card", "declare"]
    assert events[1]["t"] == 0.25


def test_a_partly_written_last_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "truth.jsonl"
    path.write_text('{"event": "card"}\n{"event": "dec')
    assert read_truth(str(path)) == [{"event": "card"}]
