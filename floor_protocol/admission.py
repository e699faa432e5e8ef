"""Admission: a message from the broker is bounded and checked before anything else reads it.

Every record reaching the floor comes from a broker the floor does not control, sent with some table's
credentials: its bytes are anyone's. :func:`admit_json` takes a payload and :class:`Limits` and returns the
decoded JSON value, or raises one :class:`AdmissionError` naming the first problem, and nothing else:

* **size**: at most ``Limits.max_bytes`` bytes (``shoe-floor serve --max-record-bytes``; by default
  :data:`MAX_RECORD_BYTES`, 64 KiB: the largest genuine record, a shoe's start record with its ruleset, is
  about 1 KiB);
* **nesting**: at most ``Limits.max_depth`` arrays and objects deep (:data:`MAX_DEPTH`; a genuine record is
  6 deep), counted by a scan of the brackets outside strings *before* :func:`json.loads` could recurse;
* **UTF-8 JSON** with no ``NaN`` or infinity;
* **integers** in the signed 64-bit range (what the archive's columns and the journal's ids hold), floats
  finite;
* **strings**, object keys too, without NUL (PostgreSQL refuses it in text and ``jsonb``) or a lone
  surrogate (``"\\ud800"``: no UTF-8 encodes it, so no database stores it).

:func:`check_value` makes the last two checks on an already decoded value, and :func:`check_record` adds the
record's envelope: only the known top-level fields (:data:`RECORD_FIELDS`), each of its type, the table id
of :data:`ID_CHARSET` (:data:`floor_protocol.topics.ID_PATTERN`, what a table's configuration writes) and
the hashes 64 lowercase hex digits. :meth:`controller.game.records.TableRecord.from_json` and
``from_dict`` run them, so every reader of records is bounded the same way.

Pure: values in, values out.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from floor_protocol.topics import ID_PATTERN

__all__ = [
    "HASH_PATTERN",
    "ID_CHARSET",
    "INT_MAX",
    "INT_MIN",
    "MAX_DEPTH",
    "MAX_RECORD_BYTES",
    "RECORD_FIELDS",
    "AdmissionError",
    "Limits",
    "admit_json",
    "check_id",
    "check_record",
    "check_value",
    "needs_walk",
]

#: Default cap on a record's payload, bytes (the largest genuine record is about 1 KiB).
MAX_RECORD_BYTES = 64 * 1024
#: Default cap on nesting (arrays and objects); a genuine record is 6 deep (record, body, rules, pays,
#: dragon_bonus, ladder).
MAX_DEPTH = 32
#: The signed 64-bit range: every integer a message may carry.
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
#: What an id (a table's, a site's) may be: 1-64 of ``A-Z a-z 0-9 _ . -``, starting with a letter or digit.
ID_CHARSET = ID_PATTERN
#: A record's ``hash`` and ``prev``: sha256 as 64 lowercase hex digits.
HASH_PATTERN = re.compile(r"[0-9a-f]{64}")
#: Longest ``at`` stamp (UTC ISO 8601 with microseconds is 32 characters) and ``kind``, ``sig`` strings.
_AT_MAX, _KIND_MAX, _SIG_MAX = 64, 32, 256

#: The record's top-level fields and their JSON types (``None`` where null is allowed too); no others.
RECORD_FIELDS: dict[str, tuple[type, bool]] = {
    "v": (int, False),
    "table": (str, False),
    "seq": (int, False),
    "kind": (str, False),
    "at": (str, False),
    "session": (int, True),
    "number": (int, True),
    "cause": (int, True),
    "body": (dict, False),
    "prev": (str, False),
    "hash": (str, False),
    "sig": (str, True),
}

#: The bracket scan's tokens: a JSON string literal (its escapes included; an unterminated one runs to the end,
#: so the scan stays linear), or a bracket.
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)
#: What no stored string may hold: NUL, or a surrogate (json.loads leaves only lone ones: pairs combine).
_BAD_CHAR = re.compile("[\x00\ud800-\udfff]")
#: A run of digits long enough to be an integer outside 64 bits (or a part of one).
_LONG_NUMBER = re.compile(rb"[0-9]{19}")


class AdmissionError(ValueError):
    """A message refused at admission; the text names the first problem."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds of one message: size in bytes and nesting depth."""

    max_bytes: int = MAX_RECORD_BYTES
    max_depth: int = MAX_DEPTH

    def __post_init__(self) -> None:
        if self.max_bytes < 1 or self.max_depth < 1:
            raise ValueError(f"admission limits must be positive: {self.max_bytes} bytes, depth {self.max_depth}")


DEFAULT_LIMITS = Limits()


def _no_constant(name: str) -> Any:
    raise AdmissionError(f"JSON {name} is not a number a record may carry")


def admit_json(payload: bytes | bytearray | str, limits: Limits = DEFAULT_LIMITS) -> Any:
    """The JSON value ``payload`` holds, checked (see the module); raises :class:`AdmissionError` only."""
    if isinstance(payload, str):
        try:
            data = payload.encode("utf-8")
        except UnicodeEncodeError:
            raise AdmissionError("message is not UTF-8 text (a lone surrogate)") from None
    elif isinstance(payload, bytes | bytearray):
        data = bytes(payload)
    else:
        raise AdmissionError(f"message is not bytes or text but {type(payload).__name__}")
    if len(data) > limits.max_bytes:
        raise AdmissionError(f"message of {len(data)} bytes is over the {limits.max_bytes}-byte cap")
    _check_depth(data, limits.max_depth)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AdmissionError(f"message is not JSON: not UTF-8 at byte {exc.start}") from None
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except AdmissionError:
        raise
    except (ValueError, RecursionError) as exc:  # ValueError: bad JSON, or an integer of thousands of digits
        raise AdmissionError(f"message is not JSON: {exc!s:.120}") from None
    if needs_walk(data):
        check_value(value, limits.max_depth)
    return value


