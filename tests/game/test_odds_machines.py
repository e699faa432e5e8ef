"""The exact odds are the same to the last bit on every machine: the journal's ``ev`` (an advantage record, a
wager's) is hashed into the chain, and a floor or a surveillance room re-reading a journal must get the bytes the
table wrote. NumPy's bundled OpenBLAS picks its kernel by the CPU, and a float matrix product sums in the
kernel's order: the odds once differed in their last digits from one machine to another (the pinned journal
of tests/test_record_bytes.py failed on a machine without AVX-512). Each kernel is forced here in a process of
its own (``OPENBLAS_CORETYPE``) and the odds compared bit for bit."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e  # starts Python processes

_PROGRAM = """
import json
from controller.game.cards import RANKS
from controller.game.composition import Composition
from controller.game.odds import exact_odds
from controller.game.rules import COMMISSION, SUPER6
out = []
for rules in (COMMISSION, SUPER6):
    for decks, taken in ((8, 0), (8, 97), (1, 11)):
        comp = Composition.decks(decks)
        for i in range(taken):  # an uneven shoe: a few ranks drawn more than the others
            rank = RANKS[(i * 7) % 13]
            if comp.count(rank):
                comp = comp.remove(rank)
        report = exact_odds(comp, rules)
        out.append([report.probabilities.banker.hex(), *[b.ev.hex() for b in report.bets.values()],
                    *[b.variance.hex() for b in report.bets.values()]])
print(json.dumps(out))
"""


def _odds(kernel: str) -> list[list[str]]:
    env = dict(os.environ, OPENBLAS_CORETYPE=kernel)
    done = subprocess.run([sys.executable, "-c", _PROGRAM], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_the_odds_do_not_depend_on_the_cpus_blas_kernel() -> None:
    oldest = _odds("Prescott")  # SSE3 only
    assert _odds("Haswell") == oldest  # AVX2: a different summation order in a float matrix product
