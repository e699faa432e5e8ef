"""Keys for tests: a table's signing key and the floor's ack key, written as the keygen commands write them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from commandline.keyfile import read_key_file, write_key_file
from floor_protocol.signing import format_public_key, generate_key, private_key_from_pem, private_key_pem


@dataclass(frozen=True)
class KeyFile:
    """A private key on disk (mode 0600), its key and its public key as written (``ed25519:...``)."""

    path: Path
    key: Ed25519PrivateKey
    public: str


def key_file(directory: Path, name: str) -> KeyFile:
    """A fresh key in ``directory/name.key`` (an existing file of that name is reused)."""
    path = directory / f"{name}.key"
    if path.exists():
        key = private_key_from_pem(read_key_file(path), str(path))
    else:
        key = generate_key()
        write_key_file(path, private_key_pem(key))
    return KeyFile(path, key, format_public_key(key))
