"""The service's systemd files: the unit verifies and is hardened, sysusers and udev rules say what we mean.

The tools come from the Debian package ``systemd`` (``scripts/install-system-deps``). Without them these
tests skip, naming the missing tool; under ``CI=true`` a missing tool fails the test instead, so that CI
cannot pass by skipping.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SYSTEMD = ROOT / "systemd"
UNIT = SYSTEMD / "shoe-controller.service"
BOARD_UNIT = SYSTEMD / "shoe-controller-board.service"
LINK_UNIT = SYSTEMD / "shoe-controller-link.service"
BACKUP_UNIT = SYSTEMD / "shoe-controller-backup.service"
BACKUP_TIMER = SYSTEMD / "shoe-controller-backup.timer"
UNITS = (UNIT, BOARD_UNIT, LINK_UNIT, BACKUP_UNIT)
SYSUSERS = SYSTEMD / "shoe-controller.sysusers"
UDEV_RULES = SYSTEMD / "99-shoe.rules"
INSTALL_DEPS = ROOT / "scripts" / "install-system-deps"

PRODUCTION_EXEC = "/opt/shoe-controller/venv/bin/shoe-controller"
MAX_EXPOSURE = 2.0
MONEY_GROUP = "shoe-money"
FEED_DIR = "/run/shoe-controller"


def require(tool: str) -> str:
    """The tool's path; skip without it, or fail under CI=true."""
    path = shutil.which(tool)
    if path is not None:
        return path
    reason = f"{tool} not found: run scripts/install-system-deps (Debian package systemd)"
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail(f"{reason}; CI=true, so a missing tool fails instead of skipping")
    pytest.skip(reason)


def run(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False, env=env)


