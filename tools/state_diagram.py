"""Generates the table's state diagram (what is due, and which inputs move it) from the pure core itself.

Run: .venv/bin/python tools/state_diagram.py  (prints the mermaid block that docs/architecture.md embeds;
``--check`` exits 1 if the doc's block differs, which tests/test_docs.py also checks).

The edges are found by driving :class:`controller.game.table.TableState` through seeded random shoes with
every kind of input (cards, unreadable cards, declare, void, new shoe, cut card, link, reboot), so the diagram
cannot drift from the code: it is the code's behaviour, not a drawing of it.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from controller.game.cards import DECK
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import (
    CardDrawn,
    CutCardOut,
    DeclarePressed,
    LinkChanged,
    NewShoePressed,
    ShoeRebooted,
    TableInput,
    TableRules,
    TableState,
    UnreadableCard,
    VoidPressed,
)

DOC = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
BEGIN, END = "<!-- state-diagram:begin -->", "<!-- state-diagram:end -->"

_LABEL = {
    CardDrawn: "card",
    UnreadableCard: "unreadable",
    DeclarePressed: "declare",
    VoidPressed: "void",
    NewShoePressed: "new shoe",
    CutCardOut: "cut card",
    ShoeRebooted: "shoe reboot",
}


def _inputs(rng: random.Random) -> TableInput:
    roll = rng.random()
    if roll < 0.80:
        return CardDrawn(rng.choice(DECK))
    others: list[TableInput] = [
        DeclarePressed(), DeclarePressed(), VoidPressed(), UnreadableCard(), CutCardOut(), ShoeRebooted(),
        NewShoePressed(), LinkChanged(up=False), LinkChanged(up=True),
    ]  # fmt: skip
    return rng.choice(others)


def edges(walks: int = 200, steps: int = 300, seed: int = 1) -> set[tuple[str, str, str]]:
    rng = random.Random(seed)
    found: set[tuple[str, str, str]] = set()
    for walk in range(walks):
        burn = BurnRule(BurnMode.EXPOSED) if walk % 2 else BurnRule(BurnMode.NONE)
        state = TableState(TableRules(decks=1 + walk % 2, burn_rule=burn))
        for _ in range(steps):
            event = _inputs(rng)
            if isinstance(event, LinkChanged):
                state.apply(event)
                continue
            before = state.due.value
            state.apply(event)
            after = state.due.value
            if before != after:
                found.add((before, _LABEL[type(event)], after))
    return found


def mermaid() -> str:
    lines = ["```mermaid", "stateDiagram-v2"]
    grouped: dict[tuple[str, str], set[str]] = {}
    for a, label, b in edges():
        grouped.setdefault((a, b), set()).add(label)
    for (a, b), labels in sorted(grouped.items()):
        lines.append(f"    {a} --> {b}: {', '.join(sorted(labels))}")
    lines.append("```")
    return "\n".join(lines)


def doc_block(text: str) -> str:
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end].strip()


def main() -> int:
    generated = mermaid()
    if "--check" in sys.argv:
        return 0 if doc_block(DOC.read_text()) == generated else 1
    sys.stdout.write(generated + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
