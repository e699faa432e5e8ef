"""What needs a supervisor: an action the dealer asks for waits for a supervisor's badge and PIN. Pure.

The house's rule (``docs/operations.md``, "Supervisor approvals"): the dealer may not void a coup alone, nor close
a commission box uncollected (:data:`Action.NEW_SHOE`: NEW SHOE pressed while a coup is in progress, which voids
it, or while a box still owes, which closes it with what it owes unpaid), nor key an unreadable coup card
(:data:`Action.KEY_CARD`: the misread's correction, the card lying face up keyed on the dealer screen), nor rate
an uncarded player (an anonymous player of the seat, :data:`Action.RATE_UNCARDED`: the dealer screen's RATE).
A table is configured with what it asks for (:class:`Approvable`).
Holding VOID *asks* for the void; the table does nothing to the coup until a supervisor approves at the dealer's
position:

1. the supervisor's badge at the dealer's position's reader (during a pending approval that reader's badges are
   the approval's: a badge in is not a dealer swap, the dealer's own badge out and back is no news);
2. the supervisor's PIN on the dealer screen, which the table checks against the PIN's hash on its verified
   staff list (the check itself is the shell's, on a worker thread: Argon2 takes a moment; it hands the desk
   the verdict, :meth:`ApprovalDesk.pin_checked`).

What this module holds is the desk that keeps one pending approval and decides, with the notices that become
the records (``approval_asked``, ``approval``, ``approval_refused``):

* :meth:`ApprovalDesk.ask`: the dealer asks (:class:`ApprovalAsked`); asking again for the same action while it
  is pending withdraws it (:class:`ApprovalRefused`, ``withdrawn``).
* :meth:`ApprovalDesk.badge`: a badge in at the dealer's position while an approval is pending. Refused (one
  :class:`ApprovalRefused` each, the approval stays pending for another supervisor): a badge not on the list
  (``unknown_badge``), a member who may not approve (``not_supervisor``: only supervisors and pit managers
  may), the dealer who asked (``own_correction``: a supervisor dealing cannot approve their own void), a member
  locked out (``locked``). The asking dealer's own badge back in the reader is no news (it came out for the
  supervisor's). Else the member is the approver and the PIN is due (:class:`PinDue`).
* :meth:`ApprovalDesk.pin_checked`: the approver's PIN was right (:class:`Approved`: the shell carries the
  action out) or wrong (``wrong_pin``). The :data:`MAX_WRONG_PINS`-th wrong PIN in a row locks the member
  out (``locked_out``: the floor raises an alert); a lock lasts until the floor's next staff list (a PIN reset
  changes it) and is rebuilt after a restart from the journal (:meth:`ApprovalDesk.relock`).

Nothing here reads a PIN: the desk sees staff ids, roles and verdicts only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import Enum

from controller.game.notation import card_text, money_text
from controller.game.notice import Notice
from controller.game.staff import Member
from controller.game.wagers import ApprovalView

__all__ = [
    "APPROVING_ROLES",
    "MAX_WRONG_PINS",
    "Action",
    "Approvable",
    "ApprovalAsked",
    "ApprovalDesk",
    "ApprovalRefused",
    "Approved",
    "Pending",
    "PinDue",
    "RefusedWhy",
]

#: The roles that may approve what needs a supervisor.
APPROVING_ROLES = frozenset({"supervisor", "pit_manager"})
#: Wrong PINs in a row that lock a member out of approving at this table.
MAX_WRONG_PINS = 3


class Action(Enum):
    """What needs a supervisor's approval (the value is the records' word)."""

    VOID = "void"  # void the coup in progress
    RATE_UNCARDED = "rate_uncarded"  # rate the uncarded player at a seat as an anonymous player of that seat
    NEW_SHOE = "new_shoe"  # a new shoe that voids the coup in progress or closes a commission box uncollected
    KEY_CARD = "key_card"  # an unreadable coup card keyed by the dealer: it takes the unread card's place

    def text(self, seat: int | None = None, cents: int | None = None, card: str | None = None) -> str:
        """The action as the dealer's display says it (``cents``: what a new shoe closes uncollected; ``card``: the
        card keyed, its token)."""
        if self is Action.VOID:
            return "VOID COUP"
        if self is Action.RATE_UNCARDED:
            return f"RATE SEAT {seat}"
        if self is Action.KEY_CARD:
            return f"KEY CARD {card_text(card) if card else ''}".rstrip()
        return f"NEW SHOE: {money_text(cents)} UNCOLLECTED" if cents else "NEW SHOE: VOID COUP"


class Approvable(Enum):
    """What a table may be configured to ask a supervisor for (``[table] supervisor_approves``); a rating of an
    uncarded player always asks."""

    VOID = "void"  # VOID held with a coup in progress, or NEW SHOE pressed then (which voids it)
    CLOSE_BOX = "close_box"  # NEW SHOE pressed while a commission box still owes (it closes uncollected)


class RefusedWhy(Enum):
    """Why an approval was refused, or a step of it."""

    UNKNOWN_BADGE = "unknown_badge"  # the badge is not on the table's staff list
    NOT_SUPERVISOR = "not_supervisor"  # on it, in a role that may not approve
    OWN_CORRECTION = "own_correction"  # the dealer who asked
    LOCKED = "locked"  # locked out by wrong PINs (until the floor's next staff list)
    WRONG_PIN = "wrong_pin"  # the PIN did not match the hash on the list
    LOCKED_OUT = "locked_out"  # the last wrong PIN allowed: the member is locked out from now
    WITHDRAWN = "withdrawn"  # the dealer asked again for the same action: the request is withdrawn
    NO_PIN = "no_pin"  # the member has no PIN on the staff list


@dataclass(frozen=True)
class Pending:
    """The approval waiting: its action, the coup it is for, the dealer who asked (None: no one on duty), and
    the approver whose badge was read (None: no badge yet; the PIN is due once there is one)."""

    action: Action
    shoe: int
    coup: int
    dealer: str | None
    approver: str | None = None
    seat: int | None = None  # rate_uncarded: the seat
    role: str = ""  # the approver's role on the list
    cents: int | None = None  # new_shoe: what it closes uncollected (0: nothing, it voids the coup)
    card: str | None = None  # key_card: the card keyed (its token)

    @property
    def text(self) -> str:
        return self.action.text(self.seat, self.cents, self.card)


@dataclass(frozen=True)
class ApprovalAsked(Notice):
    """The dealer asked for ``action`` at shoe ``shoe``'s coup ``coup``: it waits for a supervisor."""

    shoe: int
    coup: int
    action: Action
    dealer: str | None
    seat: int | None = None
    cents: int | None = None  # new_shoe: what it closes uncollected
    card: str | None = None  # key_card: the card keyed


