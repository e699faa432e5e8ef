"""The simulator's scripts as JSON Lines (``--script``'s faults, ``--bets``' wagers): one object a line, blank
lines and ``#`` comments skipped, and one error that names the file and line. Both readers read lines here."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any


class ScriptLineError(ValueError):
    """A script's line (or an argument) that cannot be used; ``where`` names it (``file:line`` or the option)."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.where = where
        self.reason = reason


def script_objects(
    lines: Iterable[str], source: str, error: type[ScriptLineError], example: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(where, object)`` for each line that is not blank or a ``#`` comment; a line that is not a JSON
    object raises ``error`` naming ``source:line`` (``example`` shows what one looks like)."""
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        where = f"{source}:{number}"
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise error(where, f"not JSON ({exc.msg})") from None
        except RecursionError:
            raise error(where, "JSON nested too deeply") from None
        if not isinstance(obj, dict):
            raise error(where, f"expected an object like {example}")
        yield where, obj
