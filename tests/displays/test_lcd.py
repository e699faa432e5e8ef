"""The dealer's LCD: what each table state puts on a 16x2 and a 20x4, and how the sink drives the display.

The picture is tested through the pure :func:`render`. The sink is tested against a fake LCD that keeps
the screen its calls would draw and records every call, and once more through RPLCD's real ``CharLCD``
with a fake I2C bus whose far end decodes the expander's writes the way an HD44780 does.
"""

from __future__ import annotations

import errno
import logging
from dataclasses import replace
from enum import Enum
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.config import LcdSection
from controller.game.cards import Card
from controller.game.coup import Coup, CoupResult
from controller.game.rules import COMMISSION, EZ, SUPER6, CommissionCollection, Ruleset
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import (
    Alarm,
    CardDrawn,
    CutCardOut,
    DeclarePressed,
    Due,
    LinkChanged,
    ShoeRebooted,
    TableInput,
    TableRules,
    TableState,
    TableView,
    UnreadableCard,
    VoidPressed,
)
from controller.table.lcd import ALARM_PRECEDENCE, LcdSink, alarm_text, render, top_alarm
from controller.table.sinks import Sink
from tests.game.strategies import inputs

LOGGER = "controller.table.lcd"
GEOMETRIES = [(16, 2), (20, 4)]
ROM_SAFE = {chr(c) for c in range(0x20, 0x7E)} - {"\\"}

# ---------------------------------------------------------------------------------------------------------
# Building views


def hand(tokens: str) -> tuple[Card, ...]:
    return tuple(Card.parse(t) for t in tokens.split())


def coup(player: str, banker: str) -> CoupResult:
    """A complete coup, dealt in shoe order through the coup machine (so it is one the tableau allows)."""
    p, b = hand(player), hand(banker)
    order = [p[0], b[0], p[1], b[1], *p[2:], *b[2:]]
    return Coup.from_cards(order).result()


def view(
    *,
    due: Due = Due.DEAL,
    player: str = "",
    banker: str = "",
    result: CoupResult | None = None,
    alarms: tuple[Alarm, ...] = (),
    shoe: int = 1,
    coup_number: int = 1,
    remaining: int = 416,
    cut: bool = False,
    last: bool = False,
    burn_left: int = 0,
) -> TableView:
    if result is not None:
        due = Due.DECLARE
        p, b = result.player, result.banker
    else:
        p, b = hand(player), hand(banker)
    return TableView(
        shoe_number=shoe,
        coup_number=coup_number,
        due=due,
        player=p,
        banker=b,
        result=result,
        alarms=alarms,
        cards_remaining=remaining,
        cut_card_out=cut,
        last_coup=last,
        burn_left=burn_left,
        dummy_hand=(),
    )


def line(v: TableView, n: int, cols: int = 16, rows: int = 2, rules: Ruleset = COMMISSION) -> str:
    """Line ``n`` (1-based) of the picture, without its padding."""
    return render(v, rules, cols, rows)[n - 1].rstrip()


BANKER_7_5 = coup("2H 3S KD", "4D 3C")  # Player 5 draws a ten; Banker stands on 7
BANKER_3_CARD_7 = coup("2H 3S KD", "AD 2C 4H")  # Banker 3 draws on a third-card 0: three-card 7
BANKER_6_4 = coup("2H 2S TD", "3D 3C")  # Banker 6 stands on a third-card 0
TIE_6_6 = coup("3H 3S", "4D 2C")
PLAYER_9_2 = coup("4H 5S", "AD AC")  # Player natural 9
PLAYER_3_CARD_8 = coup("2H 3S 3D", "TD 5C")  # Player draws to 8; Banker 5 stands on a third-card 3

# ---------------------------------------------------------------------------------------------------------
# Line 1: the totals


def test_totals_are_blank_before_the_first_card_of_each_hand() -> None:
    assert line(view(), 1) == "P     B"
    assert line(view(player="7H"), 1) == "P 7   B"
    assert line(view(player="7H", banker="KS"), 1) == "P 7   B 0"
    assert line(view(player="7H 8C", banker="KS 5D"), 1) == "P 5   B 5"


@pytest.mark.parametrize(("cols", "rows"), GEOMETRIES)
def test_totals_follow_the_cards_on_both_geometries(cols: int, rows: int) -> None:
    assert render(view(player="2H 3S", banker="4D 3C"), COMMISSION, cols, rows)[0].startswith("P 5   B 7 ")


# ---------------------------------------------------------------------------------------------------------
# Line 2: what is due

DUE_TEXT = {
    Due.BURN: "BURN 7 LEFT",
    Due.DEAL: "DEAL",
    Due.PLAYER_THIRD: "PLAYER DRAWS",
    Due.BANKER_THIRD: "BANKER DRAWS",
    Due.DECLARE: "DECLARE",
    Due.VOID: "HOLD VOID",
    Due.NEW_SHOE: "NEW SHOE",
}


def test_every_due_state_has_a_text() -> None:
    assert set(DUE_TEXT) == set(Due)


