"""Helpers the journal's tests share (and ``tests/cli/test_history.py``): a small journal, a coup body, a raw
connection for editing a file by hand."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from controller.journal import Journal, JournalError

REPO = Path(__file__).resolve().parents[2]


TS = "2025-03-01T20:15:00.000+00:00"


def coup_body(shoe: int, coup: int, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "shoe": shoe,
        "coup": coup,
        "declared": True,
        "void": False,
        "misdraw": False,
        "dummy_hand": [],
        "player": ["2H", "3S"],
        "banker": ["AD", "KC", "8D"],
        "player_total": 5,
        "banker_total": 9,
        "winner": "banker",
        "natural": False,
        "player_pair": False,
        "banker_pair": False,
    }
    body.update(extra)
    return body


TOKENS = ("2H", "3S", "4D", "5C", "6H", "7S", "8D", "9C", "TH", "JS", "QD", "KC", "AH")


def build(path: Path, inputs: int = 6) -> None:
    """A small journal: cards from session 7, a declare with its coup after every fourth card."""
    with Journal.open(path) as j:
        coup = 0
        for n in range(1, inputs + 1):
            j.append({"kind": "card", "card": TOKENS[n % len(TOKENS)]}, session=7, number=n, ts=TS)
            if n % 4 == 0:
                coup += 1
                j.append({"kind": "declare"}, ts=TS, derived=[coup_body(1, coup)])


def raw(path: Path) -> sqlite3.Connection:
    """A plain sqlite3 connection, the way someone editing the file by hand would open it."""
    return sqlite3.connect(path, isolation_level=None)


def assert_one_line(exc: JournalError, path: Path, *words: str) -> None:
    text = str(exc)
    assert "\n" not in text
    assert str(path) in text
    for word in words:
        assert word in text, text
