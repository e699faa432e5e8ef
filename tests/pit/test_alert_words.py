"""Every alert kind the floor raises has its word on the pit page (floor/static/items.js), so the feed never
shows a pit boss a bare identifier."""

from __future__ import annotations

import re
from pathlib import Path

from floor.archive import AlertKind

ITEMS = Path(__file__).resolve().parents[2] / "floor" / "static" / "items.js"


def test_every_alert_kind_has_a_word() -> None:
    source = ITEMS.read_text(encoding="utf-8")
    block = re.search(r"const KINDS = \{(.*?)\};", source, re.S)
    assert block is not None, "items.js has no KINDS map"
    words = dict(re.findall(r"(\w+): \"([^\"]+)\"", block.group(1)))
    kinds = {v for k, v in vars(AlertKind).items() if k.isupper()}
    missing = sorted(kinds - set(words))
    assert missing == [], f"alert kinds with no word on the pit page: {missing}"
    stray = sorted(set(words) - kinds)
    assert stray == [], f"words for kinds the floor never raises: {stray}"
