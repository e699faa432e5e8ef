"""The dealer's character LCD (an HD44780 on an I2C backpack, driven through RPLCD) as a table sink.

Two parts, kept apart so the picture can be tested without any LCD:

* :func:`render` - a pure function from the table's view to the display's lines, each exactly ``cols``
  characters of plain ASCII (what every HD44780 character ROM holds):

  ======  ===================================================================================
  line 1  both totals as the cards arrive (``P 5   B 7``; a hand's total is blank before its first
          card). On a two-line display the right end carries ``CUT`` / ``LAST`` (the cut card is out /
          this coup is the last of the shoe) or a ``DRAGON 7`` / ``PANDA 8`` that hit.
  line 2  the most severe standing alarm (``UNREADABLE CARD``, ``LINK DOWN``, ``MISDRAW`` ...), else the
          coup's result with a payout hint once it is complete (``BANKER 7-5 0.95:1``,
          ``BANKER 7-5 EZ PUSH``, ``BANKER 6-4 PAYS 1:2``, ``TIE 6-6 PAYS 8:1``), else what is due
          (``DEAL``, ``PLAYER DRAWS``, ``BANKER DRAWS``, ``BURN 7 LEFT``, ``HOLD VOID``, ``NEW SHOE``).
  line 3  (four-line displays) the cards, ``P 2H AD 8D  B KS 7C`` (``2H AD 8D | KS 7C 9H`` when both
          hands hold three); ``DRAGON 7 PAYS 40:1`` instead once it hit.
  line 4  (four-line displays) the shoe, ``SHOE 1 COUP 12 R380`` and ``CUT`` / ``LAST``.
  ======  ===================================================================================

  **The money's short form.** At a table with a bet-spot reader, when the money has something for the dealer
  (:func:`money_line`), it takes line 4 of a four-line display, and line 2 of a two-line one unless a table
  alarm stands there: the most urgent first, ``READER DOWN``, then each seat's alarm (``S2 MISPAY``,
  ``S6 PAST POST``, ``S3 RETURN``, ``S3 TIE BELOW MIN``), then what to pay and take (``S3 PAY 95``,
  ``S5 TAKE 25`` or ``S5 TAKE``), then the commission boxes asked for (``S4 BOX 12.50``), with ``+N`` for
  the further items when there is room. The full picture is the dealer screen's
  (:mod:`controller.displays.dealer`).

  **The chip tray.** At a table with a chip tray (``[tray] port``), ``TRAY DOWN`` while its link is down, and a
  variance a recount confirmed in its words (``TRAY SHORT $25 (COUP 14)``, shortened to what fits:
  ``TRAY SHORT 25 C14``) until the next count (:func:`tray_line`), take the money's place when the money has
  nothing for the dealer (line 4 of a four-line display; line 2 of a two-line one unless a table alarm stands).

  Hints are chosen longest first among those that fit, so a 16-column display gets the short forms
  (``BANKER 7-5 -5%``, ``BANKER 7-5 PUSH``, ``BANKER 6-4 1:2``). What a wager pays comes from
  :func:`controller.game.payouts.decide` (the settlement's own rule, never restated here), written by
  :func:`controller.displays.wording.odds` as the scoreboard writes it. An alarm is shown by its text
  (``Alarm.value``); one without a short form that is too wide is cut after its last whole word that fits.

* :class:`LcdSink` - the sink the table loop feeds. It compares each line with the last frame and sends
  only the characters that changed (through a PCF8574 each character costs eight bus writes). Hardware
  trouble never reaches the table loop: an LCD that is absent at start-up, or that fails later, is logged
  once, recorded in :attr:`LcdSink.fault`, and the sink goes inert; the daemon carries on without it.
"""

from __future__ import annotations

import errno
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, Protocol

from controller.config import LcdSection
from controller.displays.wording import money, odds, percent
from controller.game.coup import CoupResult, Winner
from controller.game.payouts import Outcome, decide, net_per_unit
from controller.game.rules import Bet, CommissionCollection, Ruleset
from controller.game.table import Alarm, Due, Notice, TableView
from controller.game.tray import TrayView
from controller.game.wagers import MoneyView, SpotState
from controller.userfile import one_line

__all__ = [
    "ALARM_PRECEDENCE",
    "CharLcd",
    "LcdFactory",
    "LcdFault",
    "LcdSink",
    "alarm_text",
    "money_line",
    "open_rplcd",
    "render",
    "top_alarm",
    "tray_line",
]

