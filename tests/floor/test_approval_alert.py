"""floor.surveillance: a supervisor locked out at a table (the third wrong PIN in a row, an ``approval_refused``
record ``locked_out``) raises one ``supervisor_locked_out`` alert naming who, and no other approval record does."""

from __future__ import annotations

from pathlib import Path

from floor.archive import AlertKind
from floor.surveillance import ShoeState, scan
from tests.record_journals import every_approval_journal


def test_a_supervisor_locked_out_is_one_alert(tmp_path: Path) -> None:
    with every_approval_journal(tmp_path / "j.db") as journal:
        records = [r.for_floor("T1") for r in journal.records()]
    alerts = [a for a in scan(ShoeState(), records).alerts if a.kind == AlertKind.SUPERVISOR_LOCKED_OUT]
    [alert] = alerts
    assert alert.table == "T1" and alert.extra["staff_id"] == "S1" and alert.extra["wrong_pins"] == 3
    assert "S1 entered a wrong PIN 3 times in a row approving a void" in alert.detail
    [locked] = [r for r in records if r.kind == "approval_refused" and r.body["why"] == "locked_out"]
    assert alert.seq == locked.seq and alert.key == f"supervisor_locked_out:T1:{locked.seq}"
