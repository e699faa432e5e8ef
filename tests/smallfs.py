"""A real, small file system that really fills: a tmpfs mounted for one test (needs root).

Where mounting is impossible the test is skipped with the reason, except under ``CI=true``, where it fails:
CI runs as root and must exercise a full disk for real.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


class SmallFs:
    """A mounted tmpfs of ``size`` bytes at ``root``; :meth:`fill` takes every free byte, :meth:`free` gives
    them back."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.filler = root / "filler"

    def fill(self) -> None:
        """Write until the file system says ENOSPC (the filler file keeps what it got)."""
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        chunk = b"\0" * 65536
        try:
            while True:
                try:
                    os.write(fd, chunk)
                except OSError:
                    if len(chunk) == 1:
                        break
                    chunk = chunk[: len(chunk) // 2]
        finally:
            os.close(fd)
        assert self.free_bytes() == 0

    def free(self) -> None:
        self.filler.unlink()

    def free_bytes(self) -> int:
        st = os.statvfs(self.root)
        return st.f_bavail * st.f_frsize


@contextmanager
def small_fs(where: Path, size: str) -> Iterator[SmallFs]:
    root = where / "smallfs"
    root.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(root)], capture_output=True, text=True
    )
    if done.returncode != 0:
        reason = f"cannot mount a tmpfs to fill (needs root): {done.stderr.strip() or done.returncode}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        yield SmallFs(root)
    finally:
        subprocess.run(["umount", "-l", str(root)], check=False)