logger = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------------------------
# The picture (pure)

#: The alarms that are neither halting nor the link, most severe first: a foreign card among the burn
#: cards (call the supervisor), the dealer errors with a house procedure, then the notices.
_LESSER_ALARMS: tuple[Alarm, ...] = (
    Alarm.FOREIGN_BURN_CARD,
    Alarm.MISDRAW,
    Alarm.EARLY_DECLARE,
    Alarm.SHOE_CLOSED,
    Alarm.UNREADABLE_EXPOSED,
    Alarm.INPUT_LOST,
    Alarm.SUPERVISOR_PIN,
    Alarm.SUPERVISOR_CALLED,
    Alarm.UNKNOWN_BADGE,
    Alarm.NOTHING_TO_DECLARE,
    Alarm.SHOE_REBOOTED,
)


def _precedence() -> tuple[Alarm, ...]:
    halting = [a for a in Alarm if a.halts_coup]  # the table's own rule, so the two never disagree
    no_ack = [Alarm.LINK_DOWN, Alarm.JOURNAL_FULL, Alarm.JOURNAL_FAULT]  # no card can be acknowledged
    order = [*halting, *no_ack, *(a for a in _LESSER_ALARMS if a not in halting)]
    return (*order, *(a for a in Alarm if a not in order))  # an alarm added later still gets a place


#: Standing alarms in the order the display shows them, most severe first: the halting ones (the coup
#: waits for VOID), then a dead link (no card can be acknowledged), then the dealer errors, then notices.
ALARM_PRECEDENCE: tuple[Alarm, ...] = _precedence()
_RANK = {alarm: i for i, alarm in enumerate(ALARM_PRECEDENCE)}

#: Shorter texts for the alarms whose display text does not fit a 16-column line.
_SHORT_ALARM: dict[Alarm, str] = {
    Alarm.EARLY_DECLARE: "EARLY DECLARE",
    Alarm.FOREIGN_BURN_CARD: "FOREIGN BURNED",
    Alarm.NOTHING_TO_DECLARE: "NOTHING TO DECL",
    Alarm.UNREADABLE_EXPOSED: "BURN UNREADABLE",
}

_DUE_TEXT: dict[Due, str] = {
    Due.DEAL: "DEAL",
    Due.PLAYER_THIRD: "PLAYER DRAWS",
    Due.BANKER_THIRD: "BANKER DRAWS",
    Due.DECLARE: "DECLARE",
    Due.VOID: "HOLD VOID",
    Due.NEW_SHOE: "NEW SHOE",
}

#: What the HD44780's ROM (A00 and A02 alike) draws as in ASCII: 0x20-0x7D except 0x5C (a yen sign on A00).
_ROM_SAFE = frozenset(chr(c) for c in range(0x20, 0x7E)) - {"\\"}


def top_alarm(alarms: Sequence[Alarm]) -> Alarm | None:
    """The most severe of the standing alarms (see :data:`ALARM_PRECEDENCE`), ``None`` for none."""
    return min(alarms, key=lambda a: _RANK.get(a, len(_RANK)), default=None)


def alarm_text(alarm: Alarm, cols: int) -> str:
    """The alarm's display text, or when the full text is wider than ``cols`` its short form, or (an alarm
    without one, such as an alarm added later) its text cut after the last whole word that fits."""
    text = alarm.value
    if len(text) <= cols:
        return text
    short = _SHORT_ALARM.get(alarm)
    if short is not None and len(short) <= cols:
        return short
    cut = text[: cols + 1].rsplit(" ", 1)[0] if " " in text[: cols + 1] else ""
    return cut or text[:cols]


