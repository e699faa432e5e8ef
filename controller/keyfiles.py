"""The table's key files: an Ed25519 private key written (mode 0600, never over a file) and read (bounded),
for ``shoe-controller keygen``, the floor link (``[floor] key_file``) and the floor demo.

Puts :mod:`commandline.keyfile` (the file) and :mod:`floor_protocol.signing` (what the file holds) together.
Every failure is a ``ValueError`` (:class:`~commandline.keyfile.KeyFileError` or
:class:`~floor_protocol.signing.SigningError`) whose ``str()`` is one line naming the file.
"""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from commandline.keyfile import read_key_file, write_key_file
from floor_protocol.signing import private_key_from_pem, private_key_pem

__all__ = ["load_private_key", "write_private_key"]


def write_private_key(path: str | Path, key: Ed25519PrivateKey) -> None:
    """Write ``key`` (unencrypted PKCS#8 PEM) to a new file ``path``, mode 0600."""
    write_key_file(path, private_key_pem(key))


def load_private_key(path: str | Path) -> Ed25519PrivateKey:
    """The Ed25519 private key in the key file ``path``."""
    return private_key_from_pem(read_key_file(path), str(path))
