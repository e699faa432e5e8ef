"""Every command's ``--help`` prints and exits 0, for both console scripts (argparse formats each help string
with ``%``: a bare ``%`` in one breaks that command's help with a traceback, which a test of the command's work
never sees)."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from controller.cli import build_parser as table_parser
from floor.cli import parser as floor_parser
from hw_sim.cli import build_parser as sim_parser


def _commands(p: argparse.ArgumentParser) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += [[name, *rest] for rest in _commands(sub)]
    return out


@pytest.mark.parametrize(
    "make", [table_parser, floor_parser, sim_parser], ids=["shoe-controller", "shoe-floor", "shoe-sim"]
)
def test_every_command_s_help_prints(make: object) -> None:
    assert callable(make)
    commands = _commands(make())
    for command in commands:
        text = io.StringIO()
        with contextlib.redirect_stdout(text), pytest.raises(SystemExit) as exit_:
            make().parse_args([*command, "--help"])
        assert exit_.value.code == 0, command
        assert "usage:" in text.getvalue(), command