def parse_unit(text: str) -> dict[str, dict[str, list[str]]]:
    """Section -> key -> values in order (systemd keys may repeat: DeviceAllow=, SystemCallFilter=)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        assert not line.endswith("\\"), f"continuation lines are not expected: {raw!r}"
        if line.startswith("["):
            assert line.endswith("]"), raw
            current = sections.setdefault(line[1:-1], defaultdict(list))
            continue
        assert current is not None, f"assignment outside a section: {raw!r}"
        key, sep, value = line.partition("=")
        assert sep, f"not KEY=value: {raw!r}"
        current[key.strip()].append(value.strip())
    return sections


@pytest.fixture(scope="module")
def service() -> dict[str, list[str]]:
    return parse_unit(UNIT.read_text())["Service"]


def one(section: dict[str, list[str]], key: str) -> str:
    values = section.get(key, [])
    assert len(values) == 1, f"{key}= set {len(values)} times: {values}"
    return values[0]


def test_a_missing_tool_skips_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(shutil, "which", lambda _: None)
    with pytest.raises(pytest.skip.Exception, match="install-system-deps"):
        require("systemd-analyze")


def test_a_missing_tool_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(shutil, "which", lambda _: None)
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        require("systemd-analyze")


# -- the unit: what the daemon relies on -------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("Type", "notify"),
        ("NotifyAccess", "main"),
        (
            "ExecStart",
            f"{PRODUCTION_EXEC} run --config /etc/shoe-controller/config.toml --feed-dir /run/shoe-controller",
        ),
        ("WatchdogSec", "10"),
        ("Restart", "on-failure"),
        ("RestartSec", "2"),
        ("KillSignal", "SIGTERM"),
        ("User", "shoe-controller"),
        ("Group", "shoe-controller"),
        ("StateDirectory", "shoe-controller"),
        ("WorkingDirectory", "/var/lib/shoe-controller"),  # lgpio writes its pipes here
        ("UMask", "0027"),  # the journal readable by the group (the floor link), no one else
        ("RuntimeDirectory", "shoe-controller"),  # the feed's sockets
        ("DevicePolicy", "closed"),
        ("ProtectSystem", "strict"),
        ("IPAddressDeny", "any"),
        ("PrivateNetwork", "yes"),
        ("CapabilityBoundingSet", ""),
        ("MemoryDenyWriteExecute", "yes"),
        ("NoNewPrivileges", "yes"),
    ],
)
def test_unit_setting(service: dict[str, list[str]], key: str, value: str) -> None:
    assert one(service, key) == value


def test_stop_timeout_outlasts_the_watchdog_period(service: dict[str, list[str]]) -> None:
    # The daemon pings every WatchdogSec/2; a clean stop (journal commit, port close) gets longer than that.
    assert int(one(service, "TimeoutStopSec")) > int(one(service, "WatchdogSec")) / 2


def test_devices_allowed_are_exactly_the_table_hardware(service: dict[str, list[str]]) -> None:
    allowed = dict(entry.split() for entry in service["DeviceAllow"])
    # the shoe (USB serial or CDC-ACM), the panel's GPIO chip, the dealer LCD's I2C bus
    assert allowed == {"char-ttyUSB": "rw", "char-ttyACM": "rw", "char-gpiochip": "rw", "char-i2c": "rw"}
    assert service.get("PrivateDevices", ["no"]) == ["no"]  # would hide the shoe


def test_private_users_stays_off(service: dict[str, list[str]]) -> None:
    # In a user namespace the supplementary groups are unmapped: no shoe, no panel, no LCD.
    assert service.get("PrivateUsers", ["no"]) == ["no"]
    assert set(one(service, "SupplementaryGroups").split()) == {"dialout", "gpio", "i2c", MONEY_GROUP}


def test_the_table_process_has_no_network_at_all(service: dict[str, list[str]]) -> None:
    # AF_UNIX: NOTIFY_SOCKET, journald and the feed; no IP family, no address allowed, its own network namespace.
    assert one(service, "RestrictAddressFamilies").split() == ["AF_UNIX"]
    assert "IPAddressAllow" not in service


@pytest.mark.parametrize("unit", [BOARD_UNIT, LINK_UNIT], ids=lambda p: p.name)
def test_a_companion_has_no_device_no_journal_write_and_its_own_user(unit: Path) -> None:
    svc = parse_unit(unit.read_text())["Service"]
    assert one(svc, "PrivateDevices") == "yes" and one(svc, "DevicePolicy") == "closed"
    assert "DeviceAllow" not in svc
    assert one(svc, "ProtectSystem") == "strict"
    assert "StateDirectory" not in svc and "ReadWritePaths" not in svc  # it writes nothing of the table's
    users = parse_sysusers(SYSUSERS.read_text())
    user = one(svc, "User")
    assert user != "shoe-controller" and user in users.home  # it cannot signal the table process
    assert "--feed-dir /run/shoe-controller" in one(svc, "ExecStart")
    assert int(one(svc, "Nice")) > 0  # below the table process: a contended CPU goes to the dealer's lamps


def test_only_the_link_may_read_the_journal() -> None:
    board = parse_unit(BOARD_UNIT.read_text())["Service"]
    link = parse_unit(LINK_UNIT.read_text())["Service"]
    users = parse_sysusers(SYSUSERS.read_text())
    assert one(board, "InaccessiblePaths") == "-/var/lib/shoe-controller"
    assert "shoe-controller" not in users.members.get(one(board, "User"), set())
    assert one(link, "ReadOnlyPaths") == "/var/lib/shoe-controller"
    assert users.members[one(link, "User")] == {"shoe-controller"} == set(one(link, "SupplementaryGroups").split())


def test_the_backup_reads_the_journal_as_the_link_does_and_writes_only_the_backup_directory() -> None:
    backup = parse_unit(BACKUP_UNIT.read_text())["Service"]
    link = parse_unit(LINK_UNIT.read_text())["Service"]
    assert one(backup, "Type") == "oneshot"
    for key in ("User", "SupplementaryGroups", "ReadOnlyPaths", "ProtectSystem", "PrivateDevices"):
        assert one(backup, key) == one(link, key), key
    assert backup["ReadWritePaths"] == ["-/var/backups/shoe-controller"]  # the [backup] dir default
    assert one(backup, "PrivateNetwork") == "yes" and one(backup, "RestrictAddressFamilies") == "AF_UNIX"
    assert one(backup, "ExecStart").endswith("journal backup --config /etc/shoe-controller/config.toml")
    from controller.config import DEFAULT_BACKUP_DIR

    assert str(DEFAULT_BACKUP_DIR) == backup["ReadWritePaths"][0].lstrip("-")
    timer = parse_unit(BACKUP_TIMER.read_text())
    assert one(timer["Timer"], "Persistent") == "true" and one(timer["Install"], "WantedBy") == "timers.target"


@pytest.mark.e2e
def test_the_backup_timer_verifies(tmp_path: Path) -> None:
    analyze = require("systemd-analyze")
    script = Path(sys.executable).parent / "shoe-controller"
    stand_in = str(script) if os.access(script, os.X_OK) else shutil.which("true") or "/bin/true"
    for unit in (BACKUP_UNIT, BACKUP_TIMER):
        (tmp_path / unit.name).write_text(
            unit.read_text().replace(f"ExecStart={PRODUCTION_EXEC} ", f"ExecStart={stand_in} ")
        )
    result = run(analyze, "verify", str(tmp_path / BACKUP_TIMER.name), str(tmp_path / BACKUP_UNIT.name))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_unit_and_sysusers_agree(service: dict[str, list[str]]) -> None:
    users = parse_sysusers(SYSUSERS.read_text())
    user = one(service, "User")
    state_directory = f"/var/lib/{one(service, 'StateDirectory')}"
    assert users.home[user] == one(service, "WorkingDirectory") == state_directory
    assert set(one(service, "SupplementaryGroups").split()) == users.members[user]


def test_udev_groups_are_the_service_groups(service: dict[str, list[str]]) -> None:
    groups = {dict_of(rule).get("GROUP") for rule in parse_udev(UDEV_RULES.read_text())}
    # The device groups, and shoe-money: the group the table gives money.sock to (no device of its own).
    assert groups == set(one(service, "SupplementaryGroups").split()) - {MONEY_GROUP}


def test_the_money_socket_group_holds_the_table_and_the_board_only() -> None:
    users = parse_sysusers(SYSUSERS.read_text())
    members = {user for user, groups in users.members.items() if MONEY_GROUP in groups}
    assert MONEY_GROUP in users.groups and members == {"shoe-controller", "shoe-board"}
    board = parse_unit(BOARD_UNIT.read_text())["Service"]
    assert one(board, "SupplementaryGroups") == MONEY_GROUP
    install = (ROOT / "docs" / "install.md").read_text()
    assert f'money_group = "{MONEY_GROUP}"' in install  # the install sets it (the default is the table's group)


# -- the unit: systemd's own checks --------------------------------------------------------------------


@pytest.mark.parametrize("unit", UNITS, ids=lambda p: p.name)
@pytest.mark.e2e
def test_systemd_analyze_verify_prints_nothing(tmp_path: Path, unit: Path) -> None:
    """`verify` also checks that ExecStart exists, and /opt/shoe-controller exists only on a table.

    So the unit is copied and its ExecStart pointed at this venv's own `shoe-controller` script (the same
    console script the table's venv has), or /bin/true when the project is not installed here.
    """
    analyze = require("systemd-analyze")
    text = unit.read_text()
    assert f"ExecStart={PRODUCTION_EXEC} " in text
    script = Path(sys.executable).parent / "shoe-controller"
    stand_in = str(script) if os.access(script, os.X_OK) else shutil.which("true") or "/bin/true"
    copy = tmp_path / unit.name
    copy.write_text(text.replace(f"ExecStart={PRODUCTION_EXEC} ", f"ExecStart={stand_in} "))
    result = run(analyze, "verify", str(copy))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


@pytest.mark.e2e
def test_systemd_analyze_verify_catches_a_broken_unit(tmp_path: Path) -> None:
    # Guards the test above: an empty output must mean "checked and clean", not "checked nothing".
    analyze = require("systemd-analyze")
    copy = tmp_path / UNIT.name
    copy.write_text(UNIT.read_text().replace("Type=notify", "Type=notifyy"))
    result = run(analyze, "verify", str(copy))
    assert "notifyy" in result.stdout + result.stderr


@pytest.mark.parametrize("unit", UNITS, ids=lambda p: p.name)
@pytest.mark.e2e
def test_security_exposure_is_at_most_2(unit: Path) -> None:
    analyze = require("systemd-analyze")
    result = run(analyze, "security", "--offline=true", "--no-pager", str(unit))
    assert result.returncode == 0, result.stderr
    match = re.search(rf"Overall exposure level for {re.escape(unit.name)}:\s*(\d+\.\d+)", result.stdout)
    assert match is not None, result.stdout
    exposure = float(match.group(1))
    failing = [line for line in result.stdout.splitlines() if line.startswith("✗")]
    assert exposure <= MAX_EXPOSURE, "\n".join(failing)


# -- sysusers -----------------------------------------------------------------------------------------


@dataclass
class SysUsers:
    home: dict[str, str]
    members: dict[str, set[str]]
    groups: set[str]


def parse_sysusers(text: str) -> SysUsers:
    """The few sysusers.d(5) line types we use, with their field syntax checked."""
    users = SysUsers({}, defaultdict(set), set())
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        fields = re.findall(r'"[^"]*"|\S+', raw)
        kind, name = fields[0], fields[1]
        assert re.fullmatch(r"[a-z_][a-z0-9_-]*", name), f"bad name in {raw!r}"
        if kind == "u":
            assert len(fields) in (5, 6) and fields[2] == "-", f"u NAME - GECOS HOME [SHELL]: {raw!r}"
            users.home[name] = fields[4]
        elif kind == "g":
            assert len(fields) == 3 and fields[2] == "-", f"g NAME -: {raw!r}"
            users.groups.add(name)
        elif kind == "m":
            assert len(fields) == 3, f"m USER GROUP: {raw!r}"
            users.members[name].add(fields[2])
        else:
            pytest.fail(f"unexpected sysusers line type {kind!r}: {raw!r}")
    return users


def _fake_root(tmp_path: Path, groups: str) -> Path:
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "usr/lib/sysusers.d").mkdir(parents=True)
    shutil.copy(SYSUSERS, root / "usr/lib/sysusers.d/shoe-controller.conf")  # where the guide installs it
    (root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    (root / "etc/group").write_text(groups)
    return root


def _table(path: Path) -> dict[str, list[str]]:
    return {line.split(":")[0]: line.split(":") for line in path.read_text().splitlines()}


RASPBERRY_PI_OS_GROUPS = "root:x:0:\ndialout:x:20:pi\ngpio:x:997:pi\ni2c:x:998:pi\n"
PLAIN_DEBIAN_GROUPS = "root:x:0:\ndialout:x:20:\n"


@pytest.mark.parametrize("groups", [RASPBERRY_PI_OS_GROUPS, PLAIN_DEBIAN_GROUPS], ids=["pi-os", "debian"])
@pytest.mark.e2e
def test_sysusers_creates_the_service_user_in_the_hardware_groups(tmp_path: Path, groups: str) -> None:
    sysusers = require("systemd-sysusers")
    root = _fake_root(tmp_path, groups)  # our own files: sysusers needs no root to rewrite them
    result = run(sysusers, f"--root={root}")
    assert result.returncode == 0, result.stderr
    passwd, group = _table(root / "etc/passwd"), _table(root / "etc/group")
    user = passwd["shoe-controller"]
    assert user[5:] == ["/var/lib/shoe-controller", "/usr/sbin/nologin"]
    assert 0 < int(user[2]) < 1000  # a system user
    for name in ("dialout", "gpio", "i2c"):
        assert "shoe-controller" in group[name][3].split(","), name
    if groups is RASPBERRY_PI_OS_GROUPS:
        # The g lines leave Raspberry Pi OS's groups (and their members) alone.
        assert group["gpio"][2:] == ["997", "pi,shoe-controller"]
        assert group["i2c"][2:] == ["998", "pi,shoe-controller"]
    before = (root / "etc/passwd").read_text(), (root / "etc/group").read_text()
    assert run(sysusers, f"--root={root}").returncode == 0
    assert ((root / "etc/passwd").read_text(), (root / "etc/group").read_text()) == before  # idempotent


def test_sysusers_file_declares_user_home_and_groups() -> None:
    users = parse_sysusers(SYSUSERS.read_text())
    assert users.home == {"shoe-controller": "/var/lib/shoe-controller", "shoe-board": "-", "shoe-link": "-"}
    assert users.members == {
        "shoe-controller": {"dialout", "gpio", "i2c", "shoe-money"},
        "shoe-board": {"shoe-money"},
        "shoe-link": {"shoe-controller"},
    }
    assert users.groups == {"gpio", "i2c", "shoe-money"}  # gpio, i2c: created where Raspberry Pi OS's are missing


# -- udev ---------------------------------------------------------------------------------------------

_MATCH_KEYS = {
    "ACTION", "DEVPATH", "KERNEL", "KERNELS", "NAME", "SYMLINK", "SUBSYSTEM", "SUBSYSTEMS", "DRIVER",
    "DRIVERS", "ATTR", "ATTRS", "SYSCTL", "ENV", "CONST", "TAG", "TAGS", "TEST", "PROGRAM", "RESULT",
}  # fmt: skip
_ASSIGN_KEYS = {
    "NAME", "SYMLINK", "OWNER", "GROUP", "MODE", "SECLABEL", "ATTR", "SYSCTL", "ENV", "TAG", "RUN",
    "LABEL", "GOTO", "IMPORT", "OPTIONS",
}  # fmt: skip
_WITH_ATTRIBUTE = {"ATTR", "ATTRS", "SYSCTL", "ENV", "CONST", "TEST", "SECLABEL", "RUN", "IMPORT"}
_PAIR = re.compile(r'\s*([A-Z]+)(?:\{([^}]+)\})?\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')

UdevPair = tuple[str, str, str, str]  # key, {attribute}, operator, value


def parse_udev(text: str) -> list[list[UdevPair]]:
    """udev(7) rule syntax: each line `KEY[{attr}]OP"value"` pairs separated by commas."""
    rules = []
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        pairs: list[UdevPair] = []
        position = 0
        while position < len(raw):
            match = _PAIR.match(raw, position)
            assert match is not None, f"udev syntax error at column {position}: {raw!r}"
            key, attribute, op, value = match.groups()
            keys = _MATCH_KEYS if op in ("==", "!=") else _ASSIGN_KEYS
            assert key in keys, f"{key}{op} is not a udev {'match' if keys is _MATCH_KEYS else 'assignment'}"
            assert (attribute is not None) == (key in _WITH_ATTRIBUTE), f"{key} and {{attribute}}: {raw!r}"
            pairs.append((key, attribute or "", op, value))
            position = match.end()
        matches = [op for _, _, op, _ in pairs if op in ("==", "!=")]
        assert matches, f"a rule without a match applies to every device: {raw!r}"
        rules.append(pairs)
    return rules


def dict_of(rule: list[UdevPair]) -> dict[str, str]:
    return {f"{key}{{{attr}}}" if attr else key: value for key, attr, _, value in rule}


def test_udev_rules_parse_and_udevadm_verify_accepts_them() -> None:
    assert len(parse_udev(UDEV_RULES.read_text())) == 4
    udevadm = shutil.which("udevadm")
    # `udevadm verify` exists from systemd 254 (Debian trixie); on bookworm the parse above is the check.
    if udevadm is not None and "verify" in run(udevadm, "--help").stdout:
        result = run(udevadm, "verify", str(UDEV_RULES))
        assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "line",
    [
        'SUBSYSTEM=="tty", SYMLINK+="shoe" GROUP="dialout"',  # missing comma
        'SUBSYSTEM=="tty", ATTRS{idVendor}=="0403", MODE=0660',  # unquoted
        'SUBSYSTEM=="tty", GROUPS="dialout"',  # no such key
        'SUBSYSTEM=="tty", ATTRS=="0403"',  # attribute missing
        'MODE="0660"',  # matches every device
    ],
)
def test_udev_parser_rejects_broken_rules(line: str) -> None:
    with pytest.raises(AssertionError):
        parse_udev(line)


def test_udev_gives_both_usb_serial_chips_the_stable_shoe_name() -> None:
    rules = parse_udev(UDEV_RULES.read_text())
    shoes = [dict_of(rule) for rule in rules if ("SYMLINK", "", "+=", "shoe") in rule]
    ids = {(shoe["ATTRS{idVendor}"], shoe["ATTRS{idProduct}"]) for shoe in shoes}
    assert ids == {("0403", "6001"), ("1a86", "7523")}  # FTDI FT232R, WCH CH340
    for shoe in shoes:
        assert shoe["SUBSYSTEM"] == "tty"
        assert (shoe["GROUP"], shoe["MODE"]) == ("dialout", "0660")
        assert shoe["ENV{ID_MM_DEVICE_IGNORE}"] == "1"  # ModemManager must not probe the shoe


# -- scripts/install-system-deps ----------------------------------------------------------------------


def _install_deps(path_dir: Path) -> subprocess.CompletedProcess[str]:
    bash = shutil.which("bash") or "/bin/bash"
    return run(bash, str(INSTALL_DEPS), env={"PATH": str(path_dir), "HOME": str(path_dir)})


@pytest.mark.e2e
def test_install_system_deps_reports_what_is_missing_and_exits_0(tmp_path: Path) -> None:
    # An empty PATH: no systemd-analyze and no apt-get, so it cannot install even as root.
    result = _install_deps(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "missing: systemd-analyze (Debian package systemd)" in result.stdout
    assert "installed" not in result.stdout


def _ldconfig_knows(path_dir: Path, sonames: list[str]) -> None:
    """An ``ldconfig`` on PATH whose cache (``ldconfig -p``) lists exactly these libraries."""
    listing = "".join(f"\t{so} (libc6,x86-64) => /lib/x86_64-linux-gnu/{so}\n" for so in sonames)
    (path_dir / "ldconfig").write_text(f"#!/bin/sh\nprintf '%s' '{listing}'\n")
    (path_dir / "ldconfig").chmod(0o755)


def _fc_list_knows(path_dir: Path, fonts: list[str]) -> None:
    """An ``fc-list`` on PATH that lists exactly these font files."""
    listing = "".join(f"/usr/share/fonts/truetype/x/{name}: A Font:style=Regular\n" for name in fonts)
    (path_dir / "fc-list").write_text(f"#!/bin/sh\nprintf '%s' '{listing}'\n")
    (path_dir / "fc-list").chmod(0o755)


@pytest.mark.e2e
def test_install_system_deps_reports_a_missing_font(tmp_path: Path) -> None:
    # The bilingual scoreboard's test needs a CJK font: every command and library is there, fontconfig lists
    # no CJK font, and it is reported under its Debian package's name.
    script = (ROOT / "scripts" / "install-system-deps").read_text()
    commands = re.findall(r'^\s+"\S+ (\S+)"', script, flags=re.MULTILINE)
    for command in commands:
        (tmp_path / command).write_text("#!/bin/sh\nexit 0\n")
        (tmp_path / command).chmod(0o755)
    _ldconfig_knows(tmp_path, [c for c in commands if ".so" in c])
    _fc_list_knows(tmp_path, ["DejaVuSans.ttf"])
    result = _install_deps(tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "missing: wqy-microhei.ttc (Debian package fonts-wqy-microhei)"


@pytest.mark.e2e
def test_install_system_deps_reports_a_missing_library(tmp_path: Path) -> None:
    # Playwright's node needs libatomic.so.1, which a minimal Debian 12 lacks: every command is there, the
    # library is not in the linker's cache, and it is reported under its Debian package's name.
    script = (ROOT / "scripts" / "install-system-deps").read_text()
    for command in re.findall(r'^\s+"\S+ (\S+)"', script, flags=re.MULTILINE):
        assert "/" not in command, command  # never write outside tmp_path
        (tmp_path / command).write_text("#!/bin/sh\nexit 0\n")
        (tmp_path / command).chmod(0o755)
    _ldconfig_knows(tmp_path, ["libc.so.6"])
    result = _install_deps(tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "missing: libatomic.so.1 (Debian package libatomic1)"


@pytest.mark.e2e
def test_install_system_deps_does_nothing_when_all_is_present(tmp_path: Path) -> None:
    script = (ROOT / "scripts" / "install-system-deps").read_text()
    commands = re.findall(r'^\s+"\S+ (\S+)"', script, flags=re.MULTILINE)
    assert "systemd-analyze" in commands
    assert not [c for c in commands if "/" in c]  # names only: a stub at tmp_path / "/usr/sbin/x" is /usr/sbin/x
    libraries = [c for c in commands if ".so" in c]
    assert "libatomic.so.1" in libraries
    for command in commands:  # every tool the script requires is "present"
        stub = tmp_path / command
        stub.write_text("#!/bin/sh\nexit 0\n")
        stub.chmod(0o755)
    _ldconfig_knows(tmp_path, libraries)  # and every library is in the linker's cache
    fonts = [c for c in commands if c.endswith((".ttc", ".ttf", ".otf"))]
    assert "wqy-microhei.ttc" in fonts
    _fc_list_knows(tmp_path, fonts)  # and every font in fontconfig's list
    apt = tmp_path / "apt-get"  # would record a call; must not be called
    apt.write_text(f"#!/bin/sh\necho called >> {tmp_path}/apt-called\nexit 1\n")
    apt.chmod(0o755)
    result = _install_deps(tmp_path)
    assert (result.returncode, result.stdout) == (0, "system dependencies: all present\n")
    assert not (tmp_path / "apt-called").exists()


# -- the floor's collector ---------------------------------------------------------------------------


@pytest.mark.e2e
def test_the_floor_collectors_unit_verifies_and_is_hardened(tmp_path: Path) -> None:
    analyze = require("systemd-analyze")
    unit = SYSTEMD / "shoe-floor.service"
    text = unit.read_text()
    production = "ExecStart=/opt/shoe-floor/venv/bin/shoe-floor "
    assert production in text
    script = Path(sys.executable).parent / "shoe-floor"
    stand_in = str(script) if os.access(script, os.X_OK) else shutil.which("true") or "/bin/true"
    copy = tmp_path / unit.name
    copy.write_text(text.replace(production, f"ExecStart={stand_in} "))
    result = run(analyze, "verify", str(copy))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    security = run(analyze, "security", "--offline=true", "--no-pager", str(unit))
    match = re.search(r"Overall exposure level for shoe-floor\.service:\s*(\d+\.\d+)", security.stdout)
    assert match is not None, security.stdout
    assert float(match.group(1)) <= MAX_EXPOSURE, (
        security.stdout
    )  # as the table's, though it must reach broker and database


FLOOR_UNIT = SYSTEMD / "shoe-floor.service"
FLOOR_DOC = ROOT / "docs" / "floor.md"


def _floor_service() -> tuple[list[str], dict[str, list[str]]]:
    """shoe-floor.service's ExecStart as words (its continuation lines joined) and its [Service] section."""
    text = FLOOR_UNIT.read_text().replace("\\\n", " ")
    service = parse_unit(text)["Service"]
    return shlex.split(one(service, "ExecStart")), service