@pytest.mark.parametrize(("cols", "rows"), GEOMETRIES)
@pytest.mark.parametrize("due", list(Due))
def test_line_2_says_what_is_due(due: Due, cols: int, rows: int) -> None:
    assert line(view(due=due, burn_left=7), 2, cols, rows) == DUE_TEXT[due]


def test_burn_counts_down_and_asks_for_the_exposed_card_first() -> None:
    assert line(view(due=Due.BURN, burn_left=0), 2) == "EXPOSE BURN CARD"
    assert line(view(due=Due.BURN, burn_left=10), 2) == "BURN 10 LEFT"
    assert line(view(due=Due.BURN, burn_left=1), 2) == "BURN 1 LEFT"


def test_the_last_coup_is_announced_when_the_deal_is_due() -> None:
    assert line(view(due=Due.DEAL, cut=True, last=True), 2) == "DEAL LAST COUP"
    assert line(view(due=Due.DEAL, cut=True, last=False), 2) == "DEAL"
    assert line(view(due=Due.PLAYER_THIRD, cut=True, last=True), 2) == "PLAYER DRAWS"


def test_the_due_follows_a_real_coup() -> None:
    """Driven through the table state: deal, Player draws, Banker draws, then the result."""
    table = TableState(TableRules(burn_rule=BurnRule(mode=BurnMode.NONE)))
    seen = []
    for token in "2H AD 3S 2C KD 4H".split():
        seen.append(line(table.view(), 2))
        table.apply(CardDrawn(Card.parse(token)))
    seen.append(line(table.view(), 2))
    assert seen == ["DEAL", "DEAL", "DEAL", "DEAL", "PLAYER DRAWS", "BANKER DRAWS", "BANKER 7-5 -5%"]


# ---------------------------------------------------------------------------------------------------------
# Line 2: the result and its payout hint, per ruleset

COMMISSION_AT_SHOE_END = replace(COMMISSION, commission_collection=CommissionCollection.AT_SHOE_END)


@pytest.mark.parametrize(
    ("rules", "result", "on_20", "on_16"),
    [
        (COMMISSION, BANKER_7_5, "BANKER 7-5 0.95:1", "BANKER 7-5 -5%"),
        (COMMISSION, BANKER_6_4, "BANKER 6-4 0.95:1", "BANKER 6-4 -5%"),
        (COMMISSION_AT_SHOE_END, BANKER_7_5, "BANKER 7-5 1:1 +5%", "BANKER 7-5 +5%"),
        (COMMISSION, PLAYER_9_2, "PLAYER 9-2 PAYS 1:1", "PLAYER 9-2 1:1"),
        (COMMISSION, TIE_6_6, "TIE 6-6 PAYS 8:1", "TIE 6-6 PAYS 8:1"),
        (EZ, BANKER_7_5, "BANKER 7-5 PAYS 1:1", "BANKER 7-5 1:1"),
        (EZ, BANKER_3_CARD_7, "BANKER 7-5 EZ PUSH", "BANKER 7-5 PUSH"),
        (EZ, PLAYER_9_2, "PLAYER 9-2 PAYS 1:1", "PLAYER 9-2 1:1"),
        (EZ, TIE_6_6, "TIE 6-6 PAYS 8:1", "TIE 6-6 PAYS 8:1"),
        (SUPER6, BANKER_6_4, "BANKER 6-4 PAYS 1:2", "BANKER 6-4 1:2"),
        (SUPER6, BANKER_7_5, "BANKER 7-5 PAYS 1:1", "BANKER 7-5 1:1"),
        (SUPER6, BANKER_3_CARD_7, "BANKER 7-5 PAYS 1:1", "BANKER 7-5 1:1"),
        (SUPER6, TIE_6_6, "TIE 6-6 PAYS 8:1", "TIE 6-6 PAYS 8:1"),
        (SUPER6.with_tie_pays(9), TIE_6_6, "TIE 6-6 PAYS 9:1", "TIE 6-6 PAYS 9:1"),
    ],
)
def test_result_and_payout_hint(rules: Ruleset, result: CoupResult, on_20: str, on_16: str) -> None:
    v = view(result=result)
    assert line(v, 2, 20, 4, rules) == on_20
    assert line(v, 2, 16, 2, rules) == on_16


def test_commission_hint_is_exact_for_other_rates() -> None:
    rules = replace(COMMISSION, commission_rate=Fraction(25, 1000))
    assert line(view(result=BANKER_7_5), 2, 20, 4, rules) == "BANKER 7-5 0.975:1"
    assert line(view(result=BANKER_7_5), 2, 16, 2, rules) == "BANKER 7-5 -2.5%"
    # Super 6 with a commission: the 6 pays half, less the commission.
    rules = replace(SUPER6, commission_rate=Fraction(5, 100))
    assert line(view(result=BANKER_6_4), 2, 20, 4, rules) == "BANKER 6-4 0.475:1"


def test_dragon_7_on_line_3_of_a_20x4_and_on_line_1_of_a_16x2() -> None:
    v = view(result=BANKER_3_CARD_7)
    assert render(v, EZ, 20, 4)[2].rstrip() == "DRAGON 7 PAYS 40:1"
    assert render(v, EZ, 16, 2) == ["P 5 B 7 DRAGON 7", "BANKER 7-5 PUSH "]


