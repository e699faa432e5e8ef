"""The split-cash player (issue 25's check) through three real tables: ``shoe-sim --split-cash UID:4000:COUP`` at
each of three tables, the same card, seated coups apart, buying in $4,000 in cash at each through the table's
money.sock as the dealer screen does; each table's journal archived on one floor as its link publishes it, in the
order the buy-ins happened; the floor's cash log raises the $8,000 alert once, on the second table, and the
currency transaction report's $10,000 alert once, on the third (where the day's cash in was crossed), and
``shoe-floor cashlog`` adds the player's day up to the simulators' truth."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.journal import Journal
from floor.archive import AlertKind, Archive
from floor.cash_watch import CashWatch, gaming_day, gaming_days
from floor.surveillance import Surveillance
from tests.e2e.harness import Harness
from tests.e2e.test_reader_e2e import money_table
from tests.floor.conftest import shoe_floor

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

CARD = "E0040150C0000077"
TABLES = ("T1", "T2", "T3")
SEATED = {"T1": 1, "T2": 3, "T3": 5}  # the coup each table's split-cash player sits down at


@pytest.fixture
def tables(tmp_path: Path) -> Iterator[dict[str, Harness]]:
    made = {}
    for t in TABLES:
        (tmp_path / t).mkdir()
        made[t] = Harness(tmp_path / t)
    try:
        yield made
    finally:
        for h in made.values():
            h.close()


def test_cash_split_across_three_tables_raises_each_alert_once_where_it_was_crossed(
    tables: dict[str, Harness], tmp_path: Path
) -> None:
    for n, (t, h) in enumerate(tables.items()):
        options = money_table(h, decks=1, commission="payout")
        h.start_sim(
            "--decks", "1", "--spots-link", str(h.tmp / "spots"), "--players", "3", "--shoes", "1",
            "--buy-ins", str(h.tmp / "money.sock"), "--split-cash", f"{CARD}:4000:{SEATED[t]}",
            pace="0.05", seed=40 + n,
        )  # fmt: skip
        h.start_daemon(*options)
    for h in tables.values():
        h.wait_daemon_log("ready in")
    for h in tables.values():
        assert h.wait_sim(timeout=240) == 0
    time.sleep(0.5)  # the last commits
    for h in tables.values():
        assert h.stop_daemon() == 0
    # The truth: one $4,000 cash buy-in of the card at each table, at the coup it sat down at.
    split = {}
    for t, h in tables.items():
        [bought] = [e for e in h.truth_events() if e["event"] == "buy_in" and e.get("split_cash")]
        assert (bought["player_ref"], bought["cents"], bought["coup"]) == (CARD, 400_000, SEATED[t])
        split[t] = bought
    order = sorted(TABLES, key=lambda t: split[t]["t"])
    # Each table's records as its link publishes them, archived in the order the buy-ins came (a floor archives
    # each as it arrives); the cash log reads each table once.
    url = f"sqlite:///{tmp_path / 'archive.db'}"
    days = gaming_days("06:00", "UTC")
    with Archive(url) as archive:
        s = Surveillance(archive, watches=[CashWatch(days)])
        raised = []
        for t in order:
            with Journal.open(tables[t].journal, read_only=True) as j:
                records = [r.for_floor(t) for r in j.records()]
            mine = [r.body for r in records if r.kind == "buy_in" and r.body["player_ref"] == CARD]
            assert [(b["cents"], b["tender"], b["coup"]) for b in mine] == [(400_000, "cash", SEATED[t])]
            archive.store(records)
            archive.advance(t, "casino")
            raised += [(i.kind, i.table) for i in s.process(t, "casino") if i.kind in (AlertKind.CASH_APPROACHING,
                                                                                    AlertKind.CTR_DUE)]  # fmt: skip
        day = gaming_day(days, records[-1].at)
    assert raised == [(AlertKind.CASH_APPROACHING, order[1]), (AlertKind.CTR_DUE, order[2])]
    # shoe-floor cashlog: the player's day is the truth's three buy-ins
    out = shoe_floor("cashlog", "--archive", url, "--day", day, "--json")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    [total] = [x for x in lines if x["line"] == "day" and x["player_ref"] == CARD]
    assert total["cash_cents"] == sum(b["cents"] for b in split.values()) == 1_200_000
    assert (total["buy_ins"], total["tables"]) == (3, 3)
    mtl = [(x["table"], x["day_cash_cents"]) for x in lines if x["line"] == "mtl" and x["player_ref"] == CARD]
    assert mtl == [(order[0], 400_000), (order[1], 800_000), (order[2], 1_200_000)]  # each over $3,000: logged
