"""systemd/shoe-floor.service under a real systemd (Debian 12 booted in a container, tests/systemd/machine.py):
its credentials reach the service as docs/floor.md says. The files are made root's with the modes the docs
give; the unit is installed as it ships; ``systemctl start`` runs its ExecStart, at whose path a stand-in
stands (the machine has no broker and no archive, so what is under test is the unit: the user names from the
env file, each secret handed over by ``LoadCredential=`` under ``%d``, readable by the service's dynamic user
and nobody else, the root-only originals not readable by it, no secret on its command line).

Then the real ``shoe-floor serve``, installed in /opt/shoe-floor/venv as docs/install.md says, under the unit
as it ships (exposure at most 2.0, as the table's): it reads its key, makes its SQLite archive in its state
directory, serves the pit page and /metrics on its --bind, and connects over TCP to the broker's address (a
listener stands there: Mosquitto is not in the machine, whose root has systemd, dbus and Python only, and a
private network; tests/broker/ runs serve against the shipped broker on the host).
"""

from __future__ import annotations

import itertools
import re
import shlex
import sys
from collections.abc import Iterator

import pytest

from tests.systemd.machine import ROOT, Machine
from tests.systemd.test_under_systemd import _require

pytestmark = [pytest.mark.systemd, pytest.mark.serial, pytest.mark.xdist_group("systemd"), pytest.mark.timeout(600)]

UNIT = ROOT / "systemd" / "shoe-floor.service"
VENV = "/opt/shoe-floor/venv"
MAX_EXPOSURE = 2.0  # as the table's units (tests/systemd/test_under_systemd.py)
CREDENTIALS = "/run/credentials/shoe-floor.service"
SECRETS = {"broker.password": "collector-1-pw", "pit.password": "pit-1-pw", "floor.key": "not-a-real-key"}


def exec_path() -> str:
    line = next(line for line in UNIT.read_text().splitlines() if line.startswith("ExecStart="))
    return line.removeprefix("ExecStart=").split()[0]


#: A stand-in at the unit's ExecStart path: says its argv, its uid, what each file option names holds, and
#: whether it can read the root-only originals; then stays up (its own process: its command line is read).
STAND_IN = r"""#!/bin/sh
echo "argv: $*"
echo "uid: $(id -u)"
while [ $# -gt 0 ]; do
  case "$1" in
    --password-file|--pit-password-file|--key) echo "file $1 $2 $(cat "$2" 2>&1)";;
  esac
  shift
done
for f in broker.password pit.password floor.key; do
  if cat "/etc/shoe-floor/$f" >/dev/null 2>&1; then echo "original $f readable"; else echo "original $f unreadable"; fi
done
echo "stand-in up"
sleep 600 &
wait
"""

SECRET_FILES = "\n".join(f"(umask 077; echo {v} > /etc/shoe-floor/{k})" for k, v in SECRETS.items())
SETUP = f"""
set -e
install -d -m 0755 "$(dirname {exec_path()})" /etc/shoe-floor
cat > {exec_path()} <<'SH'
{STAND_IN}SH
chmod 0755 {exec_path()}
install -m 0600 /dev/null /etc/shoe-floor/env
printf '%s\\n' SHOE_FLOOR_BROKER=mqtts://broker.floor.example:8883 \\
    SHOE_FLOOR_ARCHIVE=sqlite:////var/lib/shoe-floor/archive.db \\
    SHOE_FLOOR_USERNAME=collector-1 SHOE_FLOOR_PIT_USERNAME=pit-1 > /etc/shoe-floor/env
printf 'a CA\\n' > /etc/shoe-floor/ca.crt && chmod 0644 /etc/shoe-floor/ca.crt
{SECRET_FILES}
install -m 0644 /root/shoe-controller/systemd/shoe-floor.service /etc/systemd/system/
systemctl daemon-reload
"""


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Machine]:
    _require()
    m = Machine(tmp_path_factory.mktemp("floor-machine"))
    try:
        m.prepare()
        m.boot()
        m.sh(SETUP)
        yield m
    finally:
        m.poweroff()
        m.remove()


def test_the_floor_units_credentials_reach_its_dynamic_user_and_nobody_else(machine: Machine) -> None:
    machine.sh("systemctl start shoe-floor")

    def said() -> str:
        return machine.sh("journalctl --no-pager -o cat -u shoe-floor").stdout

    machine.wait_for("the stand-in to start", lambda: "stand-in up" in said(), 30)
    log = said()
    assert machine.show("shoe-floor", "ActiveState") == "active", log
    argv = shlex.split(next(line for line in log.splitlines() if line.startswith("argv: ")).removeprefix("argv: "))
    options = dict(itertools.pairwise(argv))
    assert (options["--username"], options["--pit-username"]) == ("collector-1", "pit-1")
    assert options["--broker"] == "mqtts://broker.floor.example:8883"
    assert options["--ca-file"] == "/etc/shoe-floor/ca.crt"
    for option, name in (("--password-file", "broker.password"), ("--pit-password-file", "pit.password"),
                         ("--key", "floor.key")):  # fmt: skip
        assert f"file {option} {CREDENTIALS}/{name} {SECRETS[name]}" in log, log
        assert f"original {name} unreadable" in log, log  # root's 0600: not the dynamic user's
    uid = int(next(line for line in log.splitlines() if line.startswith("uid: ")).split()[1])
    assert uid != 0
    pid = machine.show("shoe-floor", "MainPID")
    cmdline = machine.sh(f"tr '\\0' ' ' < /proc/{pid}/cmdline; cat /proc/{pid}/environ | tr '\\0' '\\n'").stdout
    assert not [v for v in SECRETS.values() if v in cmdline]  # nothing secret in ps or the environment
    other = machine.sh(f"runuser -u nobody -- cat {CREDENTIALS}/broker.password", check=False)
    assert other.returncode != 0 and SECRETS["broker.password"] not in other.stdout  # not another user's to read
    machine.sh("systemctl stop shoe-floor")
    assert machine.show("shoe-floor", "ActiveState") == "inactive"
    gone = machine.sh(f"ls {CREDENTIALS} 2>&1", check=False)
    assert gone.returncode != 0, gone.stdout  # the copies go with the service


