"""shoe-sim's players, bets and chip options: one-line errors with exit 2, the chip file, a real run with players."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from controller.game.rules import Bet
from hw_sim.chipset import ChipSet
from hw_sim.cli import build_parser, config_from_args, main
from hw_sim.players import Players
from hw_sim.truth import read_truth

ROOT = Path(__file__).resolve().parents[2]


def _bets(tmp_path: Path, *lines: str) -> str:
    path = tmp_path / "bets.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["--players", "0"], "--players: 1-9"),
        (["--players", "10"], "--players: 1-9"),
        (["--players", "12", "--seats", "15"], "--seats: 1-14"),
        (["--players", "two"], "--players"),
        (["--players", "2", "--bets", "b.jsonl"], "not allowed with"),
        (["--players", "2", "--rules", "blackjack"], "--rules"),
        (["--players", "2", "--commission", "never"], "--commission"),
        (["--players", "2", "--leave-after", "0"], "--leave-after: at least 1"),
        (["--bets", "/nonexistent/bets.jsonl"], "--bets /nonexistent/bets.jsonl"),
        (["--players", "2", "--fault", "late_bet=2"], "outside 0-1"),
        (["--players", "2", "--chips-out", "/nonexistent-dir/chips.toml"], "--chips-out /nonexistent-dir/chips.toml"),
        (["--players", "2", "--chips-out", "/dev/null"], "--chips-out /dev/null: not a regular file"),
        (["--spots-link", "/tmp/s"], "--spots-link: the bet-spot reader needs players"),
        (["--players", "2", "--tie-pays", "7"], "--tie-pays"),
        (["--players", "2", "--side-bets", "dragon_bonus,lucky_6"], "--side-bets: 'lucky_6' is not a wager"),
        (["--players", "2", "--side-bets", "tie"], "--side-bets: tie is not a side bet"),
        (["--players", "2", "--unit", "5.5"], "--unit"),
        (["--players", "2", "--minimum", "27.00"], "--minimum: not a multiple of the unit"),
        (["--players", "2", "--minimum", "100", "--maximum", "50"], "above maximum_cents"),
        (["--players", "2", "--unit", "2.50", "--minimum", "25", "--maximum", "50"], "--unit: the simulator's chips"),
        (["--players", "2", "--spots-link", "/nonexistent-dir/s"], "--spots-link /nonexistent-dir/s: directory"),
        (["--players", "2", "--spots-link", "/tmp/s", "--spots-tcp", "localhost:1"], "not allowed with"),
        (["--players", "2", "--counter", "3:dragon_7"], "--counter: the counter sits on one of the --players' seats"),
        (["--players", "2", "--counter", "2:banker"], "--counter: a counter bets a side wager, not banker"),
        (["--players", "2", "--counter", "2:lucky_6"], "--counter: not a wager: 'lucky_6'"),
        (["--players", "2", "--counter", "two:tie"], "--counter: SEAT:WAGER[:FACTOR]"),
        (["--players", "2", "--counter", "2:tie:500"], "--counter: the counter's factor is 0-100"),
        (["--players", "2", "--counter", "2:panda_8", "--side-bets", "player_pair"], "--counter: the table does not"),
        (["--players", "2", "--key-cards"], "--key-cards: the card is keyed on the dealer screen"),
        (["--split-cash", "E0040150C0000077:4000:2"], "--split-cash: the split-cash player sits after the --players'"),
        (["--players", "2", "--split-cash", "E0040150C0000077:4000"], "--split-cash: UID:DOLLARS:COUP"),
        (["--players", "2", "--split-cash", "XYZ:4000:2"], "--split-cash: UID:DOLLARS:COUP"),
        (["--players", "9", "--split-cash", "77:4000:2"], "--split-cash: needs --players and a seat after theirs"),
        (["--players", "2", "--split-cash", "77:10:2"], "--split-cash: a card UID, and cash of at least the table"),
        (["--players", "2", "--split-cash", "77:4000:0"], "--split-cash: the coup is 1 or later, not 0"),
    ],
)
def test_bad_money_arguments_exit_2_with_one_line(
    args: list[str], names: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--link", str(tmp_path / "shoe"), *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("shoe-sim: error: ")
    assert names in err
    assert not (tmp_path / "shoe").exists()


@pytest.mark.parametrize(
    ("line", "words", "by_line"),
    [
        ('{"shoe": 1, "coup": 1, "seat": 2, "wagers": {"banker": 25}}', 'is not dollars like "25.00"', True),
        ('{"shoe": 1, "coup": 1, "seat": 2}', "wagers must be an object", True),
        ('{"shoe": 1, "coup": 1, "seat": 12, "wagers": {"banker": "25.00"}}', "seat 12 beyond 9 seats", False),
        ('{"shoe": 1, "coup": 1, "seat": 2, "wagers": {"banker": "25.10"}}', "cannot be made of chips", False),
    ],
)
def test_a_bad_bets_line_is_named(
    line: str, words: str, by_line: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bets = _bets(tmp_path, '{"shoe": 1, "coup": 1, "seat": 1, "wagers": {"player": "25.00"}}', line)
    assert main(["--link", str(tmp_path / "shoe"), "--bets", bets]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err
    assert (f"{bets}:2" in err) == by_line


def test_without_players_the_simulator_has_no_money() -> None:
    config = config_from_args(build_parser().parse_args(["--link", "/tmp/x"]))
    assert config.money is None


def test_the_options_make_the_money_config(tmp_path: Path) -> None:
    args = ["--link", "/tmp/x", "--players", "6", "--rules", "ez", "--seats", "7", "--leave-after", "2"]
    money = config_from_args(build_parser().parse_args(args)).money
    assert money is not None
    assert (money.players, money.rules.name, money.seats, money.leave_after_coups) == (6, "ez", 7, 2)
    args = ["--link", "/tmp/x", "--players", "2", "--commission", "shoe_end"]
    money = config_from_args(build_parser().parse_args(args)).money
    assert money is not None and money.rules.commission_collection.value == "shoe_end"
    assert money.rules.commission_rate > 0


def test_the_table_options_reach_the_players_and_the_settlement(tmp_path: Path) -> None:
    args = ["--link", "/tmp/x", "--players", "4", "--tie-pays", "9", "--side-bets", "dragon_bonus, panda_8"]
    args += ["--unit", "25", "--minimum", "100.00", "--maximum", "1000"]
    money = config_from_args(build_parser().parse_args(args)).money
    assert money is not None
    assert money.rules.tie_pays == 9
    assert money.rules.offered_side_bets == {Bet.DRAGON_BONUS_PLAYER, Bet.DRAGON_BONUS_BANKER, Bet.PANDA_8}
    assert (money.limits.unit_cents, money.limits.minimum_cents, money.limits.maximum_cents) == (2500, 10000, 100000)
    players = Players(4, 0, money.rules, money.limits)
    for coup in range(1, 30):
        for wagers in players.wagers(1, coup).values():
            assert all(w.amount_cents % 2500 == 0 for w in wagers)
            assert all(w.bet in {Bet.BANKER, Bet.PLAYER, Bet.TIE} | money.rules.offered_side_bets for w in wagers)
    none = config_from_args(build_parser().parse_args(["--link", "/tmp/x", "--players", "2", "--side-bets", ""]))
    assert none.money is not None and none.money.rules.offered_side_bets == frozenset()


def test_chips_out_alone_writes_the_registry_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "chips.toml"
    assert main(["--chips-out", str(path)]) == 0
    assert path.read_text() == ChipSet().registry_toml()
    ranges = tomllib.loads(path.read_text())["range"]
    assert {r["status"] for r in ranges} == {"in_play", "retired", "stolen"}
    assert capsys.readouterr().err == ""
    assert main(["--chips-out", str(path), "--players", "3"]) == 2
    assert "--link --tcp is required" in capsys.readouterr().err


@pytest.mark.e2e
def test_a_real_run_with_players_writes_wagers_and_payouts_to_the_truth(tmp_path: Path) -> None:
    """A real process on TCP, ASCII dialect (the self dealer: no ACKs needed), three players, one deck."""
    truth = tmp_path / "truth.jsonl"
    chips = tmp_path / "chips.toml"
    args = ["--tcp", "127.0.0.1:0", "--dialect", "ascii", "--decks", "1", "--pace", "fast", "--players", "3"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "hw_sim.cli", *args, "--truth", str(truth), "--chips-out", str(chips), "--settle", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        port = int(line.split()[3].rstrip(",").rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
            conn.settimeout(20)
            while conn.recv(65536):
                pass
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    events = read_truth(str(truth))
    kinds = {e["event"] for e in events}
    assert {"wager", "lock", "settle", "payout", "spot"} <= kinds
    assert {e["seat"] for e in events if e["event"] == "wager"} == {1, 2, 3}
    assert chips.exists() and os.path.getsize(chips) > 0


@pytest.mark.e2e
def test_a_real_run_with_the_reader_on_a_pty_tells_the_table_every_spot_change(tmp_path: Path) -> None:
    """shoe-sim as a real process: the shoe on TCP (ASCII, self dealer), the bet-spot reader on a second pty
    that the table's SpotWire reads and ACKs: every spot change in the truth reached the table, in order."""
    import select
    import time
    import tty

    from controller.game.wagers import Spot
    from controller.table.spot_wire import SpotInput, SpotRecord, SpotWire
    from tests.hw_sim.test_reader_feed import Table, states

    truth = tmp_path / "truth.jsonl"
    link = tmp_path / "spots0"
    args = ["--tcp", "127.0.0.1:0", "--dialect", "ascii", "--decks", "1", "--pace", "0.02", "--players", "3"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "hw_sim.cli", *args, "--spots-link", str(link), "--truth", str(truth), "--settle", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wire, table = SpotWire(ChipSet().registry()), Table()
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        port = int(line.split()[3].rstrip(",").rsplit(":", 1)[1])
        assert proc.stdout.readline().startswith(f"shoe-sim: bet-spot reader on {link} (pty /dev/pts/")
        fd = os.open(link, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(fd)
        with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
            conn.setblocking(False)
            shoe_open = True
            while proc.poll() is None:
                readable, _, _ = select.select([fd, conn.fileno()] if shoe_open else [fd], [], [], 0.05)
                if conn.fileno() in readable:
                    shoe_open = conn.recv(65536) != b""
                data = b""
                if fd in readable:
                    try:
                        data = os.read(fd, 65536)
                    except OSError:
                        break  # the simulator closed the pty
                now = time.monotonic()
                got = wire.receive(data, now) if data else []
                more, out = wire.poll(now)
                for ev in [*got, *more]:
                    table.apply(ev)
                    if isinstance(ev, SpotInput | SpotRecord) and ev.number is not None:
                        os.write(fd, wire.acknowledge(ev.number, ev.session))
                if out:
                    os.write(fd, out)
        os.close(fd)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    events = read_truth(str(truth))
    spots = [((e["seat"], Spot(e["spot"])), frozenset(e["uids"])) for e in events if e["event"] == "spot"]
    assert len(spots) > 50
    assert states(table.seen) == states(spots)
    assert not link.exists()


@pytest.mark.e2e
def test_the_reader_on_tcp_reports_the_players_bets(tmp_path: Path) -> None:
    """--spots-tcp: the reader listens on a TCP port of its own; the table's SpotWire hears HELLO and bets."""
    import select
    import time

    from controller.game.wagers import SpotSeen
    from controller.table.spot_wire import SpotInput, SpotRecord, SpotWire

    args = ["--tcp", "127.0.0.1:0", "--dialect", "ascii", "--decks", "1", "--pace", "0.02", "--players", "2"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "hw_sim.cli", *args, "--spots-tcp", "127.0.0.1:0", "--settle", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wire = SpotWire(ChipSet().registry())
    bets = 0
    try:
        assert proc.stdout is not None
        shoe_port = int(proc.stdout.readline().split()[3].rstrip(",").rsplit(":", 1)[1])
        line = proc.stdout.readline()
        assert line.startswith("shoe-sim: bet-spot reader on socket://127.0.0.1:") and line.rstrip().endswith("9 seats")
        spots_port = int(line.split()[4].rstrip(",").rsplit(":", 1)[1])
        with (
            socket.create_connection(("127.0.0.1", spots_port), timeout=20) as reader,
            socket.create_connection(("127.0.0.1", shoe_port), timeout=20) as shoe,
        ):
            reader.setblocking(False)
            shoe.setblocking(False)
            deadline = time.monotonic() + 30
            while bets < 3 and time.monotonic() < deadline:
                ready, _, _ = select.select([reader.fileno(), shoe.fileno()], [], [], 0.05)
                if shoe.fileno() in ready:
                    shoe.recv(65536)
                if reader.fileno() not in ready:
                    continue
                now = time.monotonic()
                for ev in wire.receive(reader.recv(65536), now):
                    bets += isinstance(ev, SpotInput) and isinstance(ev.table_input, SpotSeen)
                    if isinstance(ev, SpotInput | SpotRecord) and ev.number is not None:
                        reader.sendall(wire.acknowledge(ev.number, ev.session))
        assert wire.hello is not None and wire.hello.seats == tuple(range(1, 10))
        assert bets >= 3
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
