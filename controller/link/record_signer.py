"""The floor link's record signatures, made in a process of their own.

An Ed25519 signature costs the link some 40-60 us a record and holds the interpreter's lock all the while (the
``cryptography`` package does not release it), which halved a backlog flush. :class:`RecordSigner` hands the
signing to a child process (a fresh interpreter: no inherited threads or locks) on another core: the link
asks for the signatures of the records after the ones it is sending (:meth:`RecordSigner.request`), takes
them when they come (:meth:`RecordSigner.collect`; waiting on the pipe lets paho's thread run), and signs in
its own process whatever was not asked for (a rewind). A signature is the same either way (Ed25519 is
deterministic), so the wire never shows which process made it.

The child (``python -m controller.link.record_signer``, the key handed over its standard input, never on its
command line) reads length-prefixed requests from a pipe and ends with it: the link's exit, even by SIGKILL,
closes the pipe and the child ends at once. A child that cannot start, dies or does not answer within a
second is logged once; the link signs in its own process from then on.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import select
import struct
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from floor_protocol.signing import record_message

log = logging.getLogger(__name__)

__all__ = ["RecordSigner"]

#: Longest request the child reads (a window of 256 records is some 20 kB).
MAX_REQUEST = 1 << 22
_LENGTH = struct.Struct(">I")


def _read_exactly(stream: BinaryIO, n: int) -> bytes:
    data = stream.read(n)
    if data is None or len(data) != n:
        raise EOFError
    return data


def _frame(stream: BinaryIO) -> bytes:
    (n,) = _LENGTH.unpack(_read_exactly(stream, _LENGTH.size))
    if n > MAX_REQUEST:
        raise EOFError
    return _read_exactly(stream, n)


def serve(stdin: BinaryIO, stdout: BinaryIO) -> int:
    """The child: the raw key (32 bytes) and the table first, then requests of ``seq hash`` lines; answers the
    raw signatures (64 bytes each, in order). Ends at the end of its input (the link gone)."""
    try:
        first = _frame(stdin)
        key = Ed25519PrivateKey.from_private_bytes(first[:32])
        table = first[32:].decode()
        while True:
            request = _frame(stdin)
            out = bytearray()
            for line in request.split(b"\n"):
                seq, record_hash = line.split(b" ", 1)
                out += key.sign(record_message(table, int(seq), record_hash.decode()))
            stdout.write(_LENGTH.pack(len(out)) + bytes(out))
            stdout.flush()
    except (EOFError, OSError, ValueError, KeyboardInterrupt):
        return 0


class RecordSigner:
    """Signatures of ``table``'s records by ``key``, made in a child process (see the module's docstring)."""

    def __init__(self, key: Ed25519PrivateKey, table: str) -> None:
        self.table = table
        self._key = key
        self._process: subprocess.Popen[bytes] | None = None
        self._answer = bytearray()  # what the child said so far of the answer in flight
        self._asked: list[tuple[int, str]] = []  # the request in flight (one at a time)
        #: Signatures made by the child: ``seq -> (hash, sig)``, until the link takes them.
        self.ready: dict[int, tuple[str, str]] = {}
        #: The highest seq asked for so far (the link asks for what comes after it).
        self.asked_through = 0

    @property
    def running(self) -> bool:
        return self._process is not None

    def start(self) -> None:
        """Start the child (``python -m controller.link.record_signer``). A failure is logged; the link then signs in
        its own process."""
        root = str(Path(__file__).resolve().parents[1])  # this checkout's packages, whatever the child's cwd
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
        raw = self._key.private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
        )
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "controller.link.record_signer"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                close_fds=True,
            )
            assert process.stdin is not None
            first = raw + self.table.encode()
            process.stdin.write(_LENGTH.pack(len(first)) + first)
            process.stdin.flush()
        except OSError as exc:
            log.warning("floor link: no signing process (%s); records are signed in this one", exc)
            return
        self._process = process

    @property
    def busy(self) -> bool:
        """Whether a request is in flight (the link asks again only once it is answered)."""
        return bool(self._asked)

    def request(self, records: Sequence[tuple[int, str]]) -> None:
        """Ask for the signatures of ``records`` (``(seq, hash)``, in order); one pipe write of some 80 bytes a
        record (the child reads as it signs)."""
        process = self._process
        if process is None or self._asked or not records:
            return
        body = b"\n".join(f"{seq} {record_hash}".encode() for seq, record_hash in records)
        try:
            assert process.stdin is not None
            process.stdin.write(_LENGTH.pack(len(body)) + body)
            process.stdin.flush()
        except (OSError, ValueError) as exc:
            self._lost(exc)
            return
        self._asked = list(records)
        self._answer.clear()
        self.asked_through = max(self.asked_through, records[-1][0])

    def collect(self, timeout: float = 0.0) -> bool:
        """Take the answer to the request in flight if it came, waiting up to ``timeout`` seconds for it (the
        wait holds no lock: the link's other threads run meanwhile). False when it is not all there yet. A
        child that does not answer a wait of ``timeout`` > 0 is given up (the link signs in its own process)."""
        process = self._process
        if process is None or not self._asked:
            return False
        assert process.stdout is not None
        fd = process.stdout.fileno()
        want = _LENGTH.size + 64 * len(self._asked)
        try:
            while len(self._answer) < want:
                ready, _, _ = select.select([fd], [], [], timeout)
                if not ready:
                    if timeout > 0:
                        self._lost(TimeoutError(f"no answer in {timeout:g} s"))
                    return False
                chunk = os.read(fd, want - len(self._answer))
                if not chunk:
                    raise EOFError("the signing process ended")
                self._answer += chunk
        except (EOFError, OSError) as exc:
            self._lost(exc)
            return False
        (n,) = _LENGTH.unpack_from(self._answer)
        if n != 64 * len(self._asked):
            self._lost(ValueError(f"an answer of {n} bytes for {len(self._asked)} records"))
            return False
        answer = bytes(self._answer[_LENGTH.size :])
        for i, (seq, record_hash) in enumerate(self._asked):
            self.ready[seq] = (record_hash, base64.b64encode(answer[64 * i : 64 * (i + 1)]).decode())
        self._asked = []
        self._answer.clear()
        return True

    def take(self, seq: int, record_hash: str) -> str | None:
        """The child's signature of record ``seq`` if it made it (for this very hash), else None."""
        made = self.ready.pop(seq, None)
        if made is None or made[0] != record_hash:
            return None
        return made[1]

    def forget_before(self, seq: int) -> None:
        """Drop signatures of records before ``seq`` (sent already; a rewind signs them again here)."""
        if self.ready:
            for old in [s for s in self.ready if s < seq]:
                del self.ready[old]
        if self.asked_through < seq - 1:
            self.asked_through = seq - 1

    def _lost(self, exc: BaseException) -> None:
        log.warning("floor link: the signing process is gone (%s); records are signed in this one", exc)
        self.close()
        self.ready.clear()

    def close(self) -> None:
        """End the child (the end of its input ends it) and reap it. Idempotent."""
        process, self._process = self._process, None
        self._asked = []
        self._answer.clear()
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


if __name__ == "__main__":
    sys.exit(serve(sys.stdin.buffer, sys.stdout.buffer))