@dataclass(frozen=True)
class PinDue(Notice):
    """``staff_id``'s badge was read for the pending approval: their PIN is due on the dealer screen."""

    staff_id: str


@dataclass(frozen=True)
class Approved(Notice):
    """``approver`` approved ``action`` asked by ``dealer``: the shell carries it out now."""

    shoe: int
    coup: int
    action: Action
    approver: str
    role: str
    dealer: str | None
    staff_as_of: str = ""  # the staff list the badge and PIN were checked against
    seat: int | None = None
    card: str | None = None  # key_card: the card keyed


@dataclass(frozen=True)
class ApprovalRefused(Notice):
    """A step of the pending approval refused (see :class:`RefusedWhy`); ``staff_id``: whose badge (None: a badge
    not on the list), ``badge``: the badge's UID as read (None: a PIN's verdict or a withdrawal)."""

    shoe: int
    coup: int
    action: Action
    reason: RefusedWhy
    staff_id: str | None = None
    badge: str | None = None
    wrong_pins: int = 0  # wrong_pin, locked_out: the wrong PINs in a row so far
    staff_as_of: str = ""  # the staff list looked in
    seat: int | None = None

    @property
    def text(self) -> str:
        """What the dealer's display says of it."""
        return {
            RefusedWhy.UNKNOWN_BADGE: "UNKNOWN BADGE",
            RefusedWhy.NOT_SUPERVISOR: "NOT A SUPERVISOR",
            RefusedWhy.OWN_CORRECTION: "NOT YOUR OWN",
            RefusedWhy.LOCKED: "SUPERVISOR LOCKED OUT",
            RefusedWhy.WRONG_PIN: f"WRONG PIN ({self.wrong_pins} OF {MAX_WRONG_PINS})",
            RefusedWhy.LOCKED_OUT: "WRONG PIN: LOCKED OUT",
            RefusedWhy.WITHDRAWN: "WITHDRAWN",
            RefusedWhy.NO_PIN: "NO PIN ON THE LIST",
        }[self.reason]