def render(view: TableView, ruleset: Ruleset, cols: int, rows: int) -> list[str]:
    """The display's lines for ``view``: ``rows`` strings of exactly ``cols`` ROM-safe characters."""
    if cols < 1 or rows < 1:
        raise ValueError(f"an LCD of {cols}x{rows} characters has nothing to show")
    badge = _badge(view.result, ruleset)
    status = _status_line(view, ruleset, cols)
    wagers = view.money  # None: the table has no bet-spot reader
    dealer = money_line(wagers, cols) if wagers is not None else None
    if dealer is None and view.tray is not None:
        dealer = tray_line(view.tray, cols)
    if rows >= 4:
        cards = f"{_BADGE_TEXT[badge[0]]} PAYS {odds(badge[1])}" if badge is not None else _cards_line(view, cols)
        lines = [_totals(view, "", cols), status, cards, dealer or _shoe_line(view, cols)]
    else:
        if dealer is not None and top_alarm(view.alarms) is None:
            status = dealer
        mark = _shoe_mark(view)
        if badge is not None:
            suffixed = f"{status.rstrip()} {_BADGE_TEXT[badge[0]]}"
            if len(suffixed) <= cols:
                status = suffixed
            else:
                mark = _BADGE_TEXT[badge[0]]
        lines = [_totals(view, mark, cols), status]
    lines += [""] * (rows - len(lines))
    return [_fit(line, cols) for line in lines[:rows]]


#: The money's items, most urgent first: a spot's state -> (rank, short words).
_MONEY_ALARM: dict[SpotState, tuple[int, str]] = {
    SpotState.MISPAID: (1, "MISPAY"),
    SpotState.CHANGED: (2, "PAST POST"),  # or PULLED BET: the chips' count tells
    SpotState.REFUSED: (3, "RETURN"),
    SpotState.VIOLATION: (4, "CHECK"),
}


def money_line(money: MoneyView, cols: int) -> str | None:
    """The money's most urgent item for the dealer on one line of ``cols`` (see the module's docstring), with
    ``+N`` for the rest when there is room; None when the money has nothing for the dealer now."""
    items: list[tuple[int, int, str]] = []  # (rank, seat, words)
    if not money.reader_up:
        items.append((0, 0, "READER DOWN"))
    for seat in money.seats:
        n = seat.seat
        seat_alarm = False
        for spot in seat.spots:
            st = spot.state
            if st in _MONEY_ALARM:
                rank, words = _MONEY_ALARM[st]
                if st is SpotState.CHANGED:
                    pulled = spot.text == "PULLED BET" or (not spot.text and spot.cents < (spot.wager_cents or 0))
                    words = "PULLED BET" if pulled else "PAST POST"
                if st is SpotState.VIOLATION and spot.text:
                    words = spot.text
                items.append((rank, n, f"S{n} {words}"))
                seat_alarm = True
            elif st in (SpotState.PAY, SpotState.PUSH) and spot.pay_cents:
                items.append((6, n, _first_fit([f"S{n} PAY {_dollars(spot.pay_cents)}", f"S{n} PAY"], cols)))
            elif st in (SpotState.PAY, SpotState.PUSH) and spot.take_cents:  # paid too much: take the rest back
                back = f"S{n} TAKE BACK {_dollars(spot.take_cents)}"
                items.append((7, n, _first_fit([back, f"S{n} TAKE BACK"], cols)))
            elif st is SpotState.TAKE:
                take = f"S{n} TAKE {_dollars(spot.take_cents)}" if spot.take_cents else f"S{n} TAKE"
                items.append((7, n, _first_fit([take, f"S{n} TAKE"], cols)))
            elif st is SpotState.COLLECT:
                owed = spot.target_cents or spot.take_cents or seat.box_cents
                items.append((8, n, f"S{n} BOX {_dollars(owed)}"))
        if seat.alarms and not seat_alarm:
            items.append((5, n, f"S{n} {seat.alarms[-1]}"))
    if not items:
        return None
    items.sort(key=lambda item: (item[0], item[1]))
    text = items[0][2]
    if len(text) > cols:  # words too long: cut after the last whole word that fits
        cut = text[: cols + 1].rsplit(" ", 1)[0]
        text = cut if " " in text[: cols + 1] else text[:cols]
    more = len(items) - 1
    if more and len(text) + 2 + len(str(more)) <= cols:
        text += f"+{more}".rjust(cols - len(text))
    return text


_TRAY_ALARM = re.compile(r"^TRAY (SHORT|OVER) \$(\S+) \(COUP (\d+)\)$")


def tray_line(tray: TrayView, cols: int) -> str | None:
    """The chip tray's words for the dealer on one line of ``cols``: ``TRAY DOWN`` while its link is down, else
    the last confirmed variance (:attr:`~controller.game.tray.TrayView.alarm`) until the next count, in the
    longest form that fits (``TRAY SHORT $25 (COUP 14)``, ``TRAY SHORT 25 C14``, ``TRAY SHORT 25``,
    ``TRAY SHORT``); None when the tray has nothing for the dealer."""
    if not tray.up:
        return "TRAY DOWN"
    if not tray.alarm:
        return None
    match = _TRAY_ALARM.match(tray.alarm)
    if match is None:
        return _first_fit([tray.alarm], cols)
    word, amount, coup = match.groups()
    return _first_fit([tray.alarm, f"TRAY {word} {amount} C{coup}", f"TRAY {word} {amount}", f"TRAY {word}"], cols)


