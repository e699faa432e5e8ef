"""The hash chain's writer: append and the duplicate drop, derived records after their input, one
transaction per input (SIGKILL safety), the hash over every field. Real SQLite files in tmp_path."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.journal import (
    GENESIS_HASH,
    Journal,
    canonical_json,
    record_hash,
)
from tests.journal.helpers import REPO, TS, build, coup_body


def test_append_returns_ids_and_inputs_replay_in_order(path: Path) -> None:
    with Journal.open(path) as j:
        a = j.append({"kind": "new_shoe"}, ts=TS)
        b = j.append({"kind": "card", "card": "9D"}, session=3, number=1, ts=TS)
        c = j.append({"kind": "link", "up": False}, ts=TS)
        assert (a, b, c) == (1, 2, 3)
        assert list(j.inputs()) == [
            (1, {"kind": "new_shoe"}),
            (2, {"kind": "card", "card": "9D"}),
            (3, {"kind": "link", "up": False}),
        ]
    # survives a reopen, and the chain continues from its head
    with Journal.open(path, create=False) as j:
        assert j.append({"kind": "declare"}, ts=TS) == 4
        assert [rid for rid, _ in j.inputs()] == [1, 2, 3, 4]
        assert j.verify() == []


def test_duplicate_session_number_is_dropped_with_nothing_written(path: Path) -> None:
    with Journal.open(path) as j:
        assert j.append({"kind": "card", "card": "9D"}, session=3, number=1) == 1
        head = j.head()
        # the shoe resends number 1 (its ACK was lost): dropped, and its derived records with it
        resent = j.append({"kind": "card", "card": "9D"}, session=3, number=1, derived=[coup_body(1, 1)])
        assert resent is None
        assert j.count() == 1
        assert j.head() == head
        assert j.coups() == []
        # the same number in another shoe session is a new event
        assert j.append({"kind": "card", "card": "9D"}, session=4, number=1) == 2
        # buttons and link events carry no (session, number) and never collide
        assert j.append({"kind": "declare"}) == 3
        assert j.append({"kind": "declare"}) == 4
        assert j.verify() == []


def test_derived_records_follow_their_input_with_its_ts(path: Path) -> None:
    with Journal.open(path) as j:
        rid = j.append(
            {"kind": "declare"},
            ts=TS,
            derived=[coup_body(2, 5), ("note", {"alarm": "misdraw"})],
        )
        assert rid == 1
        records = list(j.records())
        assert [(r.id, r.kind, r.cause, r.ts) for r in records] == [
            (1, "input", None, TS),
            (2, "coup", 1, TS),
            (3, "note", 1, TS),
        ]
        assert records[1].data() == coup_body(2, 5)
        # derived records are not replayed as inputs
        assert list(j.inputs()) == [(1, {"kind": "declare"})]


def test_a_derived_input_and_bad_arguments_are_refused_and_write_nothing(path: Path) -> None:
    with Journal.open(path) as j:
        with pytest.raises(ValueError, match="cannot be an input"):
            j.append({"kind": "declare"}, derived=[("input", {"kind": "declare"})])
        with pytest.raises(ValueError, match="ISO 8601"):
            j.append({"kind": "declare"}, ts="yesterday")
        with pytest.raises(ValueError, match="float"):
            j.append({"kind": "bet", "amount": float("nan")})
        with pytest.raises(TypeError):
            j.append(["not", "a", "dict"])  # type: ignore[arg-type]
        assert j.count() == 0


def test_default_ts_is_utc_iso8601(path: Path) -> None:
    with Journal.open(path) as j:
        j.append({"kind": "declare"})
        (record,) = j.records()
    assert record.ts.endswith("+00:00")
    assert record.ts[10] == "T"


inputs_strategy = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(1, 3)),  # session
        st.integers(1, 6),  # number
        st.sampled_from(["2H", "KD", "AS", "9C"]),
        st.integers(0, 2),  # derived coups
    ),
    max_size=25,
)


@settings(max_examples=30, deadline=None)
@given(inputs_strategy)
def test_every_event_is_journaled_exactly_once(events: list[tuple[int | None, int, str, int]]) -> None:
    """Property: whatever the shoe resends, each (session, number) is stored once, in arrival order, with
    the derived records of its first arrival; the chain verifies and last_event names the newest."""
    with tempfile.TemporaryDirectory() as tmp, Journal.open(Path(tmp) / "j.db", durable=False) as j:
        expected: list[dict[str, Any]] = []
        seen: set[tuple[int, int]] = set()
        expected_coups = 0
        last: tuple[int, int] | None = None
        for session, number, token, n_derived in events:
            body = {"kind": "card", "card": token, "n": number}
            derived = [coup_body(1, i) for i in range(n_derived)]
            n = number if session is not None else None
            rid = j.append(body, session=session, number=n, derived=derived)
            key = (session, number) if session is not None else None
            if key is not None and key in seen:
                assert rid is None
                continue
            assert rid is not None
            if key is not None:
                seen.add(key)
                last = key
            expected.append(body)
            expected_coups += n_derived
        assert [body for _, body in j.inputs()] == expected
        assert len(j.coups()) == expected_coups
        assert j.last_event() == last
        assert j.verify() == []


KILL_CHILD = textwrap.dedent(
    """
    import sys
    from controller.journal import Journal
    j = Journal.open(sys.argv[1])
    n = 0
    while True:
        n += 1
        coup = {"shoe": 1, "coup": n, "player": ["2H"] * 20, "banker": ["3S"] * 20}
        j.append({"kind": "card", "card": "9D", "n": n}, session=1, number=n,
                 derived=[coup, ("note", {"n": n, "pad": "x" * 3000})])
        if n == 50:
            print("ready", flush=True)
    """
)


@pytest.mark.parametrize("extra_appends", [0, 1, 2, 3, 4])
@pytest.mark.e2e
def test_sigkill_mid_loop_leaves_a_whole_last_input(path: Path, extra_appends: int) -> None:
    child = subprocess.Popen([sys.executable, "-c", KILL_CHILD, str(path)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        # let it run on a little (each round trip is a few more commits), then kill it without warning
        for _ in range(extra_appends):
            with Journal.open(path, read_only=True) as peek:
                peek.count()
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=10)
        if child.stdout is not None:
            child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    with Journal.open(path, create=False) as j:
        assert j.verify() == []
        inputs = list(j.inputs())
        assert len(inputs) >= 50
        assert [body["n"] for _, body in inputs] == list(range(1, len(inputs) + 1))
        records = list(j.records())
        # every input, the last one included, is followed by both of its derived records
        assert len(records) == 3 * len(inputs)
        last_id, _ = inputs[-1]
        assert [(r.kind, r.cause) for r in records[-2:]] == [("coup", last_id), ("note", last_id)]
        assert j.last_event() == (1, len(inputs))
        # and the journal carries on where it stopped
        assert j.append({"kind": "card", "card": "9D"}, session=1, number=len(inputs)) is None
        assert j.append({"kind": "declare"}) == len(records) + 1
        assert j.verify() == []


def test_the_hash_covers_every_field(path: Path) -> None:
    build(path, 1)
    with Journal.open(path, read_only=True) as j:
        (r,) = j.records()
    assert r.body == canonical_json({"card": "3S", "kind": "card"})
    assert r.hash == record_hash(GENESIS_HASH, 1, TS, "input", 7, 1, None, r.body)
    changed = [
        record_hash(GENESIS_HASH, 2, TS, "input", 7, 1, None, r.body),
        record_hash(GENESIS_HASH, 1, TS.replace("20:15", "20:16"), "input", 7, 1, None, r.body),
        record_hash(GENESIS_HASH, 1, TS, "coup", 7, 1, None, r.body),
        record_hash(GENESIS_HASH, 1, TS, "input", 8, 1, None, r.body),
        record_hash(GENESIS_HASH, 1, TS, "input", 7, 2, None, r.body),
        record_hash(GENESIS_HASH, 1, TS, "input", 7, 1, 1, r.body),
        record_hash(GENESIS_HASH, 1, TS, "input", 7, 1, None, r.body.replace("3S", "3H")),
        record_hash("1" * 64, 1, TS, "input", 7, 1, None, r.body),
    ]
    assert r.hash not in changed
