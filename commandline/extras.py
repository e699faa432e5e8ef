"""Which of the distribution's extras brings which library, so that a command run where its deployable's
libraries are not installed (``pip install shoe-controller`` with no extra) says so in one line, naming what to
install (``pip install 'shoe-controller[table]'``), and exits 2 instead of dying in a ModuleNotFoundError's
traceback.

Standard library only: it runs before anything that needs an extra is imported.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

__all__ = ["LIBRARIES", "missing_extra", "run_needing"]

#: The import names of the libraries each extra brings (pyproject.toml's ``optional-dependencies``; a test holds
#: the two equal). A table is ``[table]`` (``[pi]`` on a Raspberry Pi, which includes it); a floor server ``[floor]``.
LIBRARIES: dict[str, frozenset[str]] = {
    "table": frozenset(
        {"serial", "gpiozero", "RPLCD", "smbus2", "paho", "prometheus_client", "cryptography", "argon2"}
    ),
    "floor": frozenset({"paho", "psycopg", "prometheus_client", "cryptography", "tzdata", "argon2"}),
}


def missing_extra(prog: str, extra: str, exc: ModuleNotFoundError) -> str | None:
    """The one line to print for ``exc`` when the module it could not find is a library of ``extra``; ``None`` for
    any other module (one of ours missing is a fault of the install or of the code, and keeps its traceback)."""
    top = (exc.name or "").split(".")[0]
    if top not in LIBRARIES[extra]:
        return None
    return (
        f"{prog}: this needs the {extra}'s libraries, which are not installed (no module named {top!r}): "
        f"pip install 'shoe-controller[{extra}]'"
    )


def run_needing(prog: str, extra: str, run: Callable[[], int]) -> int:
    """``run()``, or the one line of :func:`missing_extra` on stderr and exit code 2 when it needs a library of
    ``extra`` that is not installed."""
    try:
        return run()
    except ModuleNotFoundError as exc:
        line = missing_extra(prog, extra, exc)
        if line is None:
            raise
        sys.stderr.write(line + "\n")
        return 2
