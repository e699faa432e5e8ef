"""shoe-controller: the table controller for a Punto Banco baccarat table.

The pure rules live in :mod:`controller.game`; everything else in this package is the thin shell
(serial link, GPIO panel, journal, displays, command line) around it.
"""

from __future__ import annotations

from functools import cache


@cache
def _version() -> str:
    """The one place the version is written is pyproject.toml; the installed metadata carries it here (read when
    first asked for: importlib.metadata costs every process of the table tens of milliseconds at start)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("shoe-controller")
    except PackageNotFoundError:  # pragma: no cover - run from a tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> str:
    if name == "__version__":
        return _version()
    raise AttributeError(f"module 'controller' has no attribute {name!r}")
