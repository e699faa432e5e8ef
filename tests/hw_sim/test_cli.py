"""The shoe-sim command line: one-line errors with exit 2, the listening line, clean exit on signals."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from hw_sim.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("args", "names"),
    [
        ([], "--link"),
        (["--link", "/tmp/x", "--tcp", "localhost:1"], "not allowed with"),
        (["--tcp", "localhost"], "HOST:PORT"),
        (["--tcp", "localhost:99999"], "HOST:PORT"),
        (["--link", "/tmp/x", "--decks", "9"], "--decks"),
        (["--link", "/tmp/x", "--decks", "two"], "--decks"),
        (["--link", "/tmp/x", "--shoes", "0"], "--shoes"),
        (["--link", "/tmp/x", "--pace", "slow"], "--pace"),
        (["--link", "/tmp/x", "--pace", "-1"], "--pace"),
        (["--link", "/tmp/x", "--cut-card", "0"], "--cut-card"),
        (["--link", "/tmp/x", "--dialect", "morse"], "--dialect"),
        (["--link", "/tmp/x", "--fault", "fire=0.1"], "unknown fault"),
        (["--link", "/tmp/x", "--fault", "corrupt=2"], "outside 0-1"),
        (["--link", "/tmp/x", "--fault", "corrupt"], "NAME=RATE"),
        (["--link", "/tmp/x", "--dialect", "ascii", "--dealer", "prompt"], "--dealer"),
        (["--link", "/tmp/x", "--script", "/nonexistent/script.jsonl"], "--script"),
        (["--link", "/nonexistent-dir/shoe0"], "does not exist"),
        (["--link", "/tmp/x", "--truth", "/nonexistent-dir/t.jsonl"], "--truth"),
        (["--link", "/tmp/x", "--truth", "/dev/null"], "--truth /dev/null: not a regular file (a character device)"),
        (["--link", "/tmp/x", "--script", "/dev/zero"], "--script /dev/zero: not a regular file (a character device)"),
        (["--link", "/tmp/x", "--pace", "inf"], "--pace"),
        (["--link", "/tmp/x", "--settle", "inf"], "--settle"),
        (["--link", "/tmp/x", "--linger", "1e400"], "--linger"),
    ],
)
def test_bad_arguments_exit_2_with_one_line_naming_the_problem(
    args: list[str], names: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("shoe-sim: error: ")
    assert names in err


def test_bad_script_line_is_named_with_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "faults.jsonl"
    script.write_text('{"at_card": 3, "fault": "misdraw"}\n{"at_card": "x", "fault": "drop"}\n')
    assert main(["--link", str(tmp_path / "s"), "--script", str(script)]) == 2
    err = capsys.readouterr().err
    assert f"{script}:2" in err and err.count("\n") == 1


def test_link_path_that_is_a_file_is_not_clobbered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "shoe0"
    target.write_text("precious")
    assert main(["--link", str(target)]) == 2
    assert "not a symlink" in capsys.readouterr().err
    assert target.read_text() == "precious"


def _default_sigint() -> None:
    # A shell starts background jobs with SIGINT ignored and children inherit that; Python then installs no
    # KeyboardInterrupt handler. Give the simulator the SIGINT a user's terminal gives it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(args: list[str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "hw_sim.cli", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 15)
    line = proc.stdout.readline() if ready else ""
    return proc, line


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


@pytest.mark.e2e
def test_a_real_process_reports_a_bad_argument_in_one_line_without_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "hw_sim.cli", "--link", "/tmp/x", "--decks", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr and "--decks" in proc.stderr


@pytest.mark.e2e
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_exits_0_and_removes_the_symlink(tmp_path: Path, sig: signal.Signals) -> None:
    link = tmp_path / "shoe0"
    truth = tmp_path / "truth.jsonl"
    proc, line = _start(["--link", str(link), "--seed", "7", "--truth", str(truth)])
    try:
        assert line.startswith(f"shoe-sim: listening on {link} (pty /dev/pts/")
        assert line.rstrip().endswith("binary dialect, 8 decks, seed 7")
        assert link.is_symlink() and os.readlink(link).startswith("/dev/pts/")
        proc.send_signal(sig)
        assert proc.wait(timeout=15) == 0
        assert proc.stderr is not None and "Traceback" not in proc.stderr.read()
        assert not link.exists() and not link.is_symlink()
    finally:
        _stop(proc)


@pytest.mark.e2e
def test_tcp_listening_line_names_the_url(tmp_path: Path) -> None:
    proc, line = _start(["--tcp", "127.0.0.1:0", "--dialect", "ascii", "--decks", "2"])
    try:
        assert line.startswith("shoe-sim: listening on socket://127.0.0.1:")
        port = int(line.split()[3].rstrip(",").rsplit(":", 1)[1])
        assert port > 0
        assert "ascii dialect, 2 decks, seed 0" in line
        proc.terminate()
        assert proc.wait(timeout=15) == 0
    finally:
        _stop(proc)


@pytest.mark.e2e
def test_a_stale_symlink_from_an_earlier_run_is_replaced(tmp_path: Path) -> None:
    link = tmp_path / "shoe0"
    link.symlink_to("/dev/pts/nonexistent")
    proc, line = _start(["--link", str(link)])
    try:
        assert line.startswith("shoe-sim: listening on")
        assert os.readlink(link) != "/dev/pts/nonexistent"
        proc.terminate()
        assert proc.wait(timeout=15) == 0
        assert not link.is_symlink()
    finally:
        _stop(proc)


@pytest.mark.parametrize("kind", ["fifo", "binary", "deep", "huge"])
def test_a_hostile_script_or_truth_file_is_one_line(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FIFO is refused without opening it (reading waits for a writer; writing for a reader), binary bytes
    and JSON nested past the parser's recursion are one line, and a huge script is not read whole."""
    path = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "binary":
        path.write_bytes(bytes(range(128, 256)))
    elif kind == "deep":
        path.write_text('{"at_card": ' + "[" * 100_000 + "\n")
    else:
        with path.open("wb") as fh:
            fh.truncate(1024**3)  # sparse
    expected = {
        "fifo": "not a regular file (a FIFO (named pipe))",
        "binary": "line 1: not UTF-8 text",
        "deep": "JSON nested too deeply",
        "huge": "too large (more than 1 MiB)",
    }[kind]
    options = ["--script"] + (["--truth"] if kind == "fifo" else [])
    for option in options:
        assert main(["--link", str(tmp_path / "shoe"), option, str(path)]) == 2
        err = capsys.readouterr().err
        where = f"{path}:1" if kind == "deep" and option == "--script" else str(path)  # a script names its line
        assert err == f"shoe-sim: error: {option} {where}: {expected}\n"
    assert not (tmp_path / "shoe").exists()


