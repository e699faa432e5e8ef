"""``shoe-controller keygen`` and the link's keys (issue 15): the key file is mode 0600 and never overwritten,
the public key is one line, a rotation's statement verifies with the old key; the link refuses to start without
a signing key or the floor's public key, and names cert_key_file when key_file holds a TLS key. Each mistake
is one line and exit code 2."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from controller.config import ConfigError, parse_config
from controller.keyfiles import load_private_key
from floor_protocol.signing import KeyStatement, format_public_key, generate_key, parse_public_key
from tests.console import Result, run_main
from tests.keys import key_file


def cli(*args: str) -> Result:
    return run_main(["shoe-controller", *args])


def one_line_error(result: Result, *words: str) -> None:
    assert result.returncode == 2, result
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_keygen_writes_a_0600_key_and_prints_its_public_key(tmp_path: Path) -> None:
    out = tmp_path / "table.key"
    result = cli("keygen", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    (line,) = result.stdout.splitlines()
    assert line.startswith("ed25519:") and len(line) == 52
    assert line == format_public_key(load_private_key(out))
    parse_public_key(line)


def test_keygen_never_overwrites_a_file(tmp_path: Path) -> None:
    out = tmp_path / "table.key"
    out.write_text("an operator's old key\n")
    result = cli("keygen", "--out", str(out))
    one_line_error(result, str(out), "already exists")
    assert out.read_text() == "an operator's old key\n"


def test_keygen_rotate_prints_a_statement_the_old_key_signed(tmp_path: Path) -> None:
    old = key_file(tmp_path, "old")
    result = cli("keygen", "--out", str(tmp_path / "new.key"), "--rotate-from", str(old.path), "--table", "t1")
    assert result.returncode == 0, result.stderr
    public, statement_line = result.stdout.splitlines()
    statement = KeyStatement.from_json(statement_line)
    assert (statement.table, statement.public_key) == ("t1", public)
    assert statement.verify(old.key.public_key())
    assert not statement.verify(load_private_key(tmp_path / "new.key").public_key())


def test_keygen_rotate_writes_the_statement_to_a_file(tmp_path: Path) -> None:
    old = key_file(tmp_path, "old")
    target = tmp_path / "statement.json"
    result = cli("keygen", "--out", str(tmp_path / "new.key"), "--rotate-from", str(old.path), "--table", "t1",
                 "--statement", str(target))  # fmt: skip
    assert result.returncode == 0, result.stderr
    (public,) = result.stdout.splitlines()
    statement = KeyStatement.from_json(target.read_text().strip())
    assert statement.public_key == public and statement.verify(old.key.public_key())


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--table", "t1"], ["--table", "--rotate-from"]),
        (["--statement", "s.json"], ["--statement", "--rotate-from"]),
        (["--rotate-from", "missing.key", "--table", "t1"], ["missing.key"]),
        (["--rotate-from", "old.key"], ["--table"]),
        (["--rotate-from", "old.key", "--table", "bad/table"], ["bad/table"]),
        (["--rotate-from", "notakey.key", "--table", "t1"], ["notakey.key"]),
    ],
)
def test_keygen_mistakes_are_one_line_and_write_nothing(tmp_path: Path, extra: list[str], words: list[str]) -> None:
    key_file(tmp_path, "old")
    (tmp_path / "notakey.key").write_text("hello\n")
    args = [a if not a.endswith((".key", ".json")) else str(tmp_path / a) for a in extra]
    result = cli("keygen", "--out", str(tmp_path / "new.key"), *args)
    one_line_error(result, *words)
    assert not (tmp_path / "new.key").exists()


# -- the link's keys ------------------------------------------------------------------------------------------
def link(tmp_path: Path, *extra: str) -> Result:
    return cli("link", "--journal", str(tmp_path / "j.db"), "--floor", "mqtt://127.0.0.1:1", *extra)


def test_the_link_refuses_to_start_without_a_signing_key(tmp_path: Path) -> None:
    floor = key_file(tmp_path, "floor")
    one_line_error(link(tmp_path, "--floor-public-key", floor.public), "key_file", "signed", "shoe-controller keygen")


def test_the_link_refuses_to_start_without_the_floors_public_key(tmp_path: Path) -> None:
    table = key_file(tmp_path, "table")
    one_line_error(link(tmp_path, "--floor-key", str(table.path)), "floor_public_key")


def test_a_bad_floor_public_key_on_the_command_line_is_one_line(tmp_path: Path) -> None:
    table = key_file(tmp_path, "table")
    one_line_error(link(tmp_path, "--floor-key", str(table.path), "--floor-public-key", "ed25519:AAAA"),
                   "--floor-public-key")  # fmt: skip


@pytest.mark.parametrize("kind", ["ec", "rsa"])
def test_a_tls_key_left_in_key_file_names_cert_key_file(tmp_path: Path, kind: str) -> None:
    if kind == "ec":
        tls = ec.generate_private_key(ec.SECP256R1())
        pem = tls.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())  # fmt: skip
    else:
        rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = rsa_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())  # fmt: skip
    path = tmp_path / "client.key"
    path.write_bytes(pem)
    floor = key_file(tmp_path, "floor")
    result = link(tmp_path, "--floor-key", str(path), "--floor-public-key", floor.public)
    one_line_error(result, "floor.key_file", "cert_key_file")


# -- configuration ---------------------------------------------------------------------------------------------
def test_floor_public_key_is_validated_at_load() -> None:
    with pytest.raises(ConfigError, match=r"floor\.floor_public_key") as info:
        parse_config('[floor]\nfloor_public_key = "ed25519:not-base64!"\n')
    assert "\n" not in str(info.value)
    good = format_public_key(generate_key())
    settings = parse_config(f'[floor]\nfloor_public_key = "{good}"\n')
    assert settings.floor.floor_key() is not None


def test_a_tls_config_from_before_the_rename_names_cert_key_file() -> None:
    old = '[floor]\nbroker = "mqtts://floor:8883"\ncert_file = "/etc/t.crt"\nkey_file = "/etc/t.key"\n'
    with pytest.raises(ConfigError, match=r"floor\.cert_key_file") as info:
        parse_config(old)
    assert "key_file is now the table's signing key" in str(info.value)
    renamed = parse_config(old.replace("key_file", "cert_key_file"))
    assert renamed.floor.cert_key_file is not None and renamed.floor.key_file is None
