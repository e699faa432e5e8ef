"""The names of the record vocabulary: the journal's record kinds, an input's kinds, where a press came from.

They are :mod:`controller.game.records`'s (which says what each record holds) and
:mod:`controller.game.bodies`'s (whose classes hold them); they live here, apart, so that both read them.
Pure: names only.
"""

from __future__ import annotations

from enum import StrEnum


class RecordKind(StrEnum):
    """The journal's record kinds (its ``kind`` column)."""

    INPUT = "input"  # something that reached the table (a card, a press, a link event ...)
    COUP = "coup"  # a coup declared or voided, or cards set aside after the shoe ended
    BURN = "burn"  # one burned card (the exposed card included)
    SHOE = "shoe"  # a shoe started or ended
    ALARM = "alarm"  # an alarm raised
    NOTE = "note"  # the journal's own notes (restored, rescued ...)
    ADVANTAGE = "advantage"  # a wager's player EV at a coup's betting time reached the surveillance threshold
    ADVANTAGE_CLEARED = "advantage_cleared"  # ... and fell back below it (or its shoe ended)
    # the money at the table (a bet-spot reader; version 3)
    WAGER = "wager"  # one locked wager of a coup, with its exact expectation at the betting time
    WAGER_REFUSED = "wager_refused"  # a bet on a spot at the lock that breaks a table rule: to be returned
    PAST_POST = "past_post"  # chips added to (or swapped on) a locked spot before the declare
    PULLED_BET = "pulled_bet"  # chips taken from a locked spot before the declare
    SETTLEMENT = "settlement"  # one locked wager settled at the declare
    MISPAY = "mispay"  # a payout check failed: underpay, overpay, a loser left
    COMMISSION = "commission"  # a seat's commission box closed: owed, collected, uncollected
    MISREAD = "misread"  # a locked spot changed and came back by the next snapshot (reader flicker)
    GHOST_READ = "ghost_read"  # a chip reported on a second spot while the first still held it
    # the players at the seats (the seats' card readers; version 4)
    PLAYER_IN = "player_in"  # a player's visit at a seat began: the card came in
    PLAYER_OUT = "player_out"  # ... and ended: the card went out, another came in, or it was left in the reader
    # the cash at the table (version 4)
    BUY_IN = "buy_in"  # a buy-in taken at a seat: amount, tender (cash, chips, marker), the player when carded
    # the staff at the table (the dealer's position's badge reader; version 4)
    DEALER_IN = "dealer_in"  # a dealer on the table's staff list signed in with a badge: on duty from now
    DEALER_OUT = "dealer_out"  # ... and out: the badge went out, or another dealer signed in (a swap)
    BADGE_REFUSED = "badge_refused"  # a badge that signed no one in: not on the staff list (unknown, disabled)
    # what needs a supervisor (controller.game.approvals; version 4)
    APPROVAL_ASKED = "approval_asked"  # the dealer asked for an action a supervisor must approve (VOID held)
    APPROVAL = "approval"  # a supervisor approved it with badge and PIN: the action was carried out
    APPROVAL_REFUSED = "approval_refused"  # a step refused (badge, role, own, wrong PIN, locked), or withdrawn
    # the chip tray (a tray reader; controller.game.tray; version 4)
    TRAY_COUNT = "tray_count"  # a coup's reconciliation: the tray's count held to the expected tray
    TRAY_VARIANCE = "tray_variance"  # ... and a variance a recount confirmed: the tray short or over, by coup


