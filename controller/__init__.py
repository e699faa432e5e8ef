"""shoe-controller: the table controller for a Punto Banco baccarat table.

The pure rules live in :mod:`controller.game`; everything else in this package is the thin shell
(serial link, GPIO panel, journal, displays, command line) around it.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    # The one place the version is written is pyproject.toml; the installed metadata carries it here.
    __version__ = version("shoe-controller")
except PackageNotFoundError:  # pragma: no cover - run from a tree that was never installed
    __version__ = "0+unknown"