def test_the_floor_unit_connects_with_its_own_users_and_no_secret_on_the_command_line() -> None:
    """The finding: ExecStart had no credentials, so the service could not connect to the shipped broker."""
    words, service = _floor_service()
    options = dict(itertools.pairwise(words))
    assert options["--broker"] == "${SHOE_FLOOR_BROKER}" and "--ca-file" in options
    assert options["--username"] == "${SHOE_FLOOR_USERNAME}"
    assert options["--pit-username"] == "${SHOE_FLOOR_PIT_USERNAME}"
    assert not {"--password", "--pit-password"} & set(words)  # ps would show it
    credentials = dict(value.split(":", 1) for value in service["LoadCredential"])
    for option in ("--password-file", "--pit-password-file", "--key"):  # root's 0600 files, handed over by systemd
        name = options[option].removeprefix("%d/")
        assert options[option] == f"%d/{name}" and credentials[name].startswith("/etc/shoe-floor/"), option


def test_every_file_the_floor_units_exec_start_names_is_documented_with_its_mode() -> None:
    words, service = _floor_service()
    credentials = dict(value.split(":", 1) for value in service["LoadCredential"])
    named = [one(service, "EnvironmentFile")]
    for word in words[1:]:
        if word.startswith("%d/"):
            named.append(credentials[word.removeprefix("%d/")])
        elif word.startswith("/"):
            named.append(word)
    assert len(named) >= 5, named  # env, ca.crt, the two passwords, the floor's key
    doc = FLOOR_DOC.read_text()
    for path in named:
        rows = [line for line in doc.splitlines() if f"`{path}`" in line and re.search(r"\b0[0-7]{3}\b", line)]
        assert rows, f"{path}: named by shoe-floor.service, not in docs/floor.md with its mode"
    for variable in re.findall(r"\$\{(\w+)\}", " ".join(words)):
        assert f"`{variable}`" in doc, f"{variable}: in shoe-floor.service's ExecStart, not in docs/floor.md"
    assert words[0] in (ROOT / "docs" / "install.md").read_text(), f"{words[0]}: not where docs/install.md puts it"
