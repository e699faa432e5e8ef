"""One fact, one place (issue 24): what used to be written several ways is written once, and stays so.

Each test names the one place and fails when a second copy comes back: money for people
(controller/game/notation.py ``money_text``), the stop signals (commandline/signals.py), a topic level
(floor_protocol/topics.py ``is_level``, tests/floor_protocol/test_topics.py), and Prometheus by collectors
that read at scrape (floor/metrics.py, the link's in controller/companions.py).
"""

from __future__ import annotations

import ast
import signal
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHELLS = ("controller", "floor", "hw_sim", "commandline", "eventstream", "floor_protocol", "mqttloop")


def _modules() -> list[Path]:
    return [m for package in SHELLS for m in sorted((ROOT / package).rglob("*.py"))]


def dollar_formatters(source: str) -> list[int]:
    """Lines of f-strings that write a dollar sign beside arithmetic on cents (``// 100``, ``% 100``, ``/ 100``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
            sums = [
                n
                for v in node.values
                if isinstance(v, ast.FormattedValue)
                for n in ast.walk(v.value)
                if isinstance(n, ast.BinOp) and isinstance(n.right, ast.Constant) and n.right.value == 100
            ]
            if "$" in text and sums:
                found.append(node.lineno)
    return found


def test_money_for_people_is_written_by_one_function() -> None:
    one = ROOT / "controller" / "game" / "notation.py"
    copies = [
        f"{m.relative_to(ROOT)}:{line}" for m in _modules() if m != one for line in dollar_formatters(m.read_text())
    ]
    assert copies == [], "write money with controller.game.notation.money_text"
    assert dollar_formatters('x = f"{s}${c // 100:,}.{c % 100:02d}"') == [1]  # the check finds a copy


def test_the_stop_signals_raise_system_exit_in_one_place() -> None:
    from commandline.signals import STOP_SIGNALS, raise_system_exit

    assert STOP_SIGNALS == (signal.SIGTERM, signal.SIGHUP)
    with pytest.raises(SystemExit) as raised:
        raise_system_exit(signal.SIGTERM, None)
    assert raised.value.code == 143
    handlers = [
        str(m.relative_to(ROOT))
        for m in _modules()
        for node in ast.walk(ast.parse(m.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name.lstrip("_") == "raise_system_exit"
    ]
    assert handlers == ["commandline/signals.py"]


PUSHED = {"Counter", "Gauge", "Histogram", "Summary", "REGISTRY"}


def test_no_server_pushes_into_prometheus_metric_objects_but_the_tables_loop() -> None:
    """The link and shoe-floor serve expose their metrics through collectors that read the state at scrape;
    only the table's own counts (controller/metrics.py, counted by the loop and relayed by the link) are
    prometheus_client Counters and Gauges."""
    pushers = []
    for module in _modules():
        for node in ast.walk(ast.parse(module.read_text())):
            names = {a.name for a in node.names} if isinstance(node, ast.ImportFrom) else set()
            if isinstance(node, ast.ImportFrom) and node.module == "prometheus_client" and names & PUSHED:
                pushers.append(str(module.relative_to(ROOT)))
    assert pushers == ["controller/metrics.py"]


def test_the_floors_metrics_are_read_when_scraped() -> None:
    from floor.collector import Stats
    from floor.metrics import CollectorCounts, PitCounts, exposition

    stats = Stats()
    pit: Counter[str] = Counter()  # as the pit counts (Pit.stats)
    scrape = exposition(CollectorCounts(lambda: stats), PitCounts(pit, ("state", "record")))
    assert b"shoe_floor_received_total 0.0" in scrape()
    stats.received, pit["refused_record"] = 7, 2  # the threads count; nothing is pushed
    text = scrape().decode()
    assert "shoe_floor_received_total 7.0" in text
    assert 'shoe_floor_pit_refused_total{message="record"} 2.0' in text
    assert 'shoe_floor_pit_refused_total{message="state"} 0.0' in text


def test_the_floor_writes_its_stamps_one_way() -> None:
    """floor/ stamps its alerts and archive rows and the cutoff it compares them with through
    commandline.times.utc_stamp (two copies and a third form, "+00:00" then replaced, before)."""
    import re
    from datetime import UTC, datetime, timedelta, timezone

    from commandline.times import utc_stamp

    assert utc_stamp(datetime(2026, 12, 1, 17, 4, 5, 123456, tzinfo=UTC)) == "2026-12-01T17:04:05.123Z"
    assert utc_stamp(datetime(2026, 12, 1, 18, 4, 5, tzinfo=timezone(timedelta(hours=1)))) == "2026-12-01T17:04:05.000Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", utc_stamp())
    written = [
        f"{m.relative_to(ROOT)}"
        for m in sorted((ROOT / "floor").rglob("*.py"))
        if re.search(r"isoformat\(timespec=|\+00:00\", \"Z\"", m.read_text())
    ]
    assert written == []