class InputKind(StrEnum):
    """The ``kind`` of an input body."""

    # table inputs, replayed
    CARD = "card"
    UNREADABLE = "unreadable"
    CARD_KEYED = "card_keyed"  # an unreadable coup card keyed by the dealer, a supervisor approved (version 4)
    CUT_CARD = "cut_card"
    DECLARE = "declare"
    VOID = "void"
    NEW_SHOE = "new_shoe"
    LINK = "link"
    SHOE_REBOOTED = "shoe_rebooted"
    SHOE_PROTOCOL = "shoe_protocol"
    LINE_NOISE = "line_noise"  # the line turned noisy (NOISY LINE) or quiet again
    SPOT = "spot"  # the bet-spot reader: what one spot holds now (its chips resolved: uid, cents, status)
    SPOTS_SNAPSHOT = "spots_snapshot"  # the reader's full snapshot (every spot not listed is empty)
    READER_LINK = "reader_link"  # the reader's link came up or went down
    SEAT_CARD = "seat_card"  # a seat's player-card reader: a card came in or went out (version 4)
    TUBE = "tube"  # the chip tray's reader: what one tube holds now (its chips resolved, as a spot's; version 4)
    TRAY_SNAPSHOT = "tray_snapshot"  # the tray's full count (every tube not listed is empty)
    TRAY_LINK = "tray_link"  # the tray's link came up or went down (TRAY DOWN)
    TRAY_STILL = "tray_still"  # no tube report for the settle time: the moment a count may be made
    # a record only
    HELLO = "hello"  # the shoe's HELLO: firmware, serial number, protocol version, session id
    STATUS = "status"  # the shoe's STATUS flags
    # a fault of the table's shell, "raised" then "cleared": the journal could not take a commit (its
    # "alarm" journal_full or journal_fault), or the loop's full queue dropped an event (input_lost)
    JOURNAL_FAULT = "journal_fault"
    NOISE = "noise"  # rejected frames or lines, summarised (count and reasons over an interval)
    MESSAGE = "message"  # another message from the shoe, by its type's name
    READER_HELLO = "reader_hello"  # the bet-spot reader's HELLO
    READER_STATUS = "reader_status"  # the bet-spot reader's STATUS flags
    READER_MESSAGE = "reader_message"  # another message from the reader, by its type's name
    SNAPSHOT_REFUSED = "snapshot_refused"  # a reader's snapshot that did not hold together: no table input
    DEALER_CARD = "dealer_card"  # a card came in or went out at the dealer's position (a badge; version 4)
    TRAY_HELLO = "tray_hello"  # the chip tray's HELLO (version 4)
    TRAY_STATUS = "tray_status"  # the chip tray's STATUS flags
    TRAY_MESSAGE = "tray_message"  # another message from the tray, by its type's name
    # a buy-in entered at a seat (on money.sock: the dealer screen's entry, the simulator's; version 4): it
    # changes nothing of the game, so nothing replays it; its buy_in record is derived with the shoe and coup
    BUY_IN = "buy_in"
    # a step of a supervisor approval that is not a badge (controller.game.approvals; version 4): the dealer's
    # ask (VOID held) or a PIN's verdict (right or wrong; never the PIN). A record only: the action approved is
    # its own table input (a void), journaled after it
    APPROVAL = "approval"
    # whether the table's clock is synchronised (the kernel's word, as timedatectl says it): at start and on
    # each change; the journal's times are set against the casino's CCTV in a dispute
    CLOCK = "clock"

    @property
    def replayed(self) -> bool:
        """Whether a restart replays it: a table input, not a record only."""
        return self in _REPLAYED


class Source(StrEnum):
    """Where a press came from."""

    SHOE = "shoe"  # the shoe's own button
    PANEL = "panel"  # the dealer's panel


#: The input kinds that are table inputs, replayed after a restart (``controller.game.records`` maps each to
#: its table input; a test checks the two agree).
_REPLAYED = frozenset(
    {
        InputKind.CARD,
        InputKind.UNREADABLE,
        InputKind.CARD_KEYED,
        InputKind.CUT_CARD,
        InputKind.DECLARE,
        InputKind.VOID,
        InputKind.NEW_SHOE,
        InputKind.LINK,
        InputKind.SHOE_REBOOTED,
        InputKind.SHOE_PROTOCOL,
        InputKind.LINE_NOISE,
        InputKind.SPOT,
        InputKind.SPOTS_SNAPSHOT,
        InputKind.READER_LINK,
        InputKind.SEAT_CARD,
        InputKind.TUBE,
        InputKind.TRAY_SNAPSHOT,
        InputKind.TRAY_LINK,
        InputKind.TRAY_STILL,
    }
)