def test_panda_8_on_line_3_of_a_20x4_and_on_line_1_of_a_16x2() -> None:
    v = view(result=PLAYER_3_CARD_8)
    assert render(v, EZ, 20, 4)[2].rstrip() == "PANDA 8 PAYS 25:1"
    assert render(v, EZ, 16, 2)[0] == "P 8 B 5  PANDA 8"


def test_dragon_and_panda_are_not_shown_when_the_table_does_not_offer_them() -> None:
    rules = replace(EZ, dragon_7_pays=Fraction(0), panda_8_pays=Fraction(0))
    assert render(view(result=BANKER_3_CARD_7), rules, 20, 4)[2].rstrip() == "2H 3S KD | AD 2C 4H"
    assert line(view(result=PLAYER_3_CARD_8), 1, rules=rules) == "P 8   B 5"


def test_side_bets_the_table_does_not_offer_get_no_badge() -> None:
    from controller.game.rules import SIDE_BETS, Bet

    rules = EZ.with_side_bets(SIDE_BETS - {Bet.DRAGON_7, Bet.PANDA_8})
    assert render(view(result=BANKER_3_CARD_7), rules, 20, 4)[2].rstrip() == "2H 3S KD | AD 2C 4H"
    assert line(view(result=PLAYER_3_CARD_8), 1, rules=rules) == "P 8   B 5"


def test_no_badge_without_a_hit() -> None:
    """A two-card Banker 7 is no Dragon 7; a two-card Player 8 would be no Panda 8."""
    assert render(view(result=BANKER_7_5), EZ, 20, 4)[2].rstrip() == "P 2H 3S KD  B 4D 3C"
    assert line(view(result=BANKER_7_5), 1, rules=EZ) == "P 5   B 7"


# ---------------------------------------------------------------------------------------------------------
# Line 2: alarms and their precedence


def test_precedence_lists_every_alarm_once() -> None:
    assert sorted(ALARM_PRECEDENCE, key=lambda a: a.name) == sorted(Alarm, key=lambda a: a.name)
    assert len(set(ALARM_PRECEDENCE)) == len(ALARM_PRECEDENCE)


def test_halting_alarms_come_first_then_the_link_then_the_rest() -> None:
    halting = {a for a in Alarm if a.halts_coup}
    assert set(ALARM_PRECEDENCE[: len(halting)]) == halting
    assert ALARM_PRECEDENCE[len(halting)] is Alarm.LINK_DOWN


@pytest.mark.parametrize(
    ("higher", "lower"),
    [(a, b) for i, a in enumerate(ALARM_PRECEDENCE) for b in ALARM_PRECEDENCE[i + 1 :]],
    ids=lambda a: a.name,
)
def test_the_more_severe_alarm_is_shown_whatever_the_order_raised(higher: Alarm, lower: Alarm) -> None:
    for alarms in ((higher, lower), (lower, higher)):
        assert top_alarm(alarms) is higher
        shown = line(view(alarms=alarms), 2, 20, 4)
        if len(higher.value) <= 17:
            assert shown == f"{higher.value:<18}+1"
        else:  # no room for the count: the alarm's words win
            assert shown == higher.value


@pytest.mark.parametrize("alarm", list(Alarm), ids=lambda a: a.name)
def test_an_alarm_takes_precedence_over_the_due_and_the_result(alarm: Alarm) -> None:
    assert line(view(due=Due.PLAYER_THIRD, player="2H 3S", banker="4D 3C", alarms=(alarm,)), 2, 20, 4) == alarm.value
    assert line(view(result=BANKER_7_5, alarms=(alarm,)), 2, 20, 4) == alarm.value
    assert line(view(result=BANKER_7_5, alarms=(alarm,)), 2) == alarm_text(alarm, 16)


@pytest.mark.parametrize("alarm", list(Alarm), ids=lambda a: a.name)
def test_every_alarm_fits_a_16_column_line_in_words(alarm: Alarm) -> None:
    text = alarm_text(alarm, 16)
    assert len(text) <= 16
    assert text == alarm.value or len(alarm.value) > 16
    assert alarm_text(alarm, 20) == alarm.value or len(alarm.value) > 20


def test_the_short_alarm_texts() -> None:
    long = (Alarm.EARLY_DECLARE, Alarm.FOREIGN_BURN_CARD, Alarm.NOTHING_TO_DECLARE, Alarm.UNREADABLE_EXPOSED)
    assert [alarm_text(a, 16) for a in long] == [
        "EARLY DECLARE",
        "FOREIGN BURNED",
        "NOTHING TO DECL",
        "BURN UNREADABLE",
    ]


