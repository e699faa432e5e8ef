"""The simulated chip tray over a real pty, speaking TRAY to a table-side ControllerSession (in process, one thread:
the tray's side is driven by the test's loop, as ``shoe-sim --tray-link`` drives it); and the tray's options."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import serial

from commandline import UsageError
from firmware_protocol.session import ControllerSession, ShoeEvent
from firmware_protocol.tray import TRAY, CountRequest, TrayHello, TraySnapshotEnd, TrayStatus, TubeReport
from hw_sim.chipset import ChipSet
from hw_sim.cli import build_parser, config_from_args
from hw_sim.faults import FaultPlan
from hw_sim.transport import PtyTransport
from hw_sim.tray import DEFAULT_STILL, ChipTray
from hw_sim.tray_device import TrayDevice, TrayFeed
from hw_sim.truth import TruthLog


def test_the_tray_over_a_pty_hello_snapshot_count_request_and_acks(tmp_path: Path) -> None:
    link = tmp_path / "tray0"
    pty = PtyTransport(link)
    pty.open()
    chips = ChipSet()
    tray = ChipTray({2_500: 4, 10_000: 2, 25: 3}, chips, chips.registry(), TruthLog(keep=True), FaultPlan(), 0)
    feed = TrayFeed(tray, TrayDevice(seed=4))
    table = ControllerSession(dialect=TRAY)
    got: list[object] = []
    try:
        port = serial.serial_for_url(str(link), timeout=0)
        try:
            t0 = time.monotonic()

            def pump(until: float, stop: object = None) -> None:
                """Move bytes both ways for ``until`` seconds of the wall clock (or until ``stop`` came)."""
                end = time.monotonic() + until
                while time.monotonic() < end:
                    now = time.monotonic() - t0
                    data = pty.read()
                    if data:
                        feed.receive(data, now)
                    out = feed.poll(now)
                    if out:
                        pty.write(out)
                    pty.flush()
                    heard = port.read(4096)
                    for ev in table.receive(heard, now) if heard else []:
                        if isinstance(ev, ShoeEvent):
                            got.append(ev.message)
                            port.write(table.acknowledge(ev.number, ev.key))
                    _events, more = table.poll(now)
                    if more:
                        port.write(more)
                    if stop is not None and stop in got:
                        return
                    time.sleep(0.005)

            feed.start(0.0)
            pump(1.5, TraySnapshotEnd(1, 3))
            assert isinstance(got[0], TrayHello) and got[0].tubes == 8
            assert got[1] == TrayStatus(feed.device.flags)
            tubes = {m.tube: set(m.uids) for m in got if isinstance(m, TubeReport)}
            assert tubes == {t: set(u) for t, u in tray.content().items() if u}
            assert TraySnapshotEnd(1, 3) in got
            pump(0.3)
            assert feed.device.unacked == 0  # every event acknowledged through the pty
            port.write(table.command(CountRequest()))
            pump(1.5, TraySnapshotEnd(2, 3))
            assert TraySnapshotEnd(2, 3) in got and feed.device.count_requests == 1
            tray.take(chips.take(2_500), time.monotonic() - t0, seat=1)  # a loser into tube 5
            pump(1.0, None)
            last = [m for m in got if isinstance(m, TubeReport)][-1]
            assert last.tube == 5 and len(last.uids) == 5
            pump(0.3)
            assert feed.device.unacked == 0 and table.link_up
        finally:
            port.close()
    finally:
        pty.close()


def _args(*extra: str) -> list[str]:
    return ["--link", "/tmp/never", *extra]


def test_the_tray_options(tmp_path: Path) -> None:
    config = config_from_args(build_parser().parse_args(_args("--players", "3", "--tray-link", "/tmp/t0")))
    assert config.tray is not None and config.tray.still == DEFAULT_STILL and config.tray.float_counts is None
    good = tmp_path / "float.toml"
    good.write_text('"25.00" = 50\n"1.00" = 20\n')
    args = _args("--players", "3", "--tray-tcp", "127.0.0.1:0", "--float", str(good), "--tray-still", "4")
    config = config_from_args(build_parser().parse_args(args))
    assert config.tray is not None and config.tray.still == 4.0
    assert dict(config.tray.float_counts or ())[2_500] == 50
    bad = tmp_path / "bad.toml"
    bad.write_text('"30.00" = 5\n')
    for argv, words in [
        (_args("--tray-link", "/tmp/t0"), "needs players"),
        (_args("--players", "2", "--float", str(good)), "--float"),
        (_args("--players", "2", "--tray-link", "/tmp/t0", "--float", str(bad)), "not a denomination"),
        (_args("--players", "2", "--tray-link", "/tmp/t0", "--float", str(tmp_path / "none")), "--float"),
    ]:
        with pytest.raises(UsageError, match=words):
            config_from_args(build_parser().parse_args(argv))
