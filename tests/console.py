"""Run a console script (``shoe-controller``, ``shoe-sim``, ``shoe-floor``) in this process or as a process.

:func:`run_main` calls the function the installed script calls (found through the package's entry points, as
pip's wrapper finds it) with the arguments, and captures what it writes and its exit code the way the
interpreter would report them: a return value or ``SystemExit`` is the exit code, and an exception that
escapes is a traceback on stderr and exit code 1. It costs no interpreter start, so the many bad-input cases
run in process; :func:`run_script` runs the installed script itself, for the few cases where the process
boundary is what is tested (and to prove both ways say the same).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Result:
    """What a run of a console script left: the fields a ``subprocess.CompletedProcess`` has."""

    returncode: int
    stdout: str
    stderr: str


def entry_point(script: str) -> Callable[[list[str]], int]:
    """The ``main`` the installed console script ``script`` calls."""
    (found,) = entry_points(group="console_scripts", name=script)
    main: Callable[[list[str]], int] = found.load()
    return main


def run_main(argv: Sequence[str]) -> Result:
    """Run ``argv`` (``argv[0]`` names the console script) in this process, as ``sys.exit(main(argv[1:]))``."""
    main = entry_point(argv[0])
    out, err = io.StringIO(), io.StringIO()
    # A command may configure logging and install signal handlers before it refuses: leave both as they were.
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    signals = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code: object = main(list(argv[1:]))
            except SystemExit as exc:
                code = exc.code
            except Exception:
                traceback.print_exc()
                code = 1
    finally:
        root.handlers[:], root.level = handlers, level
        for sig, handler in signals.items():
            signal.signal(sig, handler)
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"): the message on stderr, exit code 1
        print(code, file=err)
        code = 1
    return Result(code, out.getvalue(), err.getvalue())


def run_script(argv: Sequence[str], *, timeout: float = 60, prefix: Sequence[str] = ()) -> Result:
    """Run the installed console script ``argv[0]`` as a process (``prefix`` goes before it, as ``setpriv``)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [*prefix, str(BIN / argv[0]), *argv[1:]],
        cwd=REPO,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)
