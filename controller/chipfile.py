"""The chip registry file: ``/etc/shoe-controller/chips.toml`` (``[spots] chips``) read into a registry.

The bet-spot reader reports each spot's chips as tag UIDs; the registry (:class:`controller.game.chips.
ChipRegistry`) says what each is worth and whether it is in play. This module reads the casino's file of
chip ranges, written as the table limits are (money as decimal strings)::

    [[range]]
    first = "E004015000000000"   # 16 hex digits
    last = "E00401500000FFFF"    # optional: one chip when absent
    value = "25.00"              # dollars
    status = "in_play"           # in_play (default) | retired | stolen

The file is read through :mod:`controller.userfile` (a regular file, at most :data:`MAX_CHIPS_BYTES`) and
checked with pydantic like the configuration; every mistake is one :class:`ChipFileError` line naming the
file, the range by its position in the file (``range 3``, counting from 1) and the problem::

    chips.toml: range 3: last: UID 'E0040150XYZ' is not 16 hex digits
    chips.toml: range 4: overlaps range 2 (E004015000000000-E00401500000FFFF)

``shoe-controller check-config`` reads it too when ``[spots]`` names it; the format is documented in
``docs/configuration.md`` and ``config/chips.example.toml`` is a sample.
"""

from __future__ import annotations

import itertools
import tomllib
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, ValidationError

from controller.config import format_cents, parse_cents
from controller.game.chips import ChipRange, ChipRegistry, ChipStatus, RegistryError, format_uid, parse_uid
from controller.userfile import UserFileError, read_bytes

__all__ = ["MAX_CHIPS_BYTES", "MAX_RANGES", "ChipFileError", "load_chips", "parse_chips"]

#: A registry lists ranges, not chips: a few hundred lines. Anything larger is not one.
MAX_CHIPS_BYTES = 4 * 1024 * 1024
#: The most ranges one file may hold (a casino with a range per chip of 100,000 chips is the far end).
MAX_RANGES = 200_000

StatusName = Literal["in_play", "retired", "stolen"]
_STATUSES = ("in_play", "retired", "stolen")


class ChipFileError(ValueError):
    """A chip registry file that cannot be used: one line, ``FILE: [range N: ][key: ]reason``."""

    def __init__(self, source: str, reason: str, index: int | None = None) -> None:
        where = f"range {index}: " if index is not None else ""
        super().__init__(f"{source}: {where}{reason}")
        self.source = source
        self.reason = reason
        self.index = index


def _uid(value: object) -> int:
    if not isinstance(value, str):
        raise ValueError(f'must be a UID as a string of 16 hex digits such as "E004015000000000", got {value!r:.40}')
    try:
        return parse_uid(value)
    except RegistryError as error:
        raise ValueError(str(error)) from None


def _status(value: object) -> str:
    if value not in _STATUSES:
        raise ValueError(f'must be "in_play", "retired" or "stolen", got {value!r:.40}')
    assert isinstance(value, str)
    return value


class _Range(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    first: Annotated[int, PlainValidator(_uid)]
    last: Annotated[int | None, PlainValidator(_uid)] = None
    value: Annotated[int, PlainValidator(parse_cents)]
    status: Annotated[str, PlainValidator(_status)] = "in_play"


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    ranges: list[dict[str, object]] = Field(alias="range")


def parse_chips(text: str, source: str = "chips.toml") -> ChipRegistry:
    """The registry in ``text``; :class:`ChipFileError` (one line) for any mistake."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ChipFileError(source, str(error)) from None
    except RecursionError:
        raise ChipFileError(source, "arrays or inline tables nested too deeply") from None
    try:
        whole = _File.model_validate(document)
    except ValidationError as error:
        errors = error.errors()
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        if first["type"] == "extra_forbidden":
            raise ChipFileError(source, f"{first['loc'][0]}: unknown key (the file holds [[range]] tables)") from None
        if first["type"] == "missing":
            raise ChipFileError(source, "no [[range]]: every chip would be unknown") from None
        raise ChipFileError(source, "range must be an array of tables ([[range]])") from None
    if not whole.ranges:
        raise ChipFileError(source, "no [[range]]: every chip would be unknown")
    if len(whole.ranges) > MAX_RANGES:
        raise ChipFileError(source, f"{len(whole.ranges)} ranges, more than {MAX_RANGES}")
    ranges: list[tuple[int, ChipRange]] = []
    for index, raw in enumerate(whole.ranges, start=1):
        ranges.append((index, _one_range(source, index, raw)))
    ordered = sorted(ranges, key=lambda item: item[1].first)
    for (index_a, a), (index_b, b) in itertools.pairwise(ordered):
        if b.first <= a.last:
            later, earlier, other = (index_b, index_a, a) if index_b > index_a else (index_a, index_b, b)
            raise ChipFileError(
                source, f"overlaps range {earlier} ({format_uid(other.first)}-{format_uid(other.last)})", later
            )
    try:
        return ChipRegistry(r for _, r in ranges)
    except RegistryError as error:  # pragma: no cover - every case is caught above, with its index
        raise ChipFileError(source, str(error)) from None


def _one_range(source: str, index: int, raw: object) -> ChipRange:
    if not isinstance(raw, dict):  # pragma: no cover - _File only admits tables
        raise ChipFileError(source, "must be a table", index)
    try:
        entry = _Range.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        if first["type"] == "extra_forbidden":
            reason = "unknown key (a range has first, last, value and status)"
        elif first["type"] == "missing":
            reason = "missing"
        else:
            reason = str(first["msg"]).removeprefix("Value error, ")
        raise ChipFileError(source, f"{key}: {reason}", index) from None
    last = entry.first if entry.last is None else entry.last
    if last < entry.first:
        below = f"last {format_uid(last)} is below first {format_uid(entry.first)}"
        raise ChipFileError(source, f"{below} (write the lower UID first)", index)
    try:
        return ChipRange(entry.first, last, entry.value, ChipStatus(entry.status))
    except RegistryError as error:  # pragma: no cover - the checks above cover ChipRange's own
        raise ChipFileError(source, f"value {format_cents(entry.value)}: {error}", index) from None


def load_chips(path: str | Path) -> ChipRegistry:
    """Read the registry file at ``path`` (a regular file, at most :data:`MAX_CHIPS_BYTES`)."""
    source = str(path)
    try:
        raw = read_bytes(path, limit=MAX_CHIPS_BYTES)
    except UserFileError as error:
        raise ChipFileError(source, error.reason) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ChipFileError(source, f"line {line}: not UTF-8 text") from None
    return parse_chips(text, source)
