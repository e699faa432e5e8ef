"""The chip registry: UID ranges to denominations and statuses, and what a spot's chips are worth."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.game.chips import Chip, ChipRange, ChipRegistry, ChipStatus, RegistryError, SpotChips, parse_uid

BASE = 0xE004015000000000


def registry() -> ChipRegistry:
    return ChipRegistry(
        [
            ChipRange(BASE + 0x1000, BASE + 0x1FFF, 2_500, ChipStatus.IN_PLAY),
            ChipRange(BASE, BASE + 0x0FFF, 500, ChipStatus.IN_PLAY),
            ChipRange(BASE + 0x2000, BASE + 0x2000, 10_000, ChipStatus.STOLEN),
            ChipRange(BASE + 0x3000, BASE + 0x30FF, 10_000, ChipStatus.RETIRED),
        ]
    )


def test_a_uid_resolves_to_its_range_whatever_the_order_given() -> None:
    reg = registry()
    assert reg.resolve(BASE) == Chip("E004015000000000", 500, ChipStatus.IN_PLAY)
    assert reg.resolve("e004015000000fff").cents == 500
    assert reg.resolve(BASE + 0x1000).cents == 2_500
    assert reg.resolve(BASE + 0x2000).status is ChipStatus.STOLEN
    assert reg.resolve(BASE + 0x30FF).status is ChipStatus.RETIRED


def test_a_uid_between_or_outside_the_ranges_is_unknown_and_worth_nothing() -> None:
    reg = registry()
    for uid in (BASE - 1, BASE + 0x2001, BASE + 0x3100, (1 << 64) - 1, 0):
        chip = reg.resolve(uid)
        assert chip.status is ChipStatus.UNKNOWN and chip.cents == 0 and not chip.counts


def test_only_chips_in_play_count_on_a_spot() -> None:
    chips = registry().resolve_all([BASE, BASE + 0x1000, BASE + 0x2000, BASE + 0x3000, BASE + 0x9999])
    assert chips.cents == 3_000
    assert [c.status for c in chips.foreign] == [ChipStatus.STOLEN, ChipStatus.RETIRED, ChipStatus.UNKNOWN]
    assert SpotChips().cents == 0


def test_overlapping_ranges_are_refused_with_both_named() -> None:
    with pytest.raises(RegistryError, match="E004015000000FFF and E004015000000FFF"):
        ChipRegistry(
            [
                ChipRange(BASE, BASE + 0xFFF, 500, ChipStatus.IN_PLAY),
                ChipRange(BASE + 0xFFF, BASE + 0xFFF, 500, ChipStatus.IN_PLAY),
            ]
        )


@pytest.mark.parametrize("text", ["", "E00401500000000", "E0040150000000000", "G004015000000000", "E00401500000000 "])
def test_a_bad_uid_text_is_refused(text: str) -> None:
    with pytest.raises(RegistryError, match="not 16 hex digits"):
        parse_uid(text)


def test_bad_ranges_are_refused() -> None:
    with pytest.raises(RegistryError, match="first <= last"):
        ChipRange(BASE + 1, BASE, 500, ChipStatus.IN_PLAY)
    with pytest.raises(RegistryError, match="positive number of cents"):
        ChipRange(BASE, BASE, 0, ChipStatus.IN_PLAY)
    with pytest.raises(RegistryError, match="unknown"):
        ChipRange(BASE, BASE, 500, ChipStatus.UNKNOWN)


@given(st.lists(st.integers(0, 2**16), min_size=1, max_size=30, unique=True), st.integers(0, 2**16 + 10))
def test_resolve_agrees_with_a_linear_scan(starts: list[int], probe: int) -> None:
    starts.sort()
    ranges = [ChipRange(s * 4, s * 4 + 1, 500 * (i + 1), ChipStatus.IN_PLAY) for i, s in enumerate(starts)]
    reg = ChipRegistry(reversed(ranges))
    expected = next((r.cents for r in ranges if r.first <= probe <= r.last), 0)
    assert reg.resolve(probe).cents == expected