@dataclass
class ApprovalDesk:
    """The one pending approval of a table, the wrong PINs in a row and the members locked out (``as_of``: the
    staff list they count under, the registry's last change)."""

    as_of: str = ""
    pending: Pending | None = None
    wrong_pins: dict[str, int] = field(default_factory=dict)
    locked: set[str] = field(default_factory=set)
    #: What was said of the pending approval's last step ("" or a refusal's text): the dealer screen shows it.
    said: str = ""

    def ask(
        self,
        action: Action,
        shoe: int,
        coup: int,
        dealer: str | None,
        seat: int | None = None,
        cents: int | None = None,
        card: str | None = None,
    ) -> list[Notice]:
        """The dealer asks for ``action`` (``seat``: a rating's; ``cents``: what a new shoe closes uncollected;
        ``card``: the card keyed); asking again for the pending one withdraws it (a card keyed again too: the
        dealer keys it afresh). Another action asked while one is pending is refused (None
        of it is kept): the pending one is decided first."""
        p = self.pending
        if p is not None:
            if p.action is action and p.seat == seat:
                self.pending = None
                why = RefusedWhy.WITHDRAWN
                return [ApprovalRefused(p.shoe, p.coup, p.action, why, p.dealer, None, 0, self.as_of, p.seat)]
            return []
        self.pending = Pending(action, shoe, coup, dealer, seat=seat, cents=cents, card=card)
        self.said = ""
        return [ApprovalAsked(shoe, coup, action, dealer, seat, cents, card)]

    def badge(self, member: Member | None, uid: str, has_pin: bool = True) -> list[Notice]:
        """A badge in at the dealer's position while an approval is pending (``member``: whose it is on the
        list, None: not on it; ``has_pin``: the list holds a PIN hash for them)."""
        p = self.pending
        if p is None:
            return []
        if member is not None and member.staff_id == p.dealer and member.role not in APPROVING_ROLES:
            return []  # the asking dealer's own badge back in the reader (it came out for the supervisor's): no news
        why: RefusedWhy | None = None
        if member is None:
            why = RefusedWhy.UNKNOWN_BADGE
        elif member.staff_id in self.locked:
            why = RefusedWhy.LOCKED
        elif member.role not in APPROVING_ROLES:
            why = RefusedWhy.NOT_SUPERVISOR
        elif member.staff_id == p.dealer:
            why = RefusedWhy.OWN_CORRECTION
        elif not has_pin:
            why = RefusedWhy.NO_PIN
        staff = None if member is None else member.staff_id
        if why is not None:
            refused = ApprovalRefused(p.shoe, p.coup, p.action, why, staff, uid, 0, self.as_of, p.seat)
            self.said = refused.text
            return [refused]
        assert member is not None
        if p.approver == member.staff_id:
            return []  # the reader repeats its cards after a HELLO
        self.pending = replace(p, approver=member.staff_id, role=member.role)
        self.said = ""
        return [PinDue(member.staff_id)]

    def pin_checked(self, staff_id: str, right: bool) -> list[Notice]:
        """The verdict on a PIN entered for ``staff_id`` (a verdict for anyone but the approver is stale)."""
        p = self.pending
        if p is None or p.approver != staff_id:
            return []
        if right:
            self.pending = None
            self.wrong_pins.pop(staff_id, None)
            return [Approved(p.shoe, p.coup, p.action, staff_id, p.role, p.dealer, self.as_of, p.seat, p.card)]
        wrong = self.wrong_pins.get(staff_id, 0) + 1
        if wrong < MAX_WRONG_PINS:
            self.wrong_pins[staff_id] = wrong
            why = RefusedWhy.WRONG_PIN
            refused = ApprovalRefused(p.shoe, p.coup, p.action, why, staff_id, None, wrong, self.as_of, p.seat)
            self.said = refused.text
            return [refused]
        self.wrong_pins.pop(staff_id, None)
        self.locked.add(staff_id)
        self.pending = replace(p, approver=None, role="")  # another supervisor may approve it
        why = RefusedWhy.LOCKED_OUT
        refused = ApprovalRefused(p.shoe, p.coup, p.action, why, staff_id, None, wrong, self.as_of, p.seat)
        self.said = refused.text
        return [refused]

    def view(self) -> ApprovalView | None:
        """The pending approval as the dealer screen shows it (None: nothing pending)."""
        p = self.pending
        if p is None:
            return None
        return ApprovalView(p.action.value, p.text, p.shoe, p.coup, p.dealer, p.approver, self.said)

    def withdraw(self) -> list[Notice]:
        """The pending approval withdrawn (the dealer asked for something else that needs a supervisor first)."""
        p = self.pending
        if p is None:
            return []
        return self.ask(p.action, p.shoe, p.coup, p.dealer, p.seat, p.cents, p.card)

    def drop(self) -> Pending | None:
        """The pending approval ends unasked-for (its coup is over: voided for another reason, a new shoe): no
        record, the request is moot. Returns what was pending."""
        p, self.pending = self.pending, None
        return p

    def new_staff_list(self, as_of: str) -> None:
        """The floor's staff list as of ``as_of`` is kept: a newer one than the desk's starts locks and wrong PINs
        again (a PIN reset changes the list)."""
        if as_of != self.as_of:
            self.locked.clear()
            self.wrong_pins.clear()
            self.as_of = as_of

    def relock(self, staff_ids: Iterable[str]) -> None:
        """After a restart: the members the journal says were locked out under the list kept now."""
        self.locked.update(staff_ids)
