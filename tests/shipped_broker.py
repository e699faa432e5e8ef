"""The shipped Mosquitto configuration (config/mosquitto.example.conf and .acl) started for a test.

Only what cannot be shipped is replaced: the paths of the certificates (made here with ``trustme``), of the
password file (made with Debian's ``mosquitto_passwd``) and of the ACL, and the two ports. The file is
included from a main configuration as Debian's ``/etc/mosquitto/mosquitto.conf`` includes ``conf.d/``
(:class:`tests.servers.Mosquitto`'s, which points persistence and the log at the test's directory). Every line
of authentication, ACL and session policy is the shipped one, so a test against this broker tests what a
casino installs.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.servers import Mosquitto, free_port, need

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "config" / "mosquitto.example.conf"
ACL = ROOT / "config" / "mosquitto.example.acl"

#: The users the tests log in as: two tables, the shipped ACL's two collectors and one of its pit views.
PASSWORDS: Mapping[str, str] = {
    "t1": "secret-1",
    "t2": "secret-2",
    "collector-1": "collector-1-pw",
    "collector-2": "collector-2-pw",
    "pit-1": "pit-1-pw",
}


@dataclass
class SecureBroker:
    """The running broker: ``password_port`` (TLS + password), ``cert_port`` (TLS + client certificate)."""

    broker: Mosquitto
    ca: Path
    password_port: int
    cert_port: int
    dir: Path
    authority: Any  # trustme.CA: issues the client certificates

    def client_cert(self, name: str) -> tuple[Path, Path]:
        """A client certificate (and its key) whose CN is ``name``: the table id, on the certificate listener."""
        cert = self.authority.issue_cert(name, common_name=name)
        crt, key = self.dir / f"{name}.crt", self.dir / f"{name}.key"
        cert.cert_chain_pems[0].write_to_path(str(crt))
        cert.private_key_pem.write_to_path(str(key))
        return crt, key


def start_shipped_broker(directory: Path, acl: Path = ACL, conf: Path = CONF) -> SecureBroker:
    """Start the shipped configuration in ``directory`` (``acl``/``conf``: another file, to show a test fails
    on it). The caller stops it (``.broker.kill()``)."""
    trustme = pytest.importorskip("trustme")
    passwd_bin = need("/usr/bin/mosquitto_passwd", "mosquitto_passwd (Debian package mosquitto)")
    authority = trustme.CA()
    server = authority.issue_cert("127.0.0.1", "localhost")
    d = directory / "tls"
    d.mkdir(parents=True)
    authority.cert_pem.write_to_path(str(d / "ca.crt"))
    server.cert_chain_pems[0].write_to_path(str(d / "broker.crt"))
    server.private_key_pem.write_to_path(str(d / "broker.key"))
    passwd = d / "passwd"
    for user, password in PASSWORDS.items():
        create = [] if passwd.exists() else ["-c"]
        subprocess.run([passwd_bin, *create, "-b", str(passwd), user, password], check=True, capture_output=True)
        (d / f"{user}.password").write_text(password + "\n")
    password_port, cert_port = free_port(), free_port()
    text = (
        conf.read_text()
        .replace("/etc/mosquitto/ca_certificates/floor-ca.crt", str(d / "ca.crt"))
        .replace("/etc/mosquitto/certs/broker.crt", str(d / "broker.crt"))
        .replace("/etc/mosquitto/certs/broker.key", str(d / "broker.key"))
        .replace("/etc/mosquitto/passwd", str(passwd))
        .replace("/etc/mosquitto/floor.acl", str(acl))
        .replace("listener 8883", f"listener {password_port} 127.0.0.1")
        .replace("listener 8884", f"listener {cert_port} 127.0.0.1")
    )
    lines = [line for line in text.splitlines() if not line.startswith("#") and line.strip()]
    assert not [line for line in lines if "/etc/" in line], "a path of the shipped configuration was not replaced"
    # Installed as Debian's package has it: a file in conf.d, included by a main configuration that sets the
    # persistence location, the log and the user (tests.servers.Mosquitto's, like Debian's mosquitto.conf).
    included = directory / "conf.d"
    included.mkdir(parents=True)
    (included / "floor.conf").write_text("\n".join(lines) + "\n")
    broker = Mosquitto(directory / "mosquitto", port=password_port, extra=[f"include_dir {included}"]).start()
    return SecureBroker(broker, d / "ca.crt", password_port, cert_port, d, authority)