@pytest.mark.e2e
def test_a_truth_file_that_cannot_grow_stops_the_run_in_one_line(tmp_path: Path) -> None:
    """A full disk, as a file size limit (RLIMIT_FSIZE; Python ignores SIGXFSZ, so the write fails with
    EFBIG): the simulator stops with one line naming --truth and exit 1, not a traceback."""
    import resource
    import time

    truth, link = tmp_path / "truth.jsonl", tmp_path / "shoe"

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))

    argv = [sys.executable, "-m", "hw_sim.cli", "--link", str(link), "--dialect", "ascii", "--pace", "fast"]
    proc = subprocess.Popen(
        [*argv, "--settle", "0", "--truth", str(truth)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=small_files,
    )
    try:
        deadline = time.monotonic() + 60
        while not link.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "no port"
            time.sleep(0.02)
        port = os.open(link, os.O_RDWR | os.O_NOCTTY)  # a controller plugs in: the shoe starts dealing
        try:
            while proc.poll() is None and time.monotonic() < deadline:
                if select.select([port], [], [], 0.2)[0]:
                    try:
                        os.read(port, 4096)
                    except OSError:
                        break
            _, err = proc.communicate(timeout=60)
        finally:
            os.close(port)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1
    assert err == f"shoe-sim: error: --truth {truth}: File too large\n"
