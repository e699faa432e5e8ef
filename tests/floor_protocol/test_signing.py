"""Keys and signatures of the floor link (floor_protocol.signing)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from commandline.keyfile import KeyFileError
from controller.keyfiles import load_private_key, write_private_key
from floor_protocol.signing import (
    KeyStatement,
    SigningError,
    format_public_key,
    generate_key,
    key_id,
    key_message,
    parse_public_key,
    record_message,
    sign,
    verify,
)


def test_a_written_key_is_0600_reads_back_and_is_never_overwritten(tmp_path: Path) -> None:
    key = generate_key()
    path = tmp_path / "table.key"
    write_private_key(path, key)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert format_public_key(load_private_key(path)) == format_public_key(key)
    with pytest.raises(KeyFileError, match="already exists"):
        write_private_key(path, generate_key())
    assert format_public_key(load_private_key(path)) == format_public_key(key)


@pytest.mark.parametrize("content", [b"", b"not a key", b"x" * 10_000])
def test_a_file_that_is_not_a_key_is_one_line(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.key"
    path.write_bytes(content)
    with pytest.raises((SigningError, KeyFileError)) as err:
        load_private_key(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_a_missing_key_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(KeyFileError, match="cannot read"):
        load_private_key(tmp_path / "none.key")


def test_public_keys_round_trip_and_bad_ones_are_refused() -> None:
    key = generate_key()
    text = format_public_key(key)
    assert text.startswith("ed25519:") and len(text) == 52
    assert format_public_key(parse_public_key(text)) == text
    assert key_id(text) == key_id(key) and len(key_id(key)) == 16
    for bad in ("", "ed25519:", "rsa:" + text[8:], "ed25519:!!!!", "ed25519:" + "A" * 40, text + "A" * 60):
        with pytest.raises(SigningError):
            parse_public_key(bad)


def test_a_record_signature_covers_table_seq_and_hash() -> None:
    key = generate_key()
    pub = key.public_key()
    sig = sign(key, record_message("t1", 5, "ab" * 32))
    assert verify(pub, record_message("t1", 5, "ab" * 32), sig)
    assert not verify(pub, record_message("t2", 5, "ab" * 32), sig)
    assert not verify(pub, record_message("t1", 6, "ab" * 32), sig)
    assert not verify(pub, record_message("t1", 5, "cd" * 32), sig)
    assert not verify(generate_key().public_key(), record_message("t1", 5, "ab" * 32), sig)
    for junk in (None, 5, "", "A" * 88, sig[:-2]):
        assert not verify(pub, record_message("t1", 5, "ab" * 32), junk)


def test_a_signature_for_one_purpose_is_not_valid_for_another() -> None:
    key = generate_key()
    sig = sign(key, record_message("t1", 5, "ab" * 32))
    assert not verify(key.public_key(), key_message("t1", "5"), sig)


def test_a_key_statement_proves_the_old_key_handed_over() -> None:
    old, new = generate_key(), generate_key()
    statement = KeyStatement.make(old, "t1", format_public_key(new))
    back = KeyStatement.from_json(statement.to_json())
    assert back == statement and back.verify(old.public_key())
    assert not back.verify(new.public_key())
    forged = KeyStatement("t1", format_public_key(generate_key()), statement.sig)
    assert not forged.verify(old.public_key())
    for bad in ("", "[]", '{"kind": "key"}', "{" * 2000):
        with pytest.raises(SigningError):
            KeyStatement.from_json(bad)
