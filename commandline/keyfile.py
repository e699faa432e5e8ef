"""Key files on disk, for ``shoe-controller keygen`` and ``shoe-floor keygen`` and the processes that read them:
a new file is created mode 0600 and never written over an existing one; a file is read with a bound.

Neutral (standard library only): what a key file holds and what it signs is :mod:`floor_protocol.signing`'s
(``private_key_pem``, ``private_key_from_pem``); :func:`write_private_key` and :func:`load_private_key` in
``tests/keys.py`` and the commands put the two together.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["MAX_KEY_FILE", "KeyFileError", "read_key_file", "write_key_file"]

#: Longest key file read (a PKCS#8 PEM Ed25519 key is 119 bytes).
MAX_KEY_FILE = 4096


class KeyFileError(ValueError):
    """A key file that cannot be written or read; ``str()`` is one line naming the file."""


def write_key_file(path: str | Path, data: bytes) -> None:
    """Create ``path`` mode 0600 holding ``data``, synced; never over an existing file."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise KeyFileError(f"{path}: already exists (a key is never overwritten; move it away first)") from None
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot create: {exc.strerror}") from None
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_key_file(path: str | Path) -> bytes:
    """The bytes of the key file ``path`` (at most :data:`MAX_KEY_FILE`)."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_KEY_FILE + 1)
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read: {exc.strerror}") from None
    if len(data) > MAX_KEY_FILE:
        raise KeyFileError(f"{path}: longer than {MAX_KEY_FILE} bytes: not a key file")
    return data
