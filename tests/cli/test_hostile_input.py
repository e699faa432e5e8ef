"""Hostile input to the real console scripts: every subcommand of ``shoe-controller`` and ``shoe-sim`` that
reads a file is given a missing file, a directory, a FIFO, ``/dev/zero``, binary bytes, a huge file, text
that is not UTF-8, nesting too deep to parse, an empty journal and an unreadable file; and the options
that take numbers are given values out of range.

Each must answer at once with exactly one line on stderr naming the file (or option) and the problem, a
non-zero exit code and no traceback; a FIFO or device is refused without being read (it would block or
never end).

The cases run the scripts' ``main`` in this process (tests/console.py); the installed scripts themselves are
run for a sample, which must answer exactly as in process, and where only a process can tell (a file root
may not read, output to /dev/full).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.console import BIN, Result, run_main, run_script

#: Generous: a loaded CI machine starts Python slowly; a hang is what this catches, and it is far longer.
#: In process, pytest-timeout stops a case that blocks on its input after as long.
TIMEOUT = 60

#: The inputs, by name: what the file is.
KINDS = (
    "missing",
    "directory",
    "fifo",
    "dev_zero",
    "binary",
    "huge",
    "latin1",
    "deep_toml",
    "deep_json",
    "empty",
    "unreadable",
)
NOT_REGULAR = ("directory", "fifo", "dev_zero")

#: What a reader of a text file (configuration, cards, fault script) is given.
TEXT = ("missing", *NOT_REGULAR, "binary", "huge", "latin1", "unreadable")
#: What a reader of the SQLite journal is given (SQLite itself refuses bytes that are not a journal).
JOURNAL = ("missing", *NOT_REGULAR, "binary", "empty")

#: (id, argv with {f} for the hostile file and {tmp} for a scratch directory, the kinds it is given)
READERS: list[tuple[str, list[str], tuple[str, ...]]] = [
    ("check-config", ["shoe-controller", "check-config", "{f}"], (*TEXT, "deep_toml")),
    ("run --config", ["shoe-controller", "run", "--config", "{f}"], (*TEXT, "deep_toml")),
    ("replay", ["shoe-controller", "replay", "{f}"], (*TEXT, "deep_toml")),
    ("journal verify --journal", ["shoe-controller", "journal", "verify", "--journal", "{f}"], JOURNAL),
    ("journal verify --config", ["shoe-controller", "journal", "verify", "--config", "{f}"], (*TEXT, "deep_toml")),
    ("history --journal", ["shoe-controller", "history", "--journal", "{f}"], JOURNAL),
    ("history --config", ["shoe-controller", "history", "--config", "{f}"], (*TEXT, "deep_toml")),
    ("run --journal", ["shoe-controller", "run", "--journal", "{f}", "--pin-factory", "mock"], NOT_REGULAR),
    ("selftest --config", ["shoe-controller", "selftest", "--config", "{f}", "--json"], (*TEXT, "deep_toml")),
    ("demo --journal", ["shoe-controller", "demo", "--journal", "{f}", "--pace", "fast"], NOT_REGULAR),
    ("shoe-sim --script", ["shoe-sim", "--link", "{tmp}/shoe", "--script", "{f}"], (*TEXT, "deep_json")),
    ("shoe-sim --truth", ["shoe-sim", "--link", "{tmp}/shoe", "--truth", "{f}"], NOT_REGULAR),
]

#: The unreadable file's cases run as a process (see run): e2e.
CASES = [
    pytest.param(argv, kind, id=f"{name}-{kind}", marks=[pytest.mark.e2e] if kind == "unreadable" else [])
    for name, argv, kinds in READERS
    for kind in kinds
]


@pytest.fixture(scope="module")
def hostile_dir() -> Iterator[Path]:
    """One directory of hostile files (under root, the unreadable case runs without CAP_DAC_OVERRIDE)."""
    root = Path(tempfile.mkdtemp(prefix="shoe-hostile-"))
    root.chmod(0o755)
    (root / "directory").mkdir()
    os.mkfifo(root / "fifo")
    (root / "binary").write_bytes(bytes(range(256)) * 64)
    with (root / "huge").open("wb") as fh:  # 2 GiB, sparse: costs no disk, but reading it whole would
        fh.truncate(2 * 1024**3)
    (root / "latin1").write_bytes('[table]\nname = "Salon Priv\xe9"\n2H 3S\n'.encode("latin-1"))
    (root / "deep_toml").write_text("x = " + "[" * 900 + "]" * 900 + "\n", encoding="utf-8")
    (root / "deep_json").write_text('{"at_card": ' + "[" * 100_000 + "\n", encoding="utf-8")
    (root / "empty").write_bytes(b"")
    (root / "unreadable").write_text("2H 3S AD KC 8D\n", encoding="utf-8")
    (root / "unreadable").chmod(0)
    (root / "scratch").mkdir(mode=0o777)
    (root / "scratch").chmod(0o777)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def hostile_path(root: Path, kind: str) -> str:
    if kind == "dev_zero":
        return "/dev/zero"
    return str(root / kind)


#: Root reads a file of mode 000 anyway: run without the capabilities that let it (util-linux's setpriv).
WITHOUT_DAC_OVERRIDE = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def run(argv: list[str], *, as_plain_user: bool = False) -> Result:
    """In this process (the process boundary is not what these cases are about), except a mode-000 file under
    root: only a process can run without the capabilities that let root read it."""
    if not (as_plain_user and os.geteuid() == 0):
        return run_main(argv)
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a mode-000 file is readable")
    try:
        return run_script(argv, timeout=TIMEOUT, prefix=WITHOUT_DAC_OVERRIDE)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(argv)} did not finish in {TIMEOUT} s: it blocks on its input")


def assert_one_line_refusal(result: Result, names: str) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode != 0, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert result.stderr.endswith("\n")
    assert names in lines[0], lines[0]
    assert len(lines[0]) <= 400, lines[0]


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize(("argv", "kind"), CASES)
def test_a_hostile_file_is_one_line_naming_it(hostile_dir: Path, argv: list[str], kind: str) -> None:
    path = hostile_path(hostile_dir, kind)
    scratch = hostile_dir / "scratch"
    args = [a.replace("{f}", path).replace("{tmp}", str(scratch)) for a in argv]
    result = run(args, as_plain_user=kind == "unreadable")
    assert_one_line_refusal(result, path)
    if kind in NOT_REGULAR and kind != "directory":
        assert "not a regular file" in result.stderr
    assert not (scratch / "shoe").exists(), "shoe-sim opened its port before refusing"


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["shoe-controller", "roads", "--rows", "100000000", "B"], "--rows"),
        (["shoe-controller", "history", "--shoe", "9" * 30, "--journal", "/nonexistent"], "--shoe"),
        (["shoe-controller", "history", "--last", "9" * 30, "--journal", "/nonexistent"], "--last"),
        (["shoe-controller", "demo", "--pace", "inf"], "--pace"),
        (["shoe-controller", "demo", "--pace", "nan"], "--pace"),
        (["shoe-controller", "coup", "X" * 100_000], "unknown rank"),
        (["shoe-controller", "odds", "--remaining", "A=1," * 10_000], "given twice"),
        (["shoe-sim", "--link", "/tmp/x", "--pace", "inf"], "--pace"),
        (["shoe-sim", "--link", "/tmp/x", "--settle", "inf"], "--settle"),
        (["shoe-sim", "--link", "/tmp/x", "--disconnect-for", "1e999"], "--disconnect-for"),
        (["shoe-sim", "--link", "/tmp/x", "--fault", "x" * 100_000 + "=0.1"], "unknown fault"),
    ],
    ids=[
        "roads-rows-huge",
        "history-shoe-huge",
        "history-last-huge",
        "demo-pace-inf",
        "demo-pace-nan",
        "coup-100k-token",
        "odds-remaining-long",
        "shoe-sim-pace-inf",
        "shoe-sim-settle-inf",
        "shoe-sim-disconnect-for-inf",
        "shoe-sim-fault-100k-name",
    ],
)
def test_a_hostile_option_value_is_one_line_naming_it(argv: list[str], names: str) -> None:
    assert_one_line_refusal(run(argv), names)


#: One file and one option case per script, and each kind of file, run as the installed scripts.
AS_PROCESSES = [
    ["shoe-controller", "check-config", "{root}/missing"],
    ["shoe-controller", "replay", "{root}/fifo"],
    ["shoe-controller", "history", "--journal", "{root}/binary"],
    ["shoe-controller", "run", "--config", "{root}/huge"],
    ["shoe-controller", "roads", "--rows", "100000000", "B"],
    ["shoe-sim", "--link", "{root}/scratch/shoe", "--script", "/dev/zero"],
    ["shoe-sim", "--link", "/tmp/x", "--settle", "inf"],
    ["shoe-floor", "verify", "--archive", "sqlite:///{root}/directory"],
]


@pytest.mark.e2e
@pytest.mark.parametrize("argv", AS_PROCESSES, ids=lambda argv: "-".join(a.rsplit("/", 1)[-1] for a in argv[:3]))
def test_the_installed_scripts_answer_as_in_process(hostile_dir: Path, argv: list[str]) -> None:
    args = [a.replace("{root}", str(hostile_dir)) for a in argv]
    try:
        as_process = run_script(args, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(args)} did not finish in {TIMEOUT} s: it blocks on its input")
    assert as_process == run_main(args)
    assert as_process.returncode != 0 and as_process.stderr.count("\n") == 1, as_process


@pytest.mark.e2e
@pytest.mark.parametrize("command", [["shoe-controller", "replay", "{cards}"], ["shoe-controller", "odds"]])
def test_output_that_cannot_be_written_is_one_line(tmp_path: Path, command: list[str]) -> None:
    cards = tmp_path / "cards.txt"
    cards.write_text("2H 3S AD KC 8D\n", encoding="utf-8")  # one whole coup: no "left over" line
    argv = [str(BIN / command[0]), *(a.replace("{cards}", str(cards)) for a in command[1:])]
    with open("/dev/full", "w") as full:
        result = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT, check=False)
    assert "Traceback" not in result.stderr
    assert result.returncode == 1
    assert result.stderr.splitlines() == ["shoe-controller: No space left on device"]
