"""``shoe-floor history`` writes what people read in the one notation (docs/notation.md): the local time with
its zone, the result in words with the score Player first, the cards as ``10♠``; ``--json`` keeps the tokens."""

from __future__ import annotations

import json
from pathlib import Path

from controller.game.notation import hand_text, result_text
from controller.game.records import TableRecord
from floor.archive import Archive
from tests.floor.conftest import shoe_floor


def test_history_in_the_notation(tmp_path: Path, journal_records: list[TableRecord]) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    with Archive(url) as a:
        a.store(journal_records)
    tokens = shoe_floor("history", "--archive", url, "--json")
    coups = [json.loads(line) for line in tokens.stdout.splitlines()]
    assert any(card.startswith("T") for c in coups for card in c["player"] + c["banker"]), "--json keeps tokens"
    text = shoe_floor("history", "--archive", url, "--zone", "Europe/Berlin")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()[1:]
    assert len(lines) == len(coups)
    tens = 0
    for line, c in zip(lines, coups, strict=True):
        if not c["void"]:
            assert result_text(c["winner"], c["player_total"], c["banker_total"]) in line
        assert hand_text(c["player"]) in line and hand_text(c["banker"]) in line
        assert " CET " in line or " CEST " in line, line
        tens += any(card.startswith("T") for card in c["player"] + c["banker"])
        assert "T" not in line.split("  ")[-1].replace("Tie", ""), line  # no card token in what people read
    assert tens, "the journal deals tens"
    bad = shoe_floor("history", "--archive", url, "--zone", "Mars/Base")
    assert (
        bad.returncode == 2 and bad.stderr.strip() == "shoe-floor history: unknown time zone 'Mars/Base' (an IANA name)"
    )
