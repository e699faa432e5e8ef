"""Reading a file the user named on the command line, without hanging and without exhausting memory.

A path given where a regular file is expected may be anything: a FIFO (opening it for reading would wait
for a writer forever), a character device such as ``/dev/zero`` (reading it never ends), a directory,
a file too large to hold in memory, or bytes that are not UTF-8 text. :func:`read_text` and
:func:`read_bytes` refuse each at once with a :class:`UserFileError` whose ``reason`` names the problem;
the caller adds the option or command and prints one line.

Used by ``check-config``/``run --config`` (through :func:`controller.config.load_config`), ``replay``,
the journal commands (:func:`check_regular`) and ``shoe-sim --script``/``--truth``.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from commandline.exits import MAX_MESSAGE, one_line

__all__ = [
    "MAX_MESSAGE",
    "MiB",
    "UserFileError",
    "check_regular",
    "describe_kind",
    "one_line",
    "read_bytes",
    "read_text",
]

MiB = 1024 * 1024


class UserFileError(ValueError):
    """A user's file that cannot be used. ``str()`` is ``PATH: reason``, one line."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def describe_kind(mode: int) -> str:
    """What a non-regular file is, in words: ``a FIFO (named pipe)``, ``a character device`` ..."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _not_regular(path: str, mode: int) -> UserFileError:
    kind = describe_kind(mode)
    if kind == "not a regular file":
        return UserFileError(path, kind)
    return UserFileError(path, f"not a regular file ({kind})")


def check_regular(path: str | os.PathLike[str], *, must_exist: bool = False) -> None:
    """Refuse ``path`` if it exists and is not a regular file (or, with ``must_exist``, is missing).

    For files other code opens itself (the SQLite journal, an output file): a FIFO or a device there
    would block or never end. A missing file is fine unless ``must_exist``. Never blocks.
    """
    p = os.fspath(path)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        if must_exist:
            raise UserFileError(p, "cannot read: No such file or directory") from None
        return
    except OSError as exc:
        raise UserFileError(p, _os_reason(exc)) from None
    if not stat.S_ISREG(mode):
        raise _not_regular(p, mode)


def _read_bounded(stream: BinaryIO | int, path: str, limit: int) -> bytes:
    """At most ``limit`` bytes; one more means the file is too large."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        want = min(limit + 1 - size, MiB)
        chunk = os.read(stream, want) if isinstance(stream, int) else stream.read(want)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:
        raise UserFileError(path, f"too large (more than {_size(limit)})")
    return b"".join(chunks)


def _size(n: int) -> str:
    return f"{n // MiB} MiB" if n % MiB == 0 else f"{n} bytes"


def read_bytes(path: str | os.PathLike[str], *, limit: int, stdin: BinaryIO | None = None) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    ``path`` ``-`` reads ``stdin`` (when given) with the same bound. Raises :class:`UserFileError` for a
    missing or unreadable file, a directory, FIFO, device or socket (at once: the file is opened
    non-blocking and checked before any read) and a file larger than ``limit``.
    """
    p = os.fspath(path)
    if p == "-" and stdin is not None:
        return _read_bounded(stdin, "-", limit)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise UserFileError(p, _os_reason(exc)) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(p, mode)
        os.set_blocking(fd, True)
        try:
            return _read_bounded(fd, p, limit)
        except OSError as exc:
            raise UserFileError(p, _os_reason(exc)) from None
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike[str], *, limit: int, stdin: BinaryIO | None = None) -> str:
    """:func:`read_bytes`, decoded as UTF-8; bytes that are not UTF-8 are refused naming the line."""
    raw = read_bytes(path, limit=limit, stdin=stdin)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UserFileError(os.fspath(path), f"line {line}: not UTF-8 text") from None


def _os_reason(exc: OSError) -> str:
    return f"cannot read: {exc.strerror or exc}"