def needs_walk(data: bytes) -> bool:
    """Whether a decoded payload needs :func:`check_value`'s walk, or its bytes already prove it clean: a NUL
    or a surrogate reaches a decoded string only through a ``\\u`` escape (raw control bytes are not JSON, a
    raw surrogate is not UTF-8), and an integer outside 64 bits has 19 digits or more. The depth was scanned
    and the floats checked while decoding. The fast path of every genuine record."""
    return b"\\u" in data or _LONG_NUMBER.search(data) is not None


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise AdmissionError(f"a number is not finite: {text[:40]}")
    return value


def _check_depth(data: bytes, max_depth: int) -> None:
    """Nesting of arrays and objects outside strings, without recursion (before json.loads would)."""
    if data.count(b"[") + data.count(b"{") <= max_depth:
        return  # not enough brackets to nest deeper, wherever they are
    depth = 0
    for m in _TOKEN.finditer(data):
        token = m.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth > max_depth:
                raise AdmissionError(f"message is nested deeper than {max_depth}")
        elif token in (b"]", b"}"):
            depth -= 1


def check_value(value: Any, max_depth: int = MAX_DEPTH) -> None:
    """A decoded JSON value: nesting, integers in range, finite floats, strings and keys without NUL or a lone
    surrogate. Iterative: a value nested past ``max_depth`` is refused, not recursed into."""
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    while stack:
        item, depth, where = stack.pop()
        if isinstance(item, str):
            _check_string(item, where or "a string")
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if not INT_MIN <= item <= INT_MAX:
                raise AdmissionError(f"{where or 'an integer'} is outside the signed 64-bit range")
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise AdmissionError(f"{where or 'a number'} is not finite")
        elif isinstance(item, Mapping | list | tuple):
            if depth >= max_depth:
                raise AdmissionError(f"message is nested deeper than {max_depth}")
            if isinstance(item, Mapping):
                for key, sub in item.items():
                    if not isinstance(key, str):
                        raise AdmissionError(f"an object key is not a string: {type(key).__name__}")
                    _check_string(key, "an object key")
                    stack.append((sub, depth + 1, f"field {_shown(key)}"))
            else:
                stack.extend((sub, depth + 1, where) for sub in item)
        else:
            raise AdmissionError(f"{where or 'a value'} is not JSON but {type(item).__name__}")


def _shown(text: str) -> str:
    return repr(_BAD_CHAR.sub("?", text[:40]))


def _check_string(text: str, where: str) -> None:
    bad = _BAD_CHAR.search(text)
    if bad is not None:
        what = "a NUL" if bad.group() == "\x00" else "a lone surrogate"
        raise AdmissionError(f"{where} holds {what} (character {bad.start()})")


def check_id(name: str, value: object) -> str:
    """An id (a table's, a site's): a string of :data:`ID_CHARSET`; raises :class:`AdmissionError`."""
    if not isinstance(value, str) or ID_CHARSET.fullmatch(value) is None:
        raise AdmissionError(f"{name} is not an id (1-64 of A-Z a-z 0-9 _ . -): {_shown(str(value))}")
    return value


def check_record(data: object, max_depth: int = MAX_DEPTH, *, values: bool = True) -> Mapping[str, Any]:
    """A decoded record: a JSON object of only :data:`RECORD_FIELDS`, each of its type, the table an id, the
    hashes sha256 hex, short strings short; then :func:`check_value` over all of it. Missing fields and the
    record's own meaning (version, kind, seq) are ``TableRecord.from_dict``'s to judge. ``values=False`` skips
    the walk for a value :func:`admit_json` has already walked."""
    if not isinstance(data, Mapping):
        raise AdmissionError(f"a record is a JSON object, not {type(data).__name__}")
    for key, value in data.items():
        if not isinstance(key, str):
            raise AdmissionError(f"a record field name is not a string: {type(key).__name__}")
        spec = RECORD_FIELDS.get(key)
        if spec is None:
            raise AdmissionError(f"unknown record field {_shown(key)}")
        kind, nullable = spec
        if value is None and nullable:
            continue
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise AdmissionError(f"record field {key} is not {kind.__name__}: {type(value).__name__}")
    if "table" in data:
        check_id("record field table", data["table"])
    for key in ("prev", "hash"):
        if key in data and HASH_PATTERN.fullmatch(data[key]) is None:
            raise AdmissionError(f"record field {key} is not a sha256 (64 lowercase hex digits)")
    for key, most in (("at", _AT_MAX), ("kind", _KIND_MAX), ("sig", _SIG_MAX)):
        if isinstance(data.get(key), str) and len(data[key]) > most:
            raise AdmissionError(f"record field {key} is longer than {most} characters")
    if values:
        check_value(data, max_depth)
    return data