def test_an_alarm_without_a_short_form_is_cut_after_a_whole_word() -> None:
    """An alarm added later (NOISY LINE, JOURNAL FULL, a protocol alarm ...) needs no entry here: its text
    is shown as it is, or cut after the last whole word that fits."""

    class Later(Enum):
        SPEAKS_V2 = "SHOE SPEAKS PROTOCOL V2"
        LONGWORD = "ABCDEFGHIJKLMNOPQRSTU"

    # Later stands for an Alarm member this code does not know yet: not an Alarm, on purpose.
    assert alarm_text(Later.SPEAKS_V2, 16) == "SHOE SPEAKS"  # type: ignore[arg-type]
    assert alarm_text(Later.SPEAKS_V2, 20) == "SHOE SPEAKS PROTOCOL"  # type: ignore[arg-type]
    assert alarm_text(Later.LONGWORD, 16) == "ABCDEFGHIJKLMNOP"  # type: ignore[arg-type]
    assert top_alarm([Alarm.MISDRAW, Later.SPEAKS_V2]) is Alarm.MISDRAW  # type: ignore[list-item]


def test_more_alarms_are_counted_when_there_is_room() -> None:
    alarms = (Alarm.MISDRAW, Alarm.LINK_DOWN, Alarm.NOTHING_TO_DECLARE)
    assert render(view(alarms=alarms), COMMISSION, 16, 2)[1] == "LINK DOWN     +2"
    # No room for the count beside a 15-character text on 16 columns: the alarm's words win.
    assert line(view(alarms=(Alarm.UNREADABLE, Alarm.MISDRAW)), 2) == "UNREADABLE CARD"


def test_an_alarm_raised_by_the_table_reaches_the_display() -> None:
    table = TableState(TableRules(burn_rule=BurnRule(mode=BurnMode.NONE)))
    table.apply(CardDrawn(Card.parse("2H")))
    table.apply(UnreadableCard())
    assert line(table.view(), 2) == "UNREADABLE CARD"
    table.apply(LinkChanged(up=False))
    assert line(table.view(), 2) == "UNREADABLE CARD"
    table.apply(VoidPressed())
    assert line(table.view(), 2) == "LINK DOWN"


# ---------------------------------------------------------------------------------------------------------
# Lines 3 and 4 of a 20x4, and the shoe marks of a 16x2


def test_20x4_shows_the_cards_and_the_shoe() -> None:
    v = view(due=Due.PLAYER_THIRD, player="2H AD", banker="5D 2S", shoe=1, coup_number=12, remaining=380)
    assert render(v, COMMISSION, 20, 4) == [
        "P 3   B 7           ",
        "PLAYER DRAWS        ",
        "P 2H AD  B 5D 2S    ",
        "SHOE 1 COUP 12 R380 ",
    ]


def test_the_cards_line_splits_the_hands_by_a_bar_when_both_hold_three_cards() -> None:
    v = view(result=coup("2H 3S 4D", "AD 2C 9H"))  # Player 5 draws a 4; Banker 3 draws on it
    assert render(v, COMMISSION, 20, 4)[2] == "2H 3S 4D | AD 2C 9H "
    v = view(result=coup("2H 3S 8D", "AD 2C"))  # Banker 3 stands on a Player third card 8
    assert render(v, COMMISSION, 20, 4)[2] == "P 2H 3S 8D  B AD 2C "


def test_the_cards_line_is_blank_between_coups() -> None:
    assert render(view(), COMMISSION, 20, 4)[2] == " " * 20


def test_cut_card_and_last_coup_marks() -> None:
    base: dict[str, Any] = {"player": "2H AD", "banker": "5D 2S", "coup_number": 12, "remaining": 380}
    assert line(view(**base, cut=True), 4, 20, 4) == "SHOE 1 C12 R380 CUT"
    assert line(view(**base, cut=True, last=True), 4, 20, 4) == "SHOE 1 C12 R380 LAST"
    assert render(view(**base, cut=True), COMMISSION, 16, 2)[0] == "P 3   B 7    CUT"
    assert render(view(**base, cut=True, last=True), COMMISSION, 16, 2)[0] == "P 3   B 7   LAST"


def test_long_numbers_are_cut_to_the_line() -> None:
    lines = render(view(shoe=123456, coup_number=98765, remaining=416, cut=True), COMMISSION, 20, 4)
    assert lines[3] == "S123456 C98765 R416 "
    lines = render(view(shoe=12345678901, coup_number=98765432, remaining=416), COMMISSION, 20, 4)
    assert lines[3] == "S12345678901 C987654"


@pytest.mark.parametrize(("cols", "rows"), [(16, 4), (20, 2), (8, 1), (40, 4)])
def test_other_geometries_still_give_exact_lines(cols: int, rows: int) -> None:
    lines = render(view(result=BANKER_3_CARD_7, alarms=(Alarm.FOREIGN_BURN_CARD,)), EZ, cols, rows)
    assert [len(x) for x in lines] == [cols] * rows


def test_an_lcd_of_no_size_is_refused() -> None:
    with pytest.raises(ValueError, match="0x2"):
        render(view(), COMMISSION, 0, 2)


# ---------------------------------------------------------------------------------------------------------
# Properties over whole shoes

#: Every input a table takes (tests/game/strategies.py), and the shoe rebooting under it.
table_inputs = st.one_of(inputs, st.just(ShoeRebooted()))
table_rules = st.sampled_from(
    [
        TableRules(burn_rule=BurnRule(mode=BurnMode.NONE), auto_declare=True),
        TableRules(burn_rule=BurnRule(mode=BurnMode.FIXED, fixed_count=2)),
        TableRules(decks=1),
    ]
)