def _dollars(cents: int) -> str:
    """An amount on the LCD: the displays' own money text without its dollar sign (``95``, ``12.50``)."""
    return money(cents).replace("$", "")


def _fit(text: str, cols: int) -> str:
    """``text`` made safe for the ROM, cut or padded to exactly ``cols`` characters."""
    safe = "".join(ch if ch in _ROM_SAFE else "?" for ch in text)
    return safe[:cols].ljust(cols)


def _first_fit(candidates: Sequence[str], cols: int) -> str:
    """The first candidate that fits ``cols`` (the last one, to be cut, if none does)."""
    for text in candidates:
        if len(text) <= cols:
            return text
    return candidates[-1]


def _totals(view: TableView, mark: str, cols: int) -> str:
    p = str(view.player_total) if view.player else " "
    b = str(view.banker_total) if view.banker else " "
    wide, narrow = f"P {p}   B {b}", f"P {p} B {b}"
    if not mark:
        return wide
    for left in (wide, narrow):
        if len(left) + 1 + len(mark) <= cols:
            return left + mark.rjust(cols - len(left))
    return wide


def _status_line(view: TableView, ruleset: Ruleset, cols: int) -> str:
    alarm = top_alarm(view.alarms)
    if alarm is not None:
        text = alarm_text(alarm, cols)
        more = len(view.alarms) - 1
        if more and len(text) + 2 + len(str(more)) <= cols:
            text += f"+{more}".rjust(cols - len(text))
        return text
    if view.result is not None:
        return _result_text(view.result, ruleset, cols)
    if view.due is Due.BURN:
        return f"BURN {view.burn_left} LEFT" if view.burn_left else "EXPOSE BURN CARD"
    text = _DUE_TEXT[view.due]
    if view.due is Due.DEAL and view.last_coup:
        text = _first_fit([f"{text} LAST COUP", f"{text} LAST"], cols)
    return text


def _result_text(result: CoupResult, ruleset: Ruleset, cols: int) -> str:
    """``BANKER 7-5`` with the longest payout hint that fits."""
    pt, bt = result.player_total, result.banker_total
    winner = result.winner
    name = "TIE" if winner is Winner.TIE else winner.value.upper()
    head = f"{name} {max(pt, bt)}-{min(pt, bt)}"
    candidates = [f"{head} {hint}" for hint in _hints(result, ruleset)]
    return _first_fit([*candidates, head], cols)


def _hints(result: CoupResult, rules: Ruleset) -> list[str]:
    """Payout hints for the winning main wager, longest first. The pay comes from
    :func:`~controller.game.payouts.decide` (the settlement's own rule), the text from the one odds
    formatter both displays share."""
    bet = _MAIN_BET[result.winner]
    outcome, pays = decide(bet, result, rules)
    if outcome is Outcome.PUSH:  # a Banker win that pushes (EZ baccarat's three-card 7)
        return ["EZ PUSH", "PUSH"] if rules.banker_three_card_seven_pushes else ["PUSH"]
    rate = rules.commission_rate if bet is Bet.BANKER else Fraction(0)
    if rate:
        pct = percent(rate)
        if rules.commission_collection is CommissionCollection.AT_SHOE_END:
            return [f"{odds(pays)} +{pct}", f"+{pct}"]
        net = odds(net_per_unit(bet, result, rules))
        return [f"PAYS {net}", net, f"-{pct}"]
    return [f"PAYS {odds(pays)}", odds(pays)]


_MAIN_BET: dict[Winner, Bet] = {Winner.BANKER: Bet.BANKER, Winner.PLAYER: Bet.PLAYER, Winner.TIE: Bet.TIE}


Badge = Literal["dragon_7", "panda_8"]
_BADGE_TEXT: dict[Badge, str] = {"dragon_7": "DRAGON 7", "panda_8": "PANDA 8"}


_BADGE_BET: dict[Badge, Bet] = {"dragon_7": Bet.DRAGON_7, "panda_8": Bet.PANDA_8}


