"""What the command line's input bounds cost: the largest file each command accepts, and one just over.

Run: .venv/bin/python benchmarks/bench_input_bounds.py

For ``shoe-controller replay`` (card tokens, bound ``MAX_TOKEN_FILE_BYTES``) and ``check-config``
(``MAX_CONFIG_BYTES``): runs the real console script on a file at the bound and on a sparse 2 GiB file, and
prints the wall time and the peak RSS of each process (``ru_maxrss`` of the child). The 2 GiB file must be
refused as fast, and in as little memory, as a small one: it is never read whole.
"""

from __future__ import annotations

import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from controller.commands import MAX_TOKEN_FILE_BYTES
from controller.config import MAX_CONFIG_BYTES
from controller.game.cards import DECK

BIN = Path(sys.executable).parent


def measure(argv: list[str]) -> tuple[float, float, int]:
    """(seconds, peak RSS in MB, exit code) of one run of a console script."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, check=False)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of the children is the largest of any child so far: run the small cases first.
    return seconds, max(peak, before) / 1024, proc.returncode


def cards_file(path: Path, size: int) -> int:
    rng = random.Random(1)
    tokens = [card.token for card in DECK]
    out: list[str] = []
    length = 0
    while length + 4 <= size:
        token = rng.choice(tokens)
        out.append(token)
        length += len(token) + 1
    path.write_text(" ".join(out), encoding="utf-8")
    return len(out)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-bounds-") as tmp:
        root = Path(tmp)
        huge = root / "huge"
        with huge.open("wb") as fh:
            fh.truncate(2 * 1024**3)
        config = root / "config.toml"
        config.write_text("# " + "x" * (MAX_CONFIG_BYTES - 3) + "\n", encoding="utf-8")
        cards = root / "cards.txt"
        n = cards_file(cards, MAX_TOKEN_FILE_BYTES)
        print(f"{'case':<44}{'seconds':>9}{'peak RSS':>12}{'exit':>6}")
        cases = [
            ("check-config, 2 GiB sparse file (refused)", ["shoe-controller", "check-config", str(huge)]),
            ("replay, 2 GiB sparse file (refused)", ["shoe-controller", "replay", str(huge)]),
            (f"check-config, {MAX_CONFIG_BYTES} bytes (the bound)", ["shoe-controller", "check-config", str(config)]),
            (f"replay, {n} cards ({MAX_TOKEN_FILE_BYTES} bytes)", ["shoe-controller", "replay", str(cards)]),
        ]
        for name, argv in cases:
            seconds, mb, code = measure(argv)
            print(f"{name:<44}{seconds:>8.2f}s{mb:>9.0f} MB{code:>6}")


if __name__ == "__main__":
    main()