def play(rules: TableRules, inputs: list[TableInput]) -> list[TableView]:
    table = TableState(rules)
    views = [table.view()]
    for event in inputs:
        table.apply(event)
        views.append(table.view())
    return views


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(table_rules, st.lists(table_inputs, max_size=60), st.sampled_from([COMMISSION, EZ, SUPER6]))
def test_every_frame_is_exact_width_and_rom_safe(rules: TableRules, inputs: list[TableInput], ruleset: Ruleset) -> None:
    """Whatever happened at the table, each line has exactly ``cols`` characters the HD44780 ROM has."""
    for v in play(rules, inputs):
        for cols, rows in GEOMETRIES:
            lines = render(v, ruleset, cols, rows)
            assert len(lines) == rows
            for text in lines:
                assert len(text) == cols
                assert set(text) <= ROM_SAFE


# ---------------------------------------------------------------------------------------------------------
# The sink, against a fake LCD


class FakeLcd:
    """The part of RPLCD's ``CharLCD`` the sink uses: keeps the screen its calls draw, records each call."""

    def __init__(self, cols: int, rows: int, *, fail_after_writes: int | None = None) -> None:
        self.cols, self.rows = cols, rows
        self.screen = [[" "] * cols for _ in range(rows)]
        self.calls: list[tuple[str, object]] = []
        self.fail_after_writes = fail_after_writes
        self.writes = 0
        self._cursor = (0, 0)
        self._backlight = True

    @property
    def cursor_pos(self) -> tuple[int, int]:
        return self._cursor

    @cursor_pos.setter
    def cursor_pos(self, value: tuple[int, int]) -> None:
        row, col = value
        assert 0 <= row < self.rows and 0 <= col < self.cols, value
        self.calls.append(("cursor", value))
        self._cursor = value

    @property
    def backlight_enabled(self) -> bool:
        return self._backlight

    @backlight_enabled.setter
    def backlight_enabled(self, value: bool) -> None:
        self.calls.append(("backlight", value))
        self._backlight = value

    def write_string(self, value: str) -> None:
        if self.fail_after_writes is not None and self.writes >= self.fail_after_writes:
            raise OSError(errno.EREMOTEIO, "Remote I/O error")
        self.writes += 1
        self.calls.append(("write", value))
        row, col = self._cursor
        for ch in value:
            assert col < self.cols, f"write past the end of row {row}: {value!r}"
            self.screen[row][col] = ch
            col += 1
        self._cursor = (row, col)

    def clear(self) -> None:
        self.calls.append(("clear", None))
        self.screen = [[" "] * self.cols for _ in range(self.rows)]
        self._cursor = (0, 0)

    def close(self, clear: bool = False) -> None:
        self.calls.append(("close", clear))

    def text(self) -> list[str]:
        return ["".join(r) for r in self.screen]


def lcd_settings(cols: int = 16, rows: int = 2, **kw: Any) -> LcdSection:
    return LcdSection(enabled=True, cols=cols, rows=rows, **kw)


def fake_sink(cols: int = 16, rows: int = 2, rules: Ruleset = COMMISSION, **kw: Any) -> tuple[LcdSink, FakeLcd]:
    fake = FakeLcd(cols, rows, **kw)
    sink = LcdSink(lcd_settings(cols, rows), rules, lcd_factory=lambda s: fake)
    return sink, fake


def test_the_sink_is_a_sink() -> None:
    sink: Sink = fake_sink()[0]
    assert sink.name == "lcd"


def test_opening_clears_the_display_to_a_known_state() -> None:
    sink, fake = fake_sink()
    assert fake.calls == [("clear", None)]
    assert sink.active
    assert sink.fault is None


@pytest.mark.parametrize(("cols", "rows"), GEOMETRIES)
def test_the_first_frame_writes_only_what_differs_from_a_blank_screen(cols: int, rows: int) -> None:
    sink, fake = fake_sink(cols, rows)
    fake.calls.clear()
    v = view(due=Due.DEAL)
    sink.update(v, ())
    assert fake.text() == render(v, COMMISSION, cols, rows)
    expected: list[tuple[str, object]] = [
        ("cursor", (0, 0)),
        ("write", "P"),
        ("cursor", (0, 6)),
        ("write", "B"),
    ]
    expected += [("cursor", (1, 0)), ("write", "DEAL")]
    if rows == 4:
        expected += [("cursor", (3, 0)), ("write", "SHOE 1 COUP 1 R416")]
    assert fake.calls == expected


def test_an_unchanged_view_costs_nothing() -> None:
    sink, fake = fake_sink(20, 4)
    v = view(due=Due.PLAYER_THIRD, player="2H AD", banker="5D 2S")
    sink.update(v, ())
    fake.calls.clear()
    sink.update(v, ())
    sink.update(replace(v), ())
    assert fake.calls == []


