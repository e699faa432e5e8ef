"""``shoe-floor``'s entry point: the floor's server needs its deployable's libraries (``pip install
'shoe-controller[floor]'``); on a host that installed the base alone, every ``shoe-floor`` command says so in one
line and exits 2, instead of dying in a ModuleNotFoundError's traceback. Imports nothing that needs an extra
before it runs :func:`floor.cli.main`."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from commandline.extras import run_needing


def main(argv: Sequence[str] | None = None) -> int:
    def run() -> int:
        from floor.cli import main as shoe_floor

        return shoe_floor(argv)

    return run_needing("shoe-floor", "floor", run)


if __name__ == "__main__":
    sys.exit(main())
