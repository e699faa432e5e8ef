"""The pty and TCP transports, in process; and a TCP client that reconnects resuming the session."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import serial

from firmware_protocol.messages import CardRead
from firmware_protocol.session import ControllerSession, ShoeEvent
from hw_sim.transport import PtyTransport, TcpTransport
from hw_sim.truth import read_truth

ROOT = Path(__file__).resolve().parents[2]


def _read_all(fd_read: Callable[[], bytes], want: int, timeout: float = 5.0) -> bytes:
    data = b""
    until = time.monotonic() + timeout
    while len(data) < want and time.monotonic() < until:
        data += fd_read()
    return data


def test_pty_is_raw_reports_the_controller_and_discards_output_while_unplugged(tmp_path: Path) -> None:
    link = tmp_path / "shoe0"
    pty = PtyTransport(link)
    pty.open()
    try:
        assert link.is_symlink() and os.readlink(link) == pty.slave_name
        assert not pty.connected
        pty.write(b"nobody hears this\x00")
        port = serial.serial_for_url(str(link), timeout=0.2)
        try:
            assert pty.connected
            payload = bytes(range(256))  # raw: every byte value passes unchanged (no CR/LF mapping, no echo)
            pty.write(payload)
            assert port.read(512) == payload
            port.write(b"\x00\x11\x13\r\n")
            assert _read_all(pty.read, 5) == b"\x00\x11\x13\r\n"
        finally:
            port.close()
        assert not pty.connected
    finally:
        pty.close()
    assert not link.is_symlink()


def test_tcp_one_client_at_a_time_and_refusal_while_unplugged() -> None:
    tcp = TcpTransport("127.0.0.1", 0)
    tcp.open()
    try:
        assert tcp.port > 0 and tcp.describe() == f"socket://127.0.0.1:{tcp.port}"
        first = socket.create_connection(("127.0.0.1", tcp.port))
        until = time.monotonic() + 5
        while not tcp.connected and time.monotonic() < until:
            tcp.read()
        tcp.write(b"hello")
        assert first.recv(16) == b"hello"
        second = socket.create_connection(("127.0.0.1", tcp.port))
        until = time.monotonic() + 5
        while tcp.clients_seen < 2 and time.monotonic() < until:
            tcp.read()
        assert first.recv(16) == b""  # the newcomer replaced the old client
        tcp.drop_client()
        assert second.recv(16) == b"" and not tcp.connected
        third = socket.create_connection(("127.0.0.1", tcp.port))
        for _ in range(20):
            tcp.read()
            time.sleep(0.01)
        assert not tcp.connected
        third.settimeout(5)
        assert third.recv(16) == b""  # refused while unplugged
        tcp.allow_clients()
        for s in (first, second, third):
            s.close()
    finally:
        tcp.close()


@pytest.mark.e2e
def test_tcp_client_that_reconnects_resumes_the_same_session(tmp_path: Path) -> None:
    truth_path = tmp_path / "truth.jsonl"
    args = [sys.executable, "-m", "hw_sim.cli", "--tcp", "127.0.0.1:0", "--dealer", "self", "--decks", "1"]
    args += ["--pace", "0.01", "--settle", "0.1", "--truth", str(truth_path)]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    ctrl = ControllerSession()
    delivered: list[ShoeEvent] = []
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[3].rstrip(",")
        for round_ in range(2):
            port = serial.serial_for_url(url, timeout=0.05)
            started = time.monotonic()
            try:
                while proc.poll() is None and time.monotonic() - started < 60:
                    if round_ == 0 and len(delivered) >= 20:
                        break  # unplug mid-shoe
                    try:
                        data = port.read(max(1, port.in_waiting))
                    except serial.SerialException:
                        break
                    for event in ctrl.receive(data, time.monotonic()):
                        if isinstance(event, ShoeEvent):
                            delivered.append(event)
                            port.write(ctrl.acknowledge(event.number, event.key))
                    _, out = ctrl.poll(time.monotonic())
                    if out:
                        port.write(out)
            finally:
                port.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    assert len({e.session_id for e in delivered}) == 1
    assert [e.number for e in delivered] == list(range(1, len(delivered) + 1))
    truth = read_truth(str(truth_path))
    cards = [(e.seq, e.message.token) for e in delivered if isinstance(e.message, CardRead)]
    assert cards == [(t["seq"], t["card"]) for t in truth if t["event"] == "card"]
