"""The floor's set-up as docs/floor.md "Running it" writes it, on a new archive, in the order it gives: keygen,
enroll, serve, each command as the docs write it (the installed ``shoe-floor``), as its own process (issue 24:
``enroll`` failed on a new SQLite archive, "no such file", until ``serve`` had made it). Then a table whose key
was enrolled is archived and acked with the floor's key."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from controller.game.records import TableRecord
from tests.console import BIN
from tests.floor.conftest import ROOT, Keys, Table
from tests.servers import Mosquitto
from tests.waiting import until

pytestmark = pytest.mark.e2e

DOC = ROOT / "docs" / "floor.md"


def documented_commands() -> list[list[str]]:
    """The commands of the block that opens "## Running it", each as its words (continuations joined, comments
    dropped)."""
    text = DOC.read_text()
    section = text[text.index("## Running it\n") :]
    block: list[str] = []
    for line in section.splitlines()[2:]:
        if not line.startswith("    "):
            break
        block.append(line[4:])
    commands = re.sub(r"\\\n\s*", " ", "\n".join(block)).splitlines()
    return [shlex.split(c, comments=True) for c in commands]


def test_the_documented_commands_are_keygen_enroll_serve() -> None:
    assert [c[:2] for c in documented_commands()[:3]] == [
        ["shoe-floor", "keygen"],
        ["shoe-floor", "enroll"],
        ["shoe-floor", "serve"],
    ]


def test_the_documented_setup_works_in_its_order_on_a_new_archive(
    tmp_path: Path, broker: Mosquitto, journal_records: list[TableRecord]
) -> None:
    keys = Keys(tmp_path / "table-keys")  # the table's key, as the table's own keygen makes it
    archive = tmp_path / "var" / "lib" / "shoe-floor" / "archive.db"
    archive.parent.mkdir(parents=True)
    (tmp_path / "etc" / "shoe-floor").mkdir(parents=True)
    url = f"sqlite://{archive}"
    # Where the docs name this floor's places and values, the test's own (and any free port for the pit page,
    # as two tests may run at once).
    places = {
        "/etc/shoe-floor/floor.key": str(tmp_path / "etc" / "shoe-floor" / "floor.key"),
        "URL": url,
        "sqlite:///var/lib/shoe-floor/archive.db": url,
        "ed25519:...": keys.table("T1").public,
        "mqtt://127.0.0.1:1883": broker.url,
    }
    keygen, enroll, serve = ([places.get(w, w) for w in c] for c in documented_commands()[:3])
    assert not archive.exists()

    made = subprocess.run(
        [str(BIN / keygen[0]), *keygen[1:]], capture_output=True, text=True, timeout=60, cwd=ROOT, check=False
    )
    assert made.returncode == 0, made.stderr
    floor_public = made.stdout.strip()
    assert floor_public.startswith("ed25519:")

    enrolled = subprocess.run(
        [str(BIN / enroll[0]), *enroll[1:]], capture_output=True, text=True, timeout=60, cwd=ROOT, check=False
    )
    assert enrolled.returncode == 0, enrolled.stderr
    assert enrolled.stderr == f"shoe-floor enroll: made a new archive, {archive}\n"
    assert archive.exists()

    log = tmp_path / "serve.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [str(BIN / serve[0]), *serve[1:], "--bind", "127.0.0.1:0"], stdout=out, stderr=out, cwd=ROOT
        )
    table = Table(broker, keys)
    try:
        until(lambda: "subscribed" in log.read_text() or proc.poll() is not None, 30, "serve to subscribe")
        assert proc.poll() is None, log.read_text()
        table.publish(journal_records[:5])
        table.wait_ack("T1", 5)
        assert [a.seq for a in table.verified_acks(floor_public)][-1] == 5  # acked with the floor's key
    finally:
        table.close()
        proc.terminate()
        proc.wait(20)
    assert proc.returncode == 0, log.read_text()[-2000:]
