"""What a pit tile says of a table, from the messages the pit takes (:meth:`floor.pit.Pit.on_message`).

The advantage flags: one per wager and shoe, raised or cleared (a wager whose edge goes up and down changes its
flag's state and counts its raises, it never adds a flag or flickers one away); a new shoe clears them. The
table's state in the pit's words: dealing, shoe change, closed, link down. The game from the shoe's start
record. Bad money records are refused and counted, never folded into the shift's figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from floor.archive import Archive
from floor.pit import Pit

TOPIC = "baccarat/s1/T1/"
AT = "2026-11-30T12:00:00.000Z"


def record(kind: str, seq: int, **body: Any) -> bytes:
    return json.dumps({
        "v": 3, "table": "T1", "seq": seq, "kind": kind, "at": AT, "session": 1, "number": None, "cause": None,
        "prev": "0" * 64, "hash": "1" * 64, "body": body,
    }).encode()  # fmt: skip


def state(due: str = "deal", alarms: tuple[str, ...] = (), **more: Any) -> bytes:
    return json.dumps(more | {
        "v": 1, "site": "s1", "table": "T1", "at": AT, "shoe": 1, "coup": 3, "due": due, "cards_dealt": 0,
        "cards_remaining": 400, "cut_card_out": False, "last_coup": False, "alarms": list(alarms),
        "counts": {"coups": 2, "banker": 1, "player": 1, "tie": 0, "natural": 0, "player_pair": 0,
                   "banker_pair": 0},
        "roads": {"bead": "BP"}, "journal": {"head": 0, "acked": 0}, "player": [], "banker": [], "result": None,
    }).encode()  # fmt: skip


def tile(pit: Pit) -> dict[str, Any]:
    return dict(next(t for t in pit.snapshot()["tables"] if t["table"] == "T1"))


def make_pit(tmp_path: Path) -> Pit:
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    wall = 1_796_040_000_000  # 2026-11-30T12:00Z: the records' shift
    return Pit(url, wall_ms=lambda: wall)


def test_an_advantage_flag_is_raised_and_cleared_per_wager_never_flickered(tmp_path: Path) -> None:
    pit = make_pit(tmp_path)
    try:
        rules = {"name": "commission", "description": "Banker pays 1:1 less 5 % commission", "offered": ["banker"],
                 "pays": {}}  # fmt: skip
        pit.on_message(TOPIC + "record", record("shoe", 1, event="start", shoe=1, decks=8, rules=rules))
        assert tile(pit)["game"]["name"] == "commission" and tile(pit)["game"]["decks"] == 8
        flap = {"bet": "dragon_7", "shoe": 1, "cards_left": 60}
        for i, (kind, ev) in enumerate([("advantage", 0.021), ("advantage_cleared", -0.01), ("advantage", 0.03)]):
            pit.on_message(TOPIC + "record", record(kind, 2 + i, coup=40 + i, ev=ev, **flap))
        flags = tile(pit)["advantage"]
        assert [(f["bet"], f["state"], f["raised"], f["ev"]) for f in flags] == [("dragon_7", "raised", 2, 0.03)]
        pit.on_message(TOPIC + "record", record("advantage_cleared", 9, coup=44, ev=-0.02, **flap))
        (flag,) = tile(pit)["advantage"]
        assert (flag["state"], flag["raised"], flag["peak"]) == ("cleared", 2, 0.03)
        pit.on_message(TOPIC + "record", record("shoe", 10, event="start", shoe=2, decks=8, rules=rules))
        assert tile(pit)["advantage"] == []
    finally:
        pit.close()


def test_the_table_s_state_in_the_pit_s_words(tmp_path: Path) -> None:
    pit = make_pit(tmp_path)
    try:
        pit.on_message(TOPIC + "status", b"online")
        pit.on_message(TOPIC + "state", state())
        assert tile(pit)["phase"] == "dealing" and tile(pit)["limits"] is None  # an older table says none
        limits = {"minimum": 2500, "maximum": 500000, "side_minimum": 500, "side_maximum": 50000}
        pit.on_message(TOPIC + "state", state(limits=limits))
        assert tile(pit)["limits"] == limits
        pit.on_message(TOPIC + "state", state(due="new_shoe"))
        assert tile(pit)["phase"] == "shoe change"
        pit.on_message(TOPIC + "state", state(alarms=("link_down",)))
        assert tile(pit)["phase"] == "link down"
        pit.on_message(TOPIC + "status", b"offline")
        assert tile(pit)["phase"] == "closed"
        assert tile(pit)["counts"] == {"coups": 2, "banker": 1, "player": 1, "tie": 0, "natural": 0,
                                       "player_pair": 0, "banker_pair": 0}  # fmt: skip
    finally:
        pit.close()


def test_a_bad_money_record_is_refused_and_not_counted(tmp_path: Path) -> None:
    pit = make_pit(tmp_path)
    try:
        good: dict[str, Any] = {"shoe": 1, "coup": 1, "seat": 2, "bet": "banker", "stake": 2500, "outcome": "lose",
                                "win": 0, "commission": 0, "net": -2500, "commission_owed": 0, "box": 0}  # fmt: skip
        pit.on_message(TOPIC + "record", record("settlement", 1, **good))
        bads: list[dict[str, Any]] = [{"stake": "2500"}, {"net": 1.5}, {"bet": "roulette"}, {"stake": -5}]
        for n, bad in enumerate(bads):
            pit.on_message(TOPIC + "record", record("settlement", 2 + n, **{**good, **bad}))
        pit.on_message(TOPIC + "record", record("commission", 9, shoe=1, seat=2, owed=100, collected="all",
                                                uncollected=0, over_collected=0, why="shoe_end"))  # fmt: skip
        money = tile(pit)["money"]
        assert (money["handle"], money["win"], money["wagers"]) == (2500, 2500, 1)
        assert pit.stats["refused_record"] == 5
    finally:
        pit.close()


def test_the_big_road_on_the_tile_carries_the_pairs_of_its_cells(tmp_path: Path) -> None:
    """The state's ``pairs`` beside its bead string: each big-road cell on the tile with the pairs of its win and
    its ties; a state without them (an older table) gives cells without pairs; a new pair redraws the road."""

    def with_roads(**roads: str) -> bytes:
        return json.dumps(json.loads(state()) | {"roads": roads}).encode()

    pit = make_pit(tmp_path)
    try:
        pit.on_message(TOPIC + "state", with_roads(bead="PTB", pairs=".xb"))
        assert tile(pit)["big_road"] == [[0, 0, "player", 1, True, True], [1, 0, "banker", 0, False, True]]
        pit.on_message(TOPIC + "state", with_roads(bead="PTB", pairs="..."))
        assert tile(pit)["big_road"] == [[0, 0, "player", 1, False, False], [1, 0, "banker", 0, False, False]]
        pit.on_message(TOPIC + "state", with_roads(bead="PTBB"))
        assert [c[4:] for c in tile(pit)["big_road"]] == [[False, False]] * 3
        assert not pit.stats["refused"]
    finally:
        pit.close()


def test_the_tile_shows_the_dealer_on_duty_by_staff_id(tmp_path: Path) -> None:
    pit = make_pit(tmp_path)
    try:
        badge = {"badge": "0004A1B2C3D4E501", "staff_as_of": AT, "shoe": 1, "coup": 3}
        pit.on_message(TOPIC + "record", record("dealer_in", 1, staff_id="D1", role="dealer", **badge))
        assert tile(pit)["dealer"] == "D1"
        pit.on_message(TOPIC + "record", record("dealer_out", 2, shoe=1, coup=4, staff_id="D1", reason="replaced"))
        pit.on_message(TOPIC + "record", record("dealer_in", 3, staff_id="D2", role="dealer", **badge))
        assert tile(pit)["dealer"] == "D2"
        pit.on_message(TOPIC + "record", record("dealer_out", 4, shoe=1, coup=5, staff_id="D1", reason="badge_out"))
        assert tile(pit)["dealer"] == "D2"  # not the one on duty: D2 stays
        pit.on_message(TOPIC + "record", record("dealer_in", 5, staff_id="D9", role="croupier", **badge))
        assert tile(pit)["dealer"] == "D2"  # a body that is not its kind's changes nothing
        pit.on_message(TOPIC + "record", record("dealer_out", 6, shoe=1, coup=6, staff_id="D2", reason="badge_out"))
        assert tile(pit)["dealer"] is None
    finally:
        pit.close()
