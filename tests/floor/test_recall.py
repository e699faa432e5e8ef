"""Game recall from the archive (PostgreSQL and SQLite): any coup by shoe and number, the coups of a shoe, the
shoes of a table and the records of one shoe, each compared with the real journal the table wrote."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from controller.game.records import TableRecord
from controller.journal import Journal
from floor.archive import Archive
from floor.pit import RECALL_REACH, edges_of, recall_neighbours
from tests.console import run_main
from tests.floor.conftest import as_table


def _journal_coups(path: Path) -> list[dict[str, object]]:
    journal = Journal.open(str(path), create=False, read_only=True)
    try:
        return [dict(c) for c in journal.coups()]
    finally:
        journal.close()


@pytest.mark.dialects
def test_recall_gives_the_journal_s_cards_for_every_coup(
    archive_url: str, journal_records: list[TableRecord], journal_path: Path
) -> None:
    with Archive(archive_url) as archive:
        archive.store(journal_records)
        archive.store(as_table(journal_records, "T2"))  # another table's coups never answer for T1's
        coups = [c for c in _journal_coups(journal_path) if c["coup"] is not None]
        assert coups
        shoes = sorted({int(c["shoe"]) for c in coups})  # type: ignore[call-overload]
        assert archive.shoes("T1") == shoes
        assert archive.shoes("nope") == []
        for c in coups:
            got = archive.recall("T1", int(c["shoe"]), int(c["coup"]))  # type: ignore[call-overload]
            assert got is not None, c
            if c["declared"]:
                assert got["table"] == "T1"
                assert (got["player"], got["banker"], got["winner"]) == (c["player"], c["banker"], c["winner"])
                assert (got["player_total"], got["banker_total"]) == (c["player_total"], c["banker_total"])
        assert archive.recall("T1", shoes[-1], 10_000) is None
        assert archive.recall("T1", shoes[-1] + 1, 1) is None
        # The coups of a shoe, in the order dealt, are the table's history of that shoe.
        for shoe in shoes:
            mine = [c for c in archive.coups("T1") if c["shoe"] == shoe]
            assert archive.shoe_coups("T1", shoe) == mine
        assert archive.shoe_coups("T1", shoes[-1] + 1) == []


@pytest.mark.dialects
def test_the_records_of_one_shoe_run_from_its_start_to_the_next(
    archive_url: str, journal_records: list[TableRecord]
) -> None:
    with Archive(archive_url) as archive:
        archive.store(journal_records)
        shoe = archive.shoes("T1")[0]
        records = archive.shoe_records("T1", shoe)
        assert records[0] == ("shoe", journal_records[[r.kind for r in journal_records].index("shoe")].body)
        assert records[0][1]["event"] == "start"
        coups = [b for k, b in records if k == "coup"]
        assert coups and all(b["shoe"] == shoe for b in coups)
        assert len(coups) == len(archive.shoe_coups("T1", shoe))
        assert archive.shoe_records("T1", shoe + 1) == []


def test_recall_reads_an_index_not_the_whole_table(tmp_path: Path, journal_records: list[TableRecord]) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    with Archive(url) as archive:
        archive.store(journal_records)
    conn = sqlite3.connect(tmp_path / "archive.db")
    plan = " ".join(
        str(row[-1])
        for row in conn.execute(
            "EXPLAIN QUERY PLAN SELECT seq FROM records WHERE \"table\" = 'T1' AND kind = 'coup'"
            " AND json_extract(body, '$.shoe') = 1 AND json_extract(body, '$.coup') = 5"
        )
    )
    conn.close()
    assert "records_coup" in plan, plan


def test_the_table_page_s_edge_chart_is_the_table_s_own_edges_command(
    archive_url: str, journal_records: list[TableRecord], journal_path: Path
) -> None:
    """The chart on the table page shows, coup by coup, the numbers `shoe-controller edges` prints at the table
    from its journal (the ones its advantage records used): one function, the archive's copy of the records."""
    out = run_main(["shoe-controller", "edges", "--journal", str(journal_path), "--json"])  # in this process
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert lines
    with Archive(archive_url) as archive:
        archive.store(journal_records)
        for shoe in archive.shoes("T1"):
            chart = edges_of(archive.shoe_records("T1", shoe))
            mine = [x for x in lines if x["shoe"] == shoe]
            assert chart is not None and mine
            assert chart["coups"] == [x["coup"] for x in mine]
            assert chart["cards_left"] == [x["cards_left"] for x in mine]
            for bet, values in chart["ev"].items():
                assert values == pytest.approx([x[bet] for x in mine], abs=1e-12)


def test_recall_s_previous_and_next_walk_every_coup_across_the_shoes() -> None:
    """Previous and next lead from each coup to the one the archive holds either side of it, across a shoe's end
    (a voided number counts once, cards set aside have none, a shoe with only those is passed over), and stop
    at either end."""
    shoes: dict[int, list[int | None]] = {3: [1, 2, 2, 3, None], 4: [None], 5: [1, 2], 9: [4, 7]}  # 3/2 voided once
    order = [(3, 1), (3, 2), (3, 3), (5, 1), (5, 2), (9, 4), (9, 7)]

    def coups_of(s: int) -> list[int | None]:
        return list(shoes[s])

    for i, (shoe, coup) in enumerate(order):
        before, after = recall_neighbours(sorted(shoes), coups_of, shoe, coup)
        want_before = None if i == 0 else dict(zip(("shoe", "coup"), order[i - 1], strict=True))
        want_after = None if i == len(order) - 1 else dict(zip(("shoe", "coup"), order[i + 1], strict=True))
        assert (before, after) == (want_before, want_after), (shoe, coup)
    # a coup number the shoe does not hold still has its neighbours (the recall itself says it is not there)
    assert recall_neighbours(sorted(shoes), coups_of, 9, 5) == ({"shoe": 9, "coup": 4}, {"shoe": 9, "coup": 7})
    # no further than RECALL_REACH shoes of set-aside cards only
    far: dict[int, list[int | None]] = {
        1: [1],
        **{s: [None] for s in range(2, 2 + RECALL_REACH)},
        2 + RECALL_REACH: [1],
    }
    assert recall_neighbours(sorted(far), lambda s: far[s], 2 + RECALL_REACH, 1) == (None, None)
