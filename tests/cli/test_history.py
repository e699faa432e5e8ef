"""``shoe-controller history`` and ``shoe-controller journal verify`` against real journal files: the JSON Lines
contract, the filters, read-only use beside a live writer (as a real process), and the one-line refusals
(exit 2, no traceback), in process."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from controller.journal import SCHEMA_VERSION, Journal
from tests.console import Result, run_main, run_script
from tests.journal.helpers import coup_body

REPO = Path(__file__).resolve().parents[2]

#: The fields scripts rely on (the replay fields plus the journal's own).
CONTRACT = {
    "coup",
    "player",
    "banker",
    "player_total",
    "banker_total",
    "winner",
    "natural",
    "player_pair",
    "banker_pair",
    "shoe",
    "ts",
    "void",
    "declared",
    "misdraw",
    "dummy_hand",
}


def cli(*args: str) -> Result:
    return run_main(["shoe-controller", *args])


def declared(shoe: int, coup: int, **extra: Any) -> dict[str, Any]:
    return coup_body(shoe, coup, **extra)


#: A voided coup as the daemon's table loop records it: the cards dealt, no hands, no result.
VOIDED = {
    "shoe": 2,
    "coup": 2,
    "declared": False,
    "void": True,
    "misdraw": True,
    "dummy_hand": ["7C"],
    "cards": ["4H", "5D", "6S"],
    "winner": None,
}


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    path = tmp_path / "journal.db"
    with Journal.open(path) as j:
        j.append({"kind": "declare"}, ts="2025-03-01T20:01:00+00:00", derived=[declared(1, 1)])
        j.append(
            {"kind": "declare"},
            ts="2025-03-01T20:02:00+00:00",
            derived=[
                declared(
                    1,
                    2,
                    player=["9H", "9S"],
                    banker=["KD", "3C"],
                    player_total=8,
                    banker_total=3,
                    winner="player",
                    natural=True,
                    player_pair=True,
                )
            ],
        )
        j.append({"kind": "declare"}, ts="2025-03-01T20:03:00+00:00", derived=[declared(2, 1, winner="tie")])
        j.append({"kind": "void"}, ts="2025-03-01T20:04:00+00:00", derived=[VOIDED])
    return path


def lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def test_history_json_lines_carry_the_contract_fields(journal: Path) -> None:
    result = cli("history", "--journal", str(journal), "--json")
    assert result.returncode == 0, result.stderr
    coups = lines(result.stdout)
    assert [(c["shoe"], c["coup"]) for c in coups] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    for c in coups:
        assert set(c) >= CONTRACT
    second = coups[1]
    assert second["ts"] == "2025-03-01T20:02:00+00:00"
    assert (second["winner"], second["player_total"], second["banker_total"]) == ("player", 8, 3)
    assert second["natural"] is True and second["player_pair"] is True and second["banker_pair"] is False
    assert second["player"] == ["9H", "9S"] and second["banker"] == ["KD", "3C"]
    voided = coups[3]
    assert (voided["void"], voided["declared"], voided["winner"]) == (True, False, None)
    assert voided["dummy_hand"] == ["7C"]
    # fields a voided coup lacks are filled, so every line has the same keys; extra stored fields follow
    assert (voided["player"], voided["banker"], voided["player_total"]) == ([], [], None)
    assert voided["natural"] is False
    assert voided["cards"] == ["4H", "5D", "6S"]
    assert list(voided)[: len(coups[0])] == list(coups[0])


def test_history_last_and_shoe_filters(journal: Path) -> None:
    last2 = lines(cli("history", "--journal", str(journal), "--json", "--last", "2").stdout)
    assert [(c["shoe"], c["coup"]) for c in last2] == [(2, 1), (2, 2)]
    shoe1 = lines(cli("history", "--journal", str(journal), "--json", "--shoe", "1").stdout)
    assert [(c["shoe"], c["coup"]) for c in shoe1] == [(1, 1), (1, 2)]
    both = lines(cli("history", "--journal", str(journal), "--json", "--shoe", "1", "--last", "1").stdout)
    assert [(c["shoe"], c["coup"]) for c in both] == [(1, 2)]


def test_history_table_is_one_line_per_coup(journal: Path) -> None:
    result = cli("history", "--journal", str(journal))
    assert result.returncode == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    assert "shoe" in header and "coup" in header
    assert len(rows) == 4
    # The notation people read (docs/notation.md): the result with its score Player first, cards as 10♠.
    assert "Banker wins · P 5 – B 9" in rows[0] and "2♥ 3♠" in rows[0] and "A♦ K♣ 8♦" in rows[0]
    assert "Player wins · P 8 – B 3" in rows[1] and "natural" in rows[1] and "P pair" in rows[1]
    assert "Tie · P" in rows[2]
    assert "VOID" in rows[3] and "misdraw: 7♣" in rows[3] and "cards: 4♥ 5♦ 6♠" in rows[3]
    assert "AD" not in result.stdout and "BANKER" not in result.stdout
    assert rows[0].startswith("2025-03-01 20:01:00")


@pytest.mark.e2e
def test_history_runs_beside_a_live_writer(journal: Path) -> None:
    with Journal.open(journal) as live:
        live.append({"kind": "declare"}, derived=[declared(2, 3)])
        result = run_script(["shoe-controller", "history", "--journal", str(journal), "--json", "--last", "1"])
        assert result.returncode == 0, result.stderr
        assert [(c["shoe"], c["coup"]) for c in lines(result.stdout)] == [(2, 3)]
        verify = run_script(["shoe-controller", "journal", "verify", "--journal", str(journal)])
        assert verify.returncode == 0, verify.stderr
        # and the reader left the writer able to carry on
        assert live.append({"kind": "declare"}) is not None


def test_history_of_an_empty_journal_prints_nothing(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    Journal.open(path).close()
    result = cli("history", "--journal", str(path), "--json")
    assert (result.returncode, result.stdout) == (0, "")


def test_history_refuses_a_bad_last(journal: Path) -> None:
    result = cli("history", "--journal", str(journal), "--last", "0")
    assert result.returncode == 2
    assert "at least 1" in result.stderr and "Traceback" not in result.stderr


def test_verify_an_intact_journal(journal: Path) -> None:
    result = cli("journal", "verify", "--journal", str(journal))
    assert (result.returncode, result.stdout) == (0, f"{journal}: intact, 8 records\n")


def test_verify_reports_each_problem_and_exits_1(journal: Path) -> None:
    with sqlite3.connect(journal) as db:
        db.execute("UPDATE records SET body = replace(body, '\"banker\"', '\"player\"') WHERE id = 2")
        db.execute("DELETE FROM records WHERE id = 8")
    result = cli("journal", "verify", "--journal", str(journal))
    assert result.returncode == 1
    out = result.stdout.splitlines()
    assert f"{journal}: record 2: altered, its hash does not match its contents" in out
    assert f"{journal}: chain head: names record 8 but the last record is 7 (tail removed)" in out
    assert out[-1] == f"{journal}: NOT INTACT, 2 problem(s) in 7 records"


def refusal(result: Result) -> str:
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1
    return result.stderr


@pytest.mark.parametrize("command", [["history"], ["journal", "verify"]])
def test_a_missing_journal_is_one_line(tmp_path: Path, command: list[str]) -> None:
    path = tmp_path / "journal.db"
    err = refusal(cli(*command, "--journal", str(path)))
    assert err == f"shoe-controller: journal {path} does not exist\n"
    assert not path.exists()


@pytest.mark.parametrize("command", [["history"], ["journal", "verify"]])
def test_random_bytes_are_one_line(tmp_path: Path, command: list[str]) -> None:
    path = tmp_path / "journal.db"
    path.write_bytes(os.urandom(4096))
    err = refusal(cli(*command, "--journal", str(path)))
    assert f"journal {path} is damaged" in err and "surveillance" in err


@pytest.mark.parametrize("command", [["history"], ["journal", "verify"]])
def test_a_truncated_journal_is_one_line(tmp_path: Path, command: list[str]) -> None:
    path = tmp_path / "journal.db"
    with Journal.open(path, durable=False) as j:
        for n in range(1, 1500):
            j.append({"kind": "declare", "n": n}, derived=[declared(1, n)])
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.truncate(size // 2)
    err = refusal(cli(*command, "--journal", str(path)))
    assert f"journal {path} is damaged" in err


@pytest.mark.parametrize("command", [["history"], ["journal", "verify"]])
def test_a_newer_schema_is_one_line(journal: Path, command: list[str]) -> None:
    with sqlite3.connect(journal) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    err = refusal(cli(*command, "--journal", str(journal)))
    assert f"schema version {SCHEMA_VERSION + 1}" in err and "upgrade" in err


# ---------------------------------------------------------------------------------------------------------
# Which journal: --journal, else the configuration's journal.path (the one the daemon writes)


@pytest.mark.parametrize("command", [["journal", "verify"], ["history", "--json"]])
def test_config_names_the_journal_the_command_reads(journal: Path, tmp_path: Path, command: list[str]) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[journal]\npath = "{journal}"\n', encoding="utf-8")
    result = cli(*command, "--config", str(config))
    assert result.returncode == 0, result.stderr
    if command[0] == "journal":
        assert result.stdout == f"{journal}: intact, 8 records\n"  # 4 inputs and their 4 coups
    else:
        assert [(c["shoe"], c["coup"]) for c in lines(result.stdout)] == [(1, 1), (1, 2), (2, 1), (2, 2)]


@pytest.mark.parametrize("command", [["journal", "verify"], ["history"]])
def test_a_configured_journal_that_is_missing_is_named(tmp_path: Path, command: list[str]) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[journal]\npath = "{tmp_path / "elsewhere.db"}"\n', encoding="utf-8")
    result = cli(*command, "--config", str(config))
    assert result.returncode == 2
    assert result.stderr == f"shoe-controller: journal {tmp_path / 'elsewhere.db'} does not exist\n"


@pytest.mark.parametrize("command", [["journal", "verify"], ["history"]])
def test_a_bad_config_is_one_line_naming_it(tmp_path: Path, command: list[str]) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[journal]\npath = 7\n", encoding="utf-8")
    result = cli(*command, "--config", str(config))
    assert result.returncode == 2
    assert result.stderr == f"shoe-controller: {config}: journal.path: must be a file path, got 7\n"


def test_journal_and_config_together_are_refused(journal: Path, tmp_path: Path) -> None:
    result = cli("history", "--journal", str(journal), "--config", str(tmp_path / "c.toml"))
    assert result.returncode == 2
    assert "not allowed with" in result.stderr and result.stderr.count("\n") == 1


def test_without_either_the_default_journal_comes_from_the_config_module() -> None:
    from controller.config import DEFAULT_JOURNAL_PATH, DEFAULT_PATH

    result = cli("journal", "verify")  # no /etc/shoe-controller/config.toml on a development machine
    if DEFAULT_PATH.exists():
        pytest.skip(f"{DEFAULT_PATH} exists here")
    assert result.returncode == 2
    assert str(DEFAULT_JOURNAL_PATH) in result.stderr


def test_the_default_paths_are_written_once() -> None:
    """The journal's and the configuration's default paths live in controller/config.py only."""
    for default in ("/var/lib/shoe-controller/journal.db", "/etc/shoe-controller/config.toml"):
        holders = [
            p.relative_to(REPO).as_posix()
            for p in sorted((REPO / "controller").rglob("*.py"))
            if default in p.read_text(encoding="utf-8")
        ]
        assert holders == ["controller/config.py"], (default, holders)


#: Root reads and writes whatever the mode bits say: the copy's readers run without the capabilities that let it.
AS_PLAIN_USER = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] if os.geteuid() == 0 else []


@pytest.mark.e2e
@pytest.mark.parametrize("as_root", [False, True], ids=["a plain user", "root"])
@pytest.mark.parametrize("wal", [False, True], ids=["the file alone", "with WAL frames waiting"])
def test_a_read_only_copy_reads(journal: Path, tmp_path: Path, wal: bool, as_root: bool) -> None:
    """What surveillance is handed: a copy of the journal, mode 0444, in a folder its reader may not write (it
    failed: "attempt to write a readonly database", SQLite wanting to make the WAL's shared memory file there).
    Copied beside a live table, the copy also holds a -wal file whose frames are records the file lacks: they
    are read too. Nothing is written beside the copy, not even by root (whom the folder does not stop)."""
    if as_root and os.geteuid() != 0:
        pytest.skip("not root")
    prefix = [] if as_root else AS_PLAIN_USER
    if prefix and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a read-only folder is writable")
    handed = tmp_path / "handed"
    handed.mkdir()
    copy = handed / "journal.db"
    with Journal.open(journal) as live:
        live.append({"kind": "declare"}, ts="2025-03-01T20:05:00+00:00", derived=[declared(2, 3)])
        shutil.copyfile(journal, copy)
        if wal:
            assert os.path.getsize(f"{journal}-wal") > 0
            shutil.copyfile(f"{journal}-wal", f"{copy}-wal")
        else:
            live.close()  # the last commit folded into the file first
            shutil.copyfile(journal, copy)
    with Journal.open(journal, create=False, read_only=True) as original:
        count = sum(1 for _ in original.records())
    files = sorted(os.listdir(handed))
    for f in files:
        (handed / f).chmod(0o444)
    handed.chmod(0o555)
    try:
        history = run_script(["shoe-controller", "history", "--journal", str(copy), "--json"], prefix=prefix)
        assert history.returncode == 0, history.stderr
        assert [(c["shoe"], c["coup"]) for c in lines(history.stdout)][-1] == (2, 3)
        slips = run_script(["shoe-controller", "slips", "--journal", str(copy), "--json"], prefix=prefix)
        assert slips.returncode == 0 and slips.stderr == "", slips.stderr  # no players in it: no slips
        verify = run_script(["shoe-controller", "journal", "verify", "--journal", str(copy)], prefix=prefix)
        assert verify.returncode == 0, verify.stderr
        assert verify.stdout == f"{copy}: intact, {count} records\n"  # the WAL's records too
        assert sorted(os.listdir(handed)) == files
    finally:
        handed.chmod(0o755)