def _badge(result: CoupResult | None, rules: Ruleset) -> tuple[Badge, Fraction] | None:
    """Dragon 7 or Panda 8 and what it pays, if the table offers it and it won on ``result`` (by the
    settlement's own rule)."""
    if result is None:
        return None
    for badge, bet in _BADGE_BET.items():
        outcome, pays = decide(bet, result, rules)
        if rules.offers(bet) and outcome is Outcome.WIN and pays:  # a ruleset may zero a side bet out
            return badge, pays
    return None


def _cards_line(view: TableView, cols: int) -> str:
    if not view.player and not view.banker:
        return ""
    p = " ".join(c.token for c in view.player)
    b = " ".join(c.token for c in view.banker)
    # Both hands of three cards do not fit 20 columns with their letters: the hands are split by a bar.
    return _first_fit([f"P {p}  B {b}", f"P {p} B {b}", f"{p} | {b}"], cols)


def _shoe_mark(view: TableView) -> str:
    if view.last_coup:
        return "LAST"
    return "CUT" if view.cut_card_out else ""


def _shoe_line(view: TableView, cols: int) -> str:
    s, c, r, mark = view.shoe_number, view.coup_number, view.cards_remaining, _shoe_mark(view)
    tail = f" {mark}" if mark else ""
    return _first_fit(
        [
            f"SHOE {s} COUP {c} R{r}{tail}",
            f"SHOE {s} C{c} R{r}{tail}",
            f"S{s} C{c} R{r}{tail}",
            f"S{s} C{c} R{r}",
        ],
        cols,
    )


# ---------------------------------------------------------------------------------------------------------
# The hardware (a thin shell round RPLCD)


class CharLcd(Protocol):
    """The part of RPLCD's ``CharLCD`` the sink uses (tests provide a fake with the same shape)."""

    @property
    def cursor_pos(self) -> tuple[int, int]: ...

    @cursor_pos.setter
    def cursor_pos(self, value: tuple[int, int]) -> None: ...

    @property
    def backlight_enabled(self) -> bool: ...

    @backlight_enabled.setter
    def backlight_enabled(self, value: bool) -> None: ...

    def write_string(self, value: str) -> None: ...

    def clear(self) -> None: ...

    def close(self, clear: bool = False) -> None: ...


#: Opens the LCD the settings describe; raises (OSError, ImportError ...) when it cannot.
LcdFactory = Callable[[LcdSection], CharLcd]


@dataclass(frozen=True)
class LcdFault:
    """Why the LCD sink went inert: at which stage, on which bus and address, and the cause."""

    stage: Literal["open", "write", "close"]
    bus: int
    address: int
    reason: str

    def __str__(self) -> str:
        return f"dealer LCD at 0x{self.address:02x} on I2C bus {self.bus}: {self.stage} failed: {self.reason}"


def open_rplcd(settings: LcdSection) -> CharLcd:
    """RPLCD's ``CharLCD`` on the configured I2C bus, after checking that a device answers there."""
    from RPLCD import i2c as rplcd_i2c  # deferred: a controller without an LCD needs no RPLCD

    bus = rplcd_i2c.SMBus(settings.i2c_bus)  # FileNotFoundError: no /dev/i2c-N
    try:
        bus.read_byte(settings.i2c_address)  # OSError (EREMOTEIO / ENXIO): nothing at the address
    finally:
        bus.close()
    params = {"gpio_bank": "A"} if settings.expander == "MCP23017" else None
    lcd: CharLcd = rplcd_i2c.CharLCD(
        settings.expander,
        settings.i2c_address,
        expander_params=params,
        port=settings.i2c_bus,
        cols=settings.cols,
        rows=settings.rows,
        charmap="A00",
        auto_linebreaks=False,  # the sink positions every write itself; no line wrap commands
        backlight_enabled=True,
    )
    return lcd


def fault_reason(exc: BaseException, settings: LcdSection) -> str:
    """Why the LCD could not be opened or written, in one line (the LCD sink's fault, and ``selftest``'s)."""
    if isinstance(exc, ImportError):
        return f"RPLCD is not installed ({exc})"
    if isinstance(exc, FileNotFoundError):
        return f"no /dev/i2c-{settings.i2c_bus} (is I2C enabled?)"
    if isinstance(exc, OSError) and exc.errno in (errno.EREMOTEIO, errno.ENXIO, errno.EIO):
        return f"no device answers at 0x{settings.i2c_address:02x} on I2C bus {settings.i2c_bus} ({exc})"
    return one_line(f"{type(exc).__name__}: {exc}")