#: The broker's address as far as the collector can tell: a TCP listener that says each connection it takes.
FAKE_BROKER = r"""
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 8883))
s.listen()
print("listening", flush=True)
held = []
while True:
    c, peer = s.accept()
    held.append(c)
    print("connection from", peer[0], flush=True)
"""

METRICS_GET = (
    "import urllib.request; r = urllib.request.urlopen('http://127.0.0.1:8470/metrics', timeout=5);"
    " print(r.status); print(r.read().decode())"
)


def test_the_real_serve_runs_under_the_hardened_unit(machine: Machine) -> None:
    m = machine
    trustme = pytest.importorskip("trustme")
    saved = "/root/floor-saved"
    m.sh(f"install -d {saved} && cp -a {exec_path()} /etc/shoe-floor/env /etc/shoe-floor/ca.crt"
         f" /etc/shoe-floor/floor.key {saved}/")  # fmt: skip
    try:
        m.sh(
            # docs/install.md's floor server (pip over the stand-in at the unit's ExecStart path; put back after)
            f"cd /root/shoe-controller && python3 -m venv {VENV}"
            f' && {VENV}/bin/pip install --quiet --no-index --find-links /wheels "$PWD[floor]"',
            timeout=600,
        )
        (m.root / "etc/shoe-floor/ca.crt").write_bytes(trustme.CA().cert_pem.bytes())
        m.sh(
            "rm -f /etc/shoe-floor/floor.key && (umask 077; "
            f"{exec_path()} keygen --out /etc/shoe-floor/floor.key)"
            " && sed -i 's|^SHOE_FLOOR_BROKER=.*|SHOE_FLOOR_BROKER=mqtts://127.0.0.1:8883|' /etc/shoe-floor/env"
        )
        (m.root / "root/fake-broker.py").write_text(FAKE_BROKER)
        m.sh("systemd-run --quiet --unit=fake-broker python3 /root/fake-broker.py")
        m.wait_for("the broker's listener", lambda: "listening" in m.sh(
            "journalctl --no-pager -o cat -u fake-broker").stdout, 30)  # fmt: skip
        m.sh("journalctl --rotate --vacuum-time=1s >/dev/null 2>&1; systemctl reset-failed shoe-floor; true")
        m.sh("systemctl start shoe-floor")

        def said() -> str:
            return m.sh("journalctl --no-pager -o cat -u shoe-floor").stdout

        m.wait_for("the pit page served", lambda: "pit: serving http://127.0.0.1:8470/" in said(), 60)
        m.wait_for("a connection to the broker's address", lambda: "connection from 127.0.0.1" in m.sh(
            "journalctl --no-pager -o cat -u fake-broker").stdout, 60)  # fmt: skip
        log = said()
        assert m.show("shoe-floor", "ActiveState") == "active", log
        assert "acks signed by floor key" in log, log  # the key, read from its credential
        assert "archive sqlite:////var/lib/shoe-floor/archive.db" in log, log
        assert m.sh("test -s /var/lib/shoe-floor/archive.db", check=False).returncode == 0, log
        metrics = m.sh(f'python3 -c "{METRICS_GET}"').stdout
        assert metrics.startswith("200\n") and "shoe_floor_" in metrics, metrics
        for refused in ("Traceback", "Operation not permitted", "Permission denied", "Read-only file system"):
            assert refused not in log, log

        rating = m.sh("systemd-analyze security --no-pager shoe-floor").stdout
        match = re.search(r"Overall exposure level for shoe-floor\.service:\s*(\d+\.\d+)", rating)
        assert match is not None, rating
        sys.stderr.write(f"systemd-analyze security shoe-floor (live, real serve): exposure {match.group(1)}\n")
        assert float(match.group(1)) <= MAX_EXPOSURE, rating

        m.sh("systemctl stop shoe-floor")
        assert (m.show("shoe-floor", "ActiveState"), m.show("shoe-floor", "Result")) == ("inactive", "success")
    finally:
        m.sh(
            "systemctl stop shoe-floor fake-broker 2>/dev/null; systemctl reset-failed shoe-floor fake-broker"
            f" 2>/dev/null; cp -a {saved}/shoe-floor {exec_path()}; cp -a {saved}/env {saved}/ca.crt"
            f" {saved}/floor.key /etc/shoe-floor/; true"
        )
