"""Admission (floor_protocol.admission): every payload is decoded or refused with one AdmissionError naming the
first problem, whatever its bytes; every genuine record passes, and TableRecord.from_json is bounded by it."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.game.records import (
    GENESIS_HASH,
    RecordError,
    RecordKind,
    TableRecord,
    canonical_json,
    derived_records,
    input_body,
    record_hash,
)
from controller.game.table import NewShoePressed, TableInput, TableState
from controller.rulebook import load_rulesets
from floor_protocol.admission import (
    INT_MAX,
    MAX_RECORD_BYTES,
    AdmissionError,
    Limits,
    admit_json,
    check_id,
    check_record,
    check_value,
)
from tests.game.strategies import inputs


def genuine(events: list[TableInput], table: str = "T1") -> list[TableRecord]:
    """The records a table journals for ``events`` (each input, then what it gave rise to), chained, as the
    floor link publishes them."""
    rules = load_rulesets()
    ruleset = max(rules.values(), key=lambda r: len(canonical_json({"d": r.description})))
    state = TableState()
    out: list[TableRecord] = []
    prev = GENESIS_HASH

    def add(kind: str, body: dict[str, Any], cause: int | None) -> int:
        nonlocal prev
        seq, at = len(out) + 1, "2026-12-01T11:20:00.123456+00:00"
        link = record_hash(prev, seq, at, kind, 7, seq, cause, canonical_json(body))
        out.append(TableRecord(table, seq, kind, at, 7, seq, cause, body, prev, link))
        prev = link
        return seq

    for event in events:
        cause = add(RecordKind.INPUT, input_body(event, source="shoe", seq=len(out)), None)
        for kind, body in derived_records(state.apply(event), ruleset):
            add(kind, body, cause)
    return out


def record(**changes: Any) -> dict[str, Any]:
    body = {"kind": "card", "card": "AS", "source": "shoe", "seq": 1}
    rec = TableRecord("T1", 1, "input", "2026-12-01T11:20:00+00:00", 7, 1, None, body, GENESIS_HASH, "a" * 64)
    return {**rec.to_dict(), **changes}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(inputs, max_size=120))
def test_every_genuine_record_passes_and_reads_back_the_same(events: list[TableInput]) -> None:
    for rec in genuine(events):
        payload = rec.to_json().encode()
        assert len(payload) < MAX_RECORD_BYTES // 16
        assert TableRecord.from_json(payload) == rec
        assert TableRecord.from_json(payload).chain_ok()


def test_the_largest_genuine_record_is_far_under_the_cap() -> None:
    largest = max(len(r.to_json().encode()) for r in genuine([NewShoePressed()]))  # the shoe start, its ruleset
    assert 500 < largest < MAX_RECORD_BYTES // 32


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode)))
def test_no_bytes_make_admission_raise_anything_but_its_error(payload: bytes) -> None:
    try:
        admit_json(payload, Limits(max_bytes=200, max_depth=4))
        TableRecord.from_json(payload, Limits(max_bytes=200, max_depth=4))
    except (AdmissionError, RecordError):
        pass


@settings(max_examples=400, deadline=None)
@given(json_values, st.sampled_from(["v", "table", "seq", "body", "cause", "hash", "x", "sig", "kind"]))
def test_no_json_value_makes_a_record_read_raise_anything_but_a_record_error(value: Any, field: str) -> None:
    for data in (value, record(**{field: value})):
        text = json.dumps(data, ensure_ascii=False)  # lone surrogates, NaN, huge ints and all
        with contextlib.suppress(RecordError):
            TableRecord.from_json(text.encode("utf-8", "surrogatepass"))
        with contextlib.suppress(RecordError):
            TableRecord.from_dict(data)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_what_passes_admission_is_storable_json(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    try:
        admitted = admit_json(text)
    except AdmissionError:
        return
    encoded = json.dumps(admitted, ensure_ascii=False, allow_nan=False).encode("utf-8")  # no surrogate, no NaN
    assert b"\\u0000" not in encoded


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        (b'{"body":{"detail":"\\ud800"}}', "lone surrogate"),
        (b'{"a\\udfff":1}', "lone surrogate"),
        (b'{"body":{"x":"a\\u0000b"}}', "NUL"),
        (b'{"a\\u0000":1}', "NUL"),
        (b'{"seq":9223372036854775808}', "64-bit"),
        (b'{"cause":-9223372036854775809}', "64-bit"),
        (b"[" * 100_000 + b"]" * 100_000, "nested deeper"),
        (b'{"a":' * 40 + b"1" + b"}" * 40, "nested deeper"),
        (b"[1e999]", "not finite"),
        (b'{"a":NaN}', "NaN"),
        (b'{"a":Infinity}', "Infinity"),
        (b'"\xed\xa0\x80"', "not UTF-8"),
        (b"\xff", "not UTF-8"),
        (b"[1," + b"1" * 5000 + b"]", "not JSON"),
        (b"{", "not JSON"),
        (b" " * (MAX_RECORD_BYTES + 1), "byte cap"),
    ],
)
def test_each_poison_is_refused_naming_it(payload: bytes, says: str) -> None:
    limits = Limits() if says == "byte cap" else Limits(max_bytes=1_000_000)  # the depth, not the size, refuses
    with pytest.raises(AdmissionError, match=says):
        admit_json(payload, limits)
    with pytest.raises(RecordError, match=says):
        TableRecord.from_json(payload, limits)


def test_a_lone_surrogate_in_text_is_refused() -> None:
    with pytest.raises(AdmissionError, match="lone surrogate"):
        admit_json('{"a":"\ud800"}')


def test_brackets_inside_strings_do_not_count_and_the_limit_is_exact() -> None:
    assert admit_json(b'["[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\"[[["]') == [
        '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["[[['
    ]
    assert admit_json(b"[" * 32 + b"]" * 32, Limits()) is not None
    with pytest.raises(AdmissionError, match="deeper than 32"):
        admit_json(b"[" * 33 + b"]" * 33)
    assert admit_json(b"1" * 10, Limits(max_bytes=10)) == 1111111111
    with pytest.raises(AdmissionError, match="11 bytes is over the 10-byte cap"):
        admit_json(b"1" * 11, Limits(max_bytes=10))
    assert admit_json(str(INT_MAX).encode()) == INT_MAX


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"extra": 1}, "unknown record field 'extra'"),
        ({"table": "T 1"}, "table is not an id"),
        ({"table": "x" * 65}, "table is not an id"),
        ({"table": "../T1"}, "table is not an id"),
        ({"seq": "1"}, "seq is not int"),
        ({"seq": True}, "seq is not int"),
        ({"cause": 1.5}, "cause is not int"),
        ({"body": []}, "body is not dict"),
        ({"hash": "A" * 64}, "hash is not a sha256"),
        ({"prev": "0" * 63}, "prev is not a sha256"),
        ({"at": "2" * 65}, "at is longer"),
        ({"sig": 5}, "sig is not str"),
        ({"seq": 2**63}, "64-bit"),
        ({"cause": 2**63}, "64-bit"),
        ({"body": {"serial": "SN\x00\x00"}}, "NUL"),
    ],
)
def test_the_envelope_is_checked(changes: dict[str, Any], says: str) -> None:
    data = record(**changes)
    with pytest.raises(AdmissionError, match=says):
        check_record(data)
    with pytest.raises(RecordError, match=says):
        TableRecord.from_dict(data)
    with pytest.raises(RecordError, match=says):
        TableRecord.from_json(json.dumps(data))


def test_a_genuine_envelope_passes_and_ids_are_the_configurations() -> None:
    assert TableRecord.from_dict(record()).table == "T1"
    assert TableRecord.from_dict(record(sig=None, cause=3)).cause == 3
    assert check_id("table", "pit-3.table_12") == "pit-3.table_12"
    for bad in ("", "-x", "a/b", "a+b", "é", 5):
        with pytest.raises(AdmissionError):
            check_id("table", bad)


def test_limits_are_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        Limits(max_bytes=0)


tricky_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats()
    | st.text(st.sampled_from(["a", "\x00", "\ud800", "\udfff", "é", "\\", '"', "[", "\U0001f0a1"]), max_size=6),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(st.sampled_from(["k", "\x00", "\ud800", "é"]), max_size=3), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(tricky_values, st.booleans())
def test_the_fast_path_refuses_exactly_what_the_walk_refuses(value: Any, ascii_only: bool) -> None:
    """admit_json skips the walk when the bytes prove it needless (no \\u escape, no 19-digit run): it must
    refuse exactly the values the walk refuses, whichever way the JSON was written."""
    payload = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    try:  # what the payload says (two lone surrogates escaped side by side decode as one character)
        check_value(json.loads(payload))
        walked = True
    except (AdmissionError, ValueError):  # ValueError: a raw surrogate is not UTF-8
        walked = False
    try:
        admit_json(payload, Limits(max_bytes=1_000_000))
        admitted = True
    except AdmissionError:
        admitted = False
    assert admitted == walked, payload[:200]


def test_admission_imports_nothing_of_the_core_that_imports_it() -> None:
    """controller.game.records imports floor_protocol.admission: the arrow may not point back (a cycle)."""
    from tests.test_architecture import ROOT as REPO
    from tests.test_architecture import imports

    ours = [n for n in imports(REPO / "floor_protocol" / "admission.py") if n.split(".")[0] in ("controller", "floor")]
    assert ours == []
    assert {n for n in imports(REPO / "floor_protocol" / "topics.py") if n.startswith(("controller", "floor"))} == set()