class LcdSink:
    """The dealer's LCD as a sink. Never raises into the table loop: hardware trouble makes it inert."""

    name = "lcd"

    def __init__(self, lcd_settings: LcdSection, ruleset: Ruleset, *, lcd_factory: LcdFactory | None = None) -> None:
        self.settings = lcd_settings
        self.ruleset = ruleset
        self.cols = lcd_settings.cols
        self.rows = lcd_settings.rows
        #: Why the sink is inert, ``None`` while the LCD works.
        self.fault: LcdFault | None = None
        #: What the display shows now, line by line (as far as the sink knows).
        self.shown: list[str] = [" " * self.cols] * self.rows
        #: Characters sent since start-up (a measure of I2C traffic).
        self.chars_written = 0
        self._lcd: CharLcd | None = None
        self._closed = False
        try:
            lcd = (lcd_factory or open_rplcd)(lcd_settings)
        except Exception as exc:  # any hardware or driver trouble (OSError, ImportError ...): inert
            self._fail("open", exc)
            return
        try:
            lcd.clear()  # a known, blank state: ``shown`` is true from here on
        except Exception as exc:  # the device went away between the probe and the first command
            self._fail("open", exc)
            self._release(lcd)
            return
        self._lcd = lcd
        s = lcd_settings
        logger.info("dealer LCD %dx%d at 0x%02x on I2C bus %d", s.cols, s.rows, s.i2c_address, s.i2c_bus)

    @property
    def active(self) -> bool:
        """The sink drives an LCD (not faulted, not closed)."""
        return self._lcd is not None

    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        """Show ``view``, sending only the characters that changed since the last frame."""
        lcd = self._lcd
        if lcd is None:
            return
        frame = render(view, self.ruleset, self.cols, self.rows)
        try:
            for row, (new, old) in enumerate(zip(frame, self.shown, strict=True)):
                if new == old:
                    continue
                for start, end in _changed_runs(old, new):
                    lcd.cursor_pos = (row, start)
                    lcd.write_string(new[start:end])
                    self.chars_written += end - start
                self.shown[row] = new
        except Exception as exc:  # a bus error must not reach the table loop
            self._fail("write", exc)
            self._release(lcd)

    def close(self) -> None:
        """Clear the display and turn the backlight off. Idempotent; never raises."""
        lcd, self._lcd = self._lcd, None
        if self._closed:
            return
        self._closed = True
        if lcd is None:
            return
        try:
            lcd.clear()
            lcd.backlight_enabled = False
            self.shown = [" " * self.cols] * self.rows
        except Exception as exc:  # shutting down: report and carry on
            self._fail("close", exc)
        self._release(lcd)

    # -- helpers ---------------------------------------------------------------------------------
    def _fail(self, stage: Literal["open", "write", "close"], exc: BaseException) -> None:
        self._lcd = None
        s = self.settings
        self.fault = LcdFault(stage, s.i2c_bus, s.i2c_address, fault_reason(exc, s))
        if stage == "close":
            logger.error("%s", self.fault)
        else:
            logger.error("%s; the dealer LCD stays off until the daemon restarts", self.fault)

    @staticmethod
    def _release(lcd: CharLcd) -> None:
        """Let go of the driver and its I2C file (RPLCD's own close leaves the bus open)."""
        try:
            lcd.close(clear=False)
            bus = getattr(lcd, "bus", None)
            if bus is not None:
                bus.close()
        except Exception:  # releasing a broken device: nothing more to do
            logger.debug("closing the dealer LCD failed", exc_info=True)


def _changed_runs(old: str, new: str) -> list[tuple[int, int]]:
    """The half-open column ranges to rewrite so that ``old`` becomes ``new`` (lines of equal width).

    Each run costs one cursor move, as much as one character, so runs one unchanged character apart are
    merged and longer stretches of unchanged characters are skipped.
    """
    runs: list[tuple[int, int]] = []
    for col, (a, b) in enumerate(zip(old, new, strict=True)):
        if a == b:
            continue
        if runs and col - runs[-1][1] <= 1:
            runs[-1] = (runs[-1][0], col + 1)
        else:
            runs.append((col, col + 1))
    return runs