def test_only_the_changed_characters_are_rewritten() -> None:
    sink, fake = fake_sink(20, 4)
    sink.update(view(due=Due.DEAL, player="2H AD", banker="5D", remaining=413), ())
    fake.calls.clear()
    before = sink.chars_written
    sink.update(view(due=Due.DEAL, player="2H AD", banker="5D 2S", remaining=412), ())
    # line 1: the Banker's total 5 -> 7; line 3: " 2S" appended; line 4: R413 -> R412. Line 2 untouched.
    assert fake.calls == [
        ("cursor", (0, 8)),
        ("write", "7"),
        ("cursor", (2, 14)),
        ("write", "2S"),
        ("cursor", (3, 17)),
        ("write", "2"),
    ]
    assert sink.chars_written - before == 4
    assert fake.text()[2] == "P 2H AD  B 5D 2S    "


def test_a_line_with_several_changes_is_written_in_runs() -> None:
    sink, fake = fake_sink(16, 2)
    sink.update(view(due=Due.PLAYER_THIRD), ())
    fake.calls.clear()
    sink.update(view(due=Due.BANKER_THIRD), ())  # PLAYER DRAWS -> BANKER DRAWS
    assert fake.calls == [("cursor", (1, 0)), ("write", "BANK")]
    assert fake.text()[1] == "BANKER DRAWS    "


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(table_rules, st.lists(table_inputs, max_size=60), st.sampled_from(GEOMETRIES))
def test_the_screen_always_shows_the_last_frame(
    rules: TableRules, inputs: list[TableInput], geometry: tuple[int, int]
) -> None:
    """However the frames follow one another, writing only the differences leaves the right picture."""
    cols, rows = geometry
    sink, fake = fake_sink(cols, rows, rules=EZ)
    for v in play(rules, inputs):
        sink.update(v, ())
        assert fake.text() == render(v, EZ, cols, rows)
        assert sink.shown == fake.text()


def test_close_clears_turns_the_backlight_off_and_is_idempotent() -> None:
    sink, fake = fake_sink()
    sink.update(view(due=Due.DEAL), ())
    fake.calls.clear()
    sink.close()
    assert fake.calls == [("clear", None), ("backlight", False), ("close", False)]
    assert fake.text() == [" " * 16] * 2
    assert not sink.active
    fake.calls.clear()
    sink.close()
    sink.update(view(due=Due.PLAYER_THIRD), ())
    assert fake.calls == []
    assert sink.fault is None


