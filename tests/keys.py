"""Keys for tests: a table's signing key and the floor's ack key, written as the keygen commands write them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from controller.keyfiles import load_private_key, write_private_key
from floor_protocol.signing import format_public_key, generate_key


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
        key = load_private_key(path)
    else:
        key = generate_key()
        write_private_key(path, key)
    return KeyFile(path, key, format_public_key(key))
