"""What the archive holds is checked where the pit reads it: a table's own key can sign a malformed record,
and the collector archives any well-formed TableRecord. A real SQLite archive holding such records; the pit's
table page and its tiles at start leave them out (counted) and show the rest."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

from controller.game.records import GENESIS_HASH, TableRecord, canonical_json, record_hash
from floor.archive import Archive
from floor.pit import Pit

GOOD_COUP = {"shoe": 1, "coup": 1, "declared": True, "void": False, "winner": "banker", "player": ["2S", "3H"],
             "banker": ["9D", "KC"], "player_total": 5, "banker_total": 9}  # fmt: skip
BODIES: list[tuple[str, dict[str, Any]]] = [
    ("shoe", {"event": "start", "shoe": 1, "decks": 8}),
    ("coup", GOOD_COUP),
    ("alarm", {"alarm": "link_down", "text": "LINK DOWN", "detail": "the link dropped"}),
    ("coup", {"shoe": 1, "coup": 2, "declared": True, "void": False, "winner": 5, "player": [1, 2], "banker": "KC"}),
    ("coup", {"shoe": 1, "coup": 3, "declared": True, "void": False, "winner": "tie", "player_pair": "x"}),
    ("advantage", {"shoe": 1, "coup": 3, "bet": 5, "ev": "x", "cards_left": "many"}),
    ("alarm", {"alarm": 5, "detail": [1]}),
]


def archive_with_junk(tmp_path: Path) -> str:
    return archive_of(tmp_path, BODIES)


def test_a_table_page_leaves_out_what_is_not_of_its_shape_and_draws_the_rest(tmp_path: Path) -> None:
    pit = Pit(archive_with_junk(tmp_path))
    pit.start(("127.0.0.1", 0), None)
    try:
        host, port = pit.address
        with urllib.request.urlopen(f"http://{host}:{port}/api/table/T1", timeout=10) as r:
            assert r.status == 200
            page = json.loads(r.read())
        current = page["current"]
        assert [c["coup"] for c in current["coups"]] == [1]
        assert [a["alarm"] for a in current["alarms"]] == ["link_down"]
        assert current["roads"]["layout"]["big_road"] == [[0, 0, "banker", 0, False, False]]
        # 2 coups listed (coups 2, 3) and 4 records (coups 2, 3, the advantage, the second alarm)
        assert page["skipped"] == 6
        tile = pit.snapshot()["tables"][0]  # started from the archive: its last good coup
        assert tile["last"]["coup"] == 1 and tile["last"]["player"] == ["2S", "3H"]
    finally:
        pit.close()


def archive_of(tmp_path: Path, bodies: list[tuple[str, dict[str, Any]]]) -> str:
    url = f"sqlite:///{tmp_path}/archive.db"
    prev, records = GENESIS_HASH, []
    for seq, (kind, body) in enumerate(bodies, 1):
        at = "2026-11-30T12:00:00.000Z"
        link = record_hash(prev, seq, at, kind, 1, seq, None, canonical_json(body))
        records.append(TableRecord("T1", seq, kind, at, 1, seq, None, body, prev, link))
        prev = link
    with Archive(url) as archive:
        assert archive.store(records)[0] == len(records)
    return url


def test_a_pit_started_mid_shift_shows_the_dealer_signed_in_shoes_back(tmp_path: Path) -> None:
    """The dealer signed in during shoe 1 and is still on duty in shoe 2: a pit (re)started now shows them on
    the tile (it replays only the current shoe, which has no dealer_in); one signed out since shows nobody."""
    badge = {"badge": "0004A1B2C3D4E501", "staff_as_of": "2026-11-30T06:00:00.000Z", "role": "dealer"}
    on_duty = [
        ("shoe", {"event": "start", "shoe": 1, "decks": 8}),
        ("dealer_in", {"shoe": 1, "coup": 1, "staff_id": "D7", **badge}),
        ("coup", GOOD_COUP),
        ("shoe", {"event": "start", "shoe": 2, "decks": 8}),
        ("coup", GOOD_COUP | {"shoe": 2}),
    ]
    pit = Pit(archive_of(tmp_path, on_duty))
    try:
        [tile] = pit.snapshot()["tables"]
        assert tile["last"]["shoe"] == 2 and tile["dealer"] == "D7"
    finally:
        pit.close()
    signed_out = [*on_duty, ("dealer_out", {"shoe": 2, "coup": 2, "staff_id": "D7", "reason": "badge_out"})]
    (tmp_path / "later").mkdir()
    pit = Pit(archive_of(tmp_path / "later", signed_out))
    try:
        assert pit.snapshot()["tables"][0]["dealer"] is None
    finally:
        pit.close()