# ---------------------------------------------------------------------------------------------------------
# Hardware trouble: logged, recorded, inert, never raised


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (FileNotFoundError(errno.ENOENT, "No such file or directory", "/dev/i2c-1"), "no /dev/i2c-1"),
        (OSError(errno.EREMOTEIO, "Remote I/O error"), "no device answers at 0x27"),
        (ModuleNotFoundError("No module named 'RPLCD'"), "RPLCD is not installed"),
        (NotImplementedError('I2C expander "X" is not supported.'), "NotImplementedError"),
    ],
)
def test_absent_hardware_at_start_up_is_a_logged_fault(
    error: Exception, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    calls = []

    def factory(settings: LcdSection) -> FakeLcd:
        calls.append(settings)
        raise error

    with caplog.at_level(logging.INFO, logger=LOGGER):
        sink = LcdSink(lcd_settings(), COMMISSION, lcd_factory=factory)
        sink.update(view(due=Due.DEAL), ())
        sink.update(view(due=Due.PLAYER_THIRD), ())
        sink.close()
        sink.close()
    assert len(calls) == 1  # no retry behind the table's back
    assert not sink.active
    assert sink.fault is not None
    assert (sink.fault.stage, sink.fault.bus, sink.fault.address) == ("open", 1, 0x27)
    assert reason in sink.fault.reason
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(errors) == 1
    assert errors[0].levelno == logging.ERROR
    assert reason in errors[0].getMessage()
    assert "0x27 on I2C bus 1" in errors[0].getMessage()


def test_a_write_error_later_is_logged_once_and_the_sink_goes_inert(caplog: pytest.LogCaptureFixture) -> None:
    sink, fake = fake_sink(20, 4, fail_after_writes=3)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        sink.update(view(due=Due.DEAL), ())  # four writes: the fourth fails
        assert sink.fault is not None
        assert sink.fault.stage == "write"
        assert "0x27" in sink.fault.reason
        calls_after_fault = list(fake.calls)
        for due in (Due.PLAYER_THIRD, Due.BANKER_THIRD, Due.DECLARE):
            sink.update(view(due=due), ())
        sink.close()
    assert calls_after_fault[-1] == ("close", False)  # the driver was released
    assert fake.calls == calls_after_fault  # and never touched again
    assert [r.levelno for r in caplog.records if r.levelno >= logging.WARNING] == [logging.ERROR]


class BrokenOnClear(FakeLcd):
    broken = False

    def clear(self) -> None:
        if self.broken:
            raise OSError(errno.EIO, "Input/output error")
        super().clear()


def test_a_device_that_fails_its_first_command_is_an_open_fault_and_is_released(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = BrokenOnClear(16, 2)
    fake.broken = True
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        sink = LcdSink(lcd_settings(), COMMISSION, lcd_factory=lambda s: fake)
        sink.update(view(due=Due.DEAL), ())
    assert sink.fault is not None
    assert sink.fault.stage == "open"
    assert "no device answers at 0x27" in sink.fault.reason
    assert fake.calls == [("close", False)]
    assert len(caplog.records) == 1


def test_a_close_error_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    fake = BrokenOnClear(16, 2)
    sink = LcdSink(lcd_settings(), COMMISSION, lcd_factory=lambda s: fake)
    fake.broken = True
    with caplog.at_level(logging.INFO, logger=LOGGER):
        sink.close()
        sink.close()
    assert sink.fault is not None
    assert sink.fault.stage == "close"
    assert [r.levelno for r in caplog.records if r.levelno >= logging.WARNING] == [logging.ERROR]


def test_the_real_opener_without_the_bus_is_a_fault_not_a_crash(caplog: pytest.LogCaptureFixture) -> None:
    """No fake at all: RPLCD (or its absence) on a bus this machine does not have."""
    if Path("/dev/i2c-31").exists():
        pytest.skip("this machine has an I2C bus 31")
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        sink = LcdSink(lcd_settings(i2c_bus=31), COMMISSION)
        sink.update(view(due=Due.DEAL), ())
        sink.close()
    assert sink.fault is not None
    assert sink.fault.stage == "open"
    assert "no /dev/i2c-31" in sink.fault.reason or "RPLCD is not installed" in sink.fault.reason
    assert len(caplog.records) == 1


# ---------------------------------------------------------------------------------------------------------
# Through RPLCD's real CharLCD, with a fake I2C bus and an HD44780 at its far end


class Hd44780Backpack:
    """An I2C backpack (PCF8574 or MCP23008) and the HD44780 behind it, decoded from the bus writes.

    The HD44780 latches a nibble on the falling edge of E; two nibbles (high first) make one byte, an
    instruction when RS is low and a character for the DDRAM when it is high.
    """

    def __init__(self, address: int, cols: int, rows: int) -> None:
        self.address = address
        self.cols, self.rows = cols, rows
        self.raw: list[tuple[str, int, int | None, int]] = []  # (method, address, register, value)
        self.decoded: list[tuple[str, int]] = []  # ("I", instruction) or ("D", character code)
        self.ddram = bytearray(b" " * 0x80)
        self.address_counter = 0
        self.backlight = False
        self._e = False
        self._high: int | None = None

    # -- what the I2C bus delivers ---------------------------------------------------------------------
    def pcf8574(self, value: int) -> None:
        self._pins(e=bool(value & 0x04), rs=value & 0x01, nibble=value >> 4, backlight=bool(value & 0x08))

    def mcp23008(self, register: int, value: int) -> None:
        if register in (0x09, 0x12):  # GPIO of an MCP23008, GPIOA of an MCP23017 (0x00 is IODIR)
            self._pins(
                e=bool(value & 0x04),
                rs=(value >> 1) & 1,
                nibble=(value >> 3) & 0x0F,
                backlight=bool(value & 0x80),
            )

    def _pins(self, *, e: bool, rs: int, nibble: int, backlight: bool) -> None:
        self.backlight = backlight
        falling = self._e and not e
        self._e = e
        if not falling:
            return
        if self._high is None:
            self._high = nibble
            return
        byte, self._high = (self._high << 4) | nibble, None
        self._execute(rs, byte)

    def _execute(self, rs: int, byte: int) -> None:
        if rs:
            self.decoded.append(("D", byte))
            self.ddram[self.address_counter] = byte
            self.address_counter = (self.address_counter + 1) & 0x7F
            return
        self.decoded.append(("I", byte))
        if byte & 0x80:
            self.address_counter = byte & 0x7F
        elif byte == 0x01:
            self.ddram[:] = b" " * 0x80
            self.address_counter = 0
        elif byte in (0x02, 0x03):
            self.address_counter = 0

    # -- what a person would read ---------------------------------------------------------------------
    def screen(self) -> list[str]:
        offsets = [0x00, 0x40, self.cols, 0x40 + self.cols]
        return [self.ddram[o : o + self.cols].decode("ascii") for o in offsets[: self.rows]]


def fake_smbus(device: Hd44780Backpack, opened: list[int]) -> type:
    """A class shaped like smbus2's ``SMBus`` whose far end is ``device``."""

    class FakeSMBus:
        def __init__(self, bus: int) -> None:
            opened.append(bus)
            self.bus = bus
            self.closed = False

        def _at(self, address: int) -> None:
            assert not self.closed
            if address != device.address:
                raise OSError(errno.EREMOTEIO, "Remote I/O error")

        def read_byte(self, address: int) -> int:
            self._at(address)
            return 0xFF

        def write_byte(self, address: int, value: int) -> None:
            self._at(address)
            device.raw.append(("write_byte", address, None, value))
            device.pcf8574(value)

        def write_byte_data(self, address: int, register: int, value: int) -> None:
            self._at(address)
            device.raw.append(("write_byte_data", address, register, value))
            device.mcp23008(register, value)

        def close(self) -> None:
            self.closed = True

    return FakeSMBus


@pytest.fixture
def rplcd(monkeypatch: pytest.MonkeyPatch) -> Any:
    """RPLCD's i2c module with its sleeps made instant (the bus is fake; nothing needs the time)."""
    rplcd_i2c = pytest.importorskip("RPLCD.i2c")
    from RPLCD import common

    monkeypatch.setattr(common, "usleep", lambda microseconds: None)
    monkeypatch.setattr(common, "msleep", lambda milliseconds: None)
    return rplcd_i2c


def rplcd_sink(
    rplcd: Any, monkeypatch: pytest.MonkeyPatch, cols: int, rows: int, expander: str = "PCF8574", **kw: Any
) -> tuple[LcdSink, Hd44780Backpack, list[int]]:
    device = Hd44780Backpack(0x27, cols, rows)
    opened: list[int] = []
    monkeypatch.setattr(rplcd, "SMBus", fake_smbus(device, opened))
    sink = LcdSink(lcd_settings(cols, rows, expander=expander, **kw), COMMISSION)
    return sink, device, opened


def test_rplcd_one_frame_reaches_the_bus_as_these_bytes(rplcd: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    sink, device, opened = rplcd_sink(rplcd, monkeypatch, 16, 2)
    assert sink.fault is None
    assert opened == [1, 1]  # the presence probe, then RPLCD's own bus
    assert device.screen() == [" " * 16] * 2
    device.raw.clear()
    device.decoded.clear()

    sink.update(view(due=Due.DEAL), ())

    assert device.decoded == [
        ("I", 0x80),  # DDRAM address: row 0, column 0
        ("D", ord("P")),
        ("I", 0x86),  # row 0, column 6
        ("D", ord("B")),
        ("I", 0xC0),  # row 1 (DDRAM 0x40), column 0
        *[("D", ord(ch)) for ch in "DEAL"],
    ]
    # The 'P' (0x50) as the PCF8574 carries it: RS=1, backlight=0x08, each nibble strobed with E=0x04.
    first_data = [value for _, _, _, value in device.raw[8:16]]
    assert first_data == [0x59, 0x59, 0x5D, 0x59, 0x09, 0x09, 0x0D, 0x09]
    assert len(device.raw) == 9 * 8  # 3 instructions and 6 characters, 8 bus writes each
    assert device.screen() == render(view(due=Due.DEAL), COMMISSION, 16, 2)


@pytest.mark.parametrize("expander", ["PCF8574", "MCP23008", "MCP23017"])
@pytest.mark.parametrize(("cols", "rows"), GEOMETRIES)
def test_rplcd_frames_reach_the_screen(
    rplcd: Any, monkeypatch: pytest.MonkeyPatch, expander: str, cols: int, rows: int
) -> None:
    sink, device, _ = rplcd_sink(rplcd, monkeypatch, cols, rows, expander)
    assert sink.fault is None
    table = TableState(TableRules(burn_rule=BurnRule(mode=BurnMode.NONE)))
    events: list[TableInput] = [CardDrawn(Card.parse(t)) for t in "2H AD 3S 2C KD 4H".split()]
    events += [DeclarePressed(), CutCardOut(), LinkChanged(up=False)]
    for event in events:
        table.apply(event)
        v = table.view()
        sink.update(v, ())
        assert device.screen() == render(v, COMMISSION, cols, rows)
    assert device.backlight is True
    sink.close()
    assert device.screen() == [" " * cols] * rows
    assert device.backlight is False


def test_rplcd_with_nothing_at_the_address_is_a_fault(
    rplcd: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        sink, device, _ = rplcd_sink(rplcd, monkeypatch, 16, 2, i2c_address=0x3F)
        sink.update(view(due=Due.DEAL), ())
    assert sink.fault is not None
    assert "no device answers at 0x3f" in sink.fault.reason
    assert device.raw == []
    assert len(caplog.records) == 1


def test_rplcd_write_error_mid_coup_is_a_fault(
    rplcd: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    sink, device, _ = rplcd_sink(rplcd, monkeypatch, 16, 2)
    sink.update(view(due=Due.DEAL), ())
    device.address = 0x99  # the backpack stops answering (a loose wire)
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        sink.update(view(due=Due.PLAYER_THIRD), ())
        sink.update(view(due=Due.BANKER_THIRD), ())
        sink.close()
    assert sink.fault is not None
    assert sink.fault.stage == "write"
    assert len(caplog.records) == 1


# ---------------------------------------------------------------------------------------------------------
# One odds convention on both displays


@pytest.mark.parametrize(
    "rules",
    [COMMISSION, EZ, SUPER6, replace(COMMISSION, commission_rate=Fraction(25, 1000)), SUPER6.with_tie_pays(9)],
    ids=["commission", "ez", "super6", "commission-2.5", "super6-tie-9"],
)
@pytest.mark.parametrize("result", [BANKER_7_5, BANKER_6_4, PLAYER_9_2, TIE_6_6], ids=["b75", "b64", "p92", "t66"])
def test_the_lcd_writes_the_same_odds_as_the_scoreboard(rules: Ruleset, result: CoupResult) -> None:
    from controller.displays.snapshot import settle_result

    winner = result.winner.value
    board = next(row for row in settle_result(result, rules) if row["bet"] == winner)
    assert board["outcome"] == "win"
    assert line(view(result=result), 2, 20, 4, rules).endswith(board["pays"])
