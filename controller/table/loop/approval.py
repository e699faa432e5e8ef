"""The table loop's supervisor approvals: the pure desk (:mod:`controller.game.approvals`) wired to the shell.

What the loop hands here, all on its own thread:

* VOID held, on the panel or the shoe's own button (:meth:`Approvals.void_held`, from the loop's one way in):
  when the table asks for approvals (``[table] supervisor_approves``, a dealer screen, and a staff list with
  someone on it who can approve) and a void would void something, the press asks instead of voiding: an
  ``approval`` input (step ``ask``, acknowledged to the shoe as its press) with its ``approval_asked`` record.
  VOID held again withdraws it.
* NEW SHOE pressed (:meth:`Approvals.new_shoe_pressed`, the same way in): a new shoe voids the coup in progress
  and closes every commission box with what it still owes uncollected; when it would do either and the table
  asks for that (``void``, ``close_box``), the press asks (action ``new_shoe``, with what it would leave
  uncollected) and NEW SHOE again withdraws it.
* A badge at the dealer's position while an approval is pending (:meth:`Approvals.badge`): the approval's, not
  a dealer swap (the ``dealer_card`` input carries its ``approval_refused`` record, or none when the PIN is due).
* A PIN from the dealer screen (:meth:`Approvals.pin_entered`): handed to the :class:`PinChecker` with the
  approver's hash; the verdict comes back through the inbox (:meth:`Approvals.verdict`): an ``approval`` input
  (step ``pin``, right or wrong, never the PIN) with its ``approval`` record and then the action itself (a
  ``void`` input, the coup's record), or its ``approval_refused`` record.
* The dealer screen's RATE for a seat (:meth:`Approvals.rate`): the uncarded player there is rated as an
  anonymous player of the seat once a supervisor approves (the loop then puts the rating's virtual card in the
  seat's reader: a ``seat_card`` input, :func:`~controller.game.seats.anonymous_player`). Refused in one line when
  the seat is not the table's, has a carded player, no one on the list may approve, or another approval waits.
* The dealer screen's card keyed for an unreadable coup card (:meth:`Approvals.key_card`): the misread's
  correction. The card takes the unread card's place once a supervisor approves (the loop then applies a
  ``card_keyed`` input, a replayed one: :class:`~controller.game.table.CardKeyed`). Refused in one line when the
  coup is not halted by an unreadable card alone, no one on the list may approve, or another approval waits.
* After every table input (:meth:`Approvals.moot`): a void whose coup is over (declared, or voided another way, a
  new shoe), a card keyed whose coup is no longer halted by its unreadable card, a new shoe that would now
  neither void a coup nor close a box uncollected (the boxes were taken meanwhile), or a rating whose seat a
  carded player took, ends without a record; the log says it.

While an approval is pending the displays show CALL SUPERVISOR, then SUPERVISOR PIN (:meth:`Approvals.alarm`),
and the dealer screen its panel (:meth:`Approvals.view`, on the money line). A PIN refused before it is checked
(none is due, one is being checked, no checker) is one log line and a count (:attr:`Approvals.pins_refused`).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from controller.game.approvals import (
    Action,
    Approvable,
    ApprovalAsked,
    ApprovalDesk,
    ApprovalRefused,
    Approved,
    Pending,
    PinDue,
)
from controller.game.notice import Notice
from controller.game.records import approval_input
from controller.game.staff import badge_key
from controller.game.table import Alarm, AlarmCleared, AlarmRaised, TableState
from controller.game.wagers import ApprovalView
from controller.table.loop.inbox import LoopEvent, PinVerdict
from controller.table.pin_check import PinChecker
from controller.table.staff_list import StaffListKeeper

log = logging.getLogger(__name__)

__all__ = ["Approvals"]

#: What asks a supervisor by default (``[table] supervisor_approves``).
DEFAULT_APPROVE = frozenset(Approvable)
#: The dealer screen's words for a request refused (short: the screen's header has room for about 36 letters).
_NO_APPROVER = "no supervisor on the list"
_ANOTHER_WAITS = "another approval waits"


class ApprovalMetrics(Protocol):
    """What the approvals report to the health metrics (controller.metrics.TableMetrics)."""

    def approval(self, action: str, outcome: str) -> None: ...

    def approval_request_refused(self, what: str) -> None: ...


class Approvals:
    """The loop's approvals: the desk, the PIN checker, and what is said and counted."""

    def __init__(
        self,
        staff: StaffListKeeper,
        put: Callable[[LoopEvent], None],
        *,
        actions: Iterable[Approvable] = DEFAULT_APPROVE,
        checker: PinChecker | None = None,
        locked: Iterable[str] = (),
        metrics: ApprovalMetrics | None = None,
    ) -> None:
        self.staff = staff
        self.metrics = metrics
        self.actions = frozenset(actions)
        self.checker = checker if checker is not None else PinChecker()
        self.put = put
        self.desk = ApprovalDesk(as_of=staff.roster.as_of)
        self.desk.relock(locked)
        #: Requests from the dealer screen refused before they asked, by what (the metrics' words: ``pin_none_due``,
        #: ``pin_busy``, ``rate``, ``key``).
        self.requests_refused: Counter[str] = Counter()
        #: What the table last refused of the dealer screen's, in the screen's words, and how many so far (the
        #: money view carries both: the screen says each refusal once).
        self.refusal = ""
        self.refusals = 0
        self._shown: Alarm | None = None

    # -- what the loop asks ------------------------------------------------------------------------------

    def needed(self, action: Approvable, state: TableState) -> bool:
        """Whether ``action`` waits for a supervisor now: configured, the table has a dealer screen (a bet-spot
        reader: the PIN is entered there) and its staff list someone who can approve."""
        return action in self.actions and state.money is not None and self.staff.approvers() > 0

    def new_shoe_needs(self, state: TableState) -> int | None:
        """What NEW SHOE now needs a supervisor for: None (nothing: it starts the shoe), else what it would close
        uncollected in the commission boxes (cents; 0: it voids the coup in progress and no box owes)."""
        uncollected = state.uncollected_cents if self.needed(Approvable.CLOSE_BOX, state) else 0
        if uncollected or (state.voidable and self.needed(Approvable.VOID, state)):
            return uncollected
        return None

    def new_shoe_pressed(
        self, state: TableState, dealer: str | None, facts: dict[str, Any]
    ) -> tuple[dict[str, Any], list[Notice]] | None:
        """NEW SHOE pressed (on the panel or the shoe): the ``approval`` input and notices when it asks (or
        withdraws); None: the press starts the new shoe."""
        pending = self.desk.pending
        cents = self.new_shoe_needs(state)
        if (pending is None or pending.action is not Action.NEW_SHOE) and cents is None:
            return None  # the press starts the new shoe (another approval pending lapses with its coup)
        notices = self._instead(pending, Action.NEW_SHOE)
        notices += self.desk.ask(Action.NEW_SHOE, state.shoe_number, state.coup_number, dealer, cents=cents)
        if pending is None or pending.action is not Action.NEW_SHOE:
            log.info(
                "NEW SHOE asked at shoe %d coup %d (uncollected %d cents): waiting for a supervisor",
                state.shoe_number,
                state.coup_number,
                cents or 0,
            )
        else:
            log.info("NEW SHOE withdrawn at shoe %d", pending.shoe)
        return approval_input("ask", Action.NEW_SHOE, **facts), self._counted(notices)

    def void_held(
        self, state: TableState, dealer: str | None, facts: dict[str, Any]
    ) -> tuple[dict[str, Any], list[Notice]] | None:
        """VOID held (on the panel or the shoe: ``facts`` are the press's ``source`` and ``seq``): the ``approval``
        input and notices when it asks (or withdraws); None: the press voids."""
        pending = self.desk.pending
        needed = state.voidable and self.needed(Approvable.VOID, state)
        if (pending is None or pending.action is not Action.VOID) and not needed:
            return None  # the press voids (another approval pending lapses with its coup)
        notices = self._instead(pending, Action.VOID)
        notices += self.desk.ask(Action.VOID, state.shoe_number, state.coup_number, dealer)
        if pending is None or pending.action is not Action.VOID:
            log.info("VOID asked at shoe %d coup %d: waiting for a supervisor", state.shoe_number, state.coup_number)
        else:
            log.info("VOID withdrawn at shoe %d coup %d", pending.shoe, pending.coup)
        return approval_input("ask", Action.VOID, **facts), self._counted(notices)

    def _counted(self, notices: list[Notice]) -> list[Notice]:
        """Each step among ``notices`` to the metrics (``shoe_approval_steps``); the notices as they were."""
        if self.metrics is not None:
            for n in notices:
                if isinstance(n, ApprovalAsked):
                    self.metrics.approval(n.action.value, "asked")
                elif isinstance(n, Approved):
                    self.metrics.approval(n.action.value, "approved")
                elif isinstance(n, ApprovalRefused):
                    self.metrics.approval(n.action.value, n.reason.value)
        return notices

    @property
    def pins_refused(self) -> Counter[str]:
        """PINs refused before a check, by why: ``none_due``, ``busy``."""
        return Counter({w[4:]: n for w, n in self.requests_refused.items() if w.startswith("pin_")})

    @property
    def rates_refused(self) -> int:
        return self.requests_refused["rate"]

    @property
    def keys_refused(self) -> int:
        return self.requests_refused["key"]

    def _refused_request(self, what: str, line: str, said: str) -> None:
        """A request from the dealer screen refused before it asked: ``line`` for the log, ``said`` for the screen;
        counted here and in the metrics."""
        log.warning("%s", line)
        self.requests_refused[what] += 1
        if self.metrics is not None:
            self.metrics.approval_request_refused(what)
        self.refusal = said.upper()[:120]
        self.refusals += 1

    def _instead(self, pending: Pending | None, action: Action) -> list[Notice]:
        """A press that needs a supervisor while another action waits for one: that one is withdrawn (its
        ``approval_refused`` record), so that no approval pending is a way round another."""
        if pending is None or pending.action is action:
            return []
        log.info("approval of %s withdrawn: %s asked instead", pending.action.value, action.value)
        return self.desk.withdraw()

    def badge(self, uid: str, present: bool) -> list[Notice] | None:
        """A badge at the dealer's position: the approval's notices while one is pending (an ``[]`` for a badge
        out, or the approver's again), None when none is (the badge is the dealer's)."""
        if self.desk.pending is None:
            return None
        if not present:
            return []  # the supervisor's badge (or the dealer's) out: nothing to decide
        member = self.staff.roster.find(uid)
        has_pin = member is not None and self.staff.pin_hash(member.staff_id) is not None
        try:
            shown = badge_key(uid)
        except ValueError:
            shown = uid
        notices = self.desk.badge(member, shown, has_pin)
        for n in notices:
            if isinstance(n, ApprovalRefused):
                log.warning("approval: badge %s refused: %s", shown, n.reason.value)
            elif isinstance(n, PinDue):
                log.info("approval: %s's badge read; the PIN is due", n.staff_id)
        return self._counted(notices)

    def pin_entered(self, pin: str) -> None:
        """A PIN from the dealer screen: checked on the worker thread, or refused (one line, counted)."""
        p = self.desk.pending
        if p is None or p.approver is None:
            self._refuse_pin("none_due", "no approval waits for a PIN", "no PIN due")
            return
        pin_hash = self.staff.pin_hash(p.approver)
        if pin_hash is None:  # the list changed under the approval: no PIN is on it now
            self._refuse_pin("none_due", f"no PIN on the staff list for {p.approver}", "no PIN on the list")
            return
        if not self.checker.submit(p.approver, pin_hash, pin, self._checked):
            self._refuse_pin("busy", "a PIN is being checked", "checking the last: wait")

    def _checked(self, staff_id: str, right: bool) -> None:
        """On the checker's thread: the verdict into the loop's inbox."""
        self.put(PinVerdict(staff_id, right))

    def _refuse_pin(self, why: str, line: str, said: str) -> None:
        """A PIN refused before a check: ``line`` for the log, ``said`` for the dealer screen."""
        self._refused_request(f"pin_{why}", f"PIN refused: {line}", f"PIN refused: {said}")

    def verdict(self, event: PinVerdict) -> tuple[dict[str, Any], list[Notice]] | None:
        """The PIN checker's verdict: the ``approval`` input and its notices (an :class:`Approved` among them:
        the loop carries the action out after it), or None for a verdict no approval waits for now."""
        p = self.desk.pending
        if p is None or p.approver != event.staff_id:
            log.info("a PIN verdict for %s came after its approval ended: dropped", event.staff_id)
            return None
        notices = self.desk.pin_checked(event.staff_id, event.right)
        for n in notices:
            if isinstance(n, Approved):
                log.info("approval: %s approved %s at shoe %d coup %d", n.approver, n.action.value, n.shoe, n.coup)
            elif isinstance(n, ApprovalRefused):
                log.warning("approval: %s's PIN refused: %s", n.staff_id, n.reason.value)
        return approval_input("pin", p.action, event.staff_id, event.right), self._counted(notices)

    def moot(self, state: TableState) -> None:
        """After a table input: a void whose coup is over (or with nothing left to void), or a rating whose seat a
        carded player took meanwhile, ends unrecorded."""
        p = self.desk.pending
        if p is None:
            return
        if p.action is Action.VOID:
            over = (state.shoe_number, state.coup_number) != (p.shoe, p.coup) or not state.voidable
            why = "its coup is over"
        elif p.action is Action.KEY_CARD:
            over = (state.shoe_number, state.coup_number) != (p.shoe, p.coup) or not state.keyable
            why = "its coup is no longer halted by an unreadable card"
        elif p.action is Action.NEW_SHOE:
            over = state.shoe_number != p.shoe or self.new_shoe_needs(state) is None
            why = "the shoe is new, or it would void no coup and leave no box uncollected now"
        else:
            over = state.seats is not None and p.seat in state.seats.players()
            why = f"a carded player sat down at seat {p.seat}"
        if over:
            self.desk.drop()
            log.info("approval of %s at shoe %d coup %d no longer needed: %s", p.action.value, p.shoe, p.coup, why)

    def rate(self, state: TableState, dealer: str | None, seat: int) -> tuple[dict[str, Any], list[Notice]] | None:
        """The dealer screen's RATE for ``seat``: the ``approval`` input and notices when it asks; None (one line,
        counted in :attr:`rates_refused`) when the table cannot rate that seat now."""
        why = said = None
        if state.seats is None or not 1 <= seat <= state.seat_count:
            why, said = f"seat {seat} is not on this table", f"no seat {seat}"
        elif seat in state.seats.players():
            why, said = f"seat {seat} has a carded player: the card rates them", f"seat {seat} is carded"
        elif self.staff.approvers() == 0:
            why, said = "no supervisor or pit manager with a badge and PIN is on the staff list", _NO_APPROVER
        elif self.desk.pending is not None:
            why, said = "another approval is waiting: decide it first", _ANOTHER_WAITS
        if why is not None:
            self._refused_request("rate", f"rating refused: {why}", f"rating refused: {said}")
            return None
        notices = self.desk.ask(Action.RATE_UNCARDED, state.shoe_number, state.coup_number, dealer, seat)
        log.info("rating of seat %d's uncarded player asked: waiting for a supervisor", seat)
        return approval_input("ask", Action.RATE_UNCARDED, seat=seat), self._counted(notices)

    def keyable(self, state: TableState) -> bool:
        """Whether the dealer screen may key the unreadable coup card now (KEY CARD is offered): the coup is halted
        by it alone, someone on the list may approve, and no other approval waits."""
        p = self.desk.pending
        return (
            state.keyable
            and state.money is not None
            and self.staff.approvers() > 0
            and (p is None or p.action is Action.KEY_CARD)
        )

    def key_card(self, state: TableState, dealer: str | None, card: str) -> tuple[dict[str, Any], list[Notice]] | None:
        """The dealer screen's ``card`` keyed for the unreadable coup card: the ``approval`` input and notices when
        it asks; None (one line, counted in :attr:`keys_refused`) when the table cannot take it now."""
        why = said = None
        if not state.keyable:
            why, said = "the coup is not halted by an unreadable card (alone)", "no card to key"
        elif self.staff.approvers() == 0 or state.money is None:
            why = "no supervisor or pit manager with a badge and PIN is on the staff list (or no dealer screen)"
            said = _NO_APPROVER
        elif self.desk.pending is not None and self.desk.pending.action is not Action.KEY_CARD:
            why, said = "another approval is waiting: decide it first", _ANOTHER_WAITS
        if why is not None:
            self._refused_request("key", f"card keyed refused: {why}", f"card refused: {said}")
            return None
        pending = self.desk.pending
        if pending is not None and pending.card == card:
            log.info("card %s keyed again: it waits for a supervisor already", card)
            return None
        notices = self.desk.withdraw()  # keyed afresh: the first card keyed is withdrawn (nothing when none waits)
        notices += self.desk.ask(Action.KEY_CARD, state.shoe_number, state.coup_number, dealer, card=card)
        log.info("card %s keyed for the unreadable card at shoe %d coup %d", card, state.shoe_number, state.coup_number)
        return approval_input("ask", Action.KEY_CARD, card=card), self._counted(notices)

    def new_staff_list(self) -> None:
        """The loop kept a new staff list: the desk counts under it (locks and wrong PINs start again)."""
        self.desk.new_staff_list(self.staff.roster.as_of)

    # -- what the loop shows -----------------------------------------------------------------------------

    def alarm(self) -> Alarm | None:
        """The standing alarm: CALL SUPERVISOR while a badge is due, SUPERVISOR PIN while the PIN is."""
        p = self.desk.pending
        if p is None:
            return None
        return Alarm.SUPERVISOR_CALLED if p.approver is None else Alarm.SUPERVISOR_PIN

    def alarm_changes(self) -> list[Notice]:
        """The raised and cleared notices since the last call (the buzzer sounds once for each raised)."""
        now = self.alarm()
        if now is self._shown:
            return []
        out: list[Notice] = []
        if self._shown is not None:
            out.append(AlarmCleared(self._shown))
        if now is not None:
            p = self.desk.pending
            out.append(AlarmRaised(now, self.desk.said or ("" if p is None else p.text)))
        self._shown = now
        return out

    def view(self) -> ApprovalView | None:
        return self.desk.view()
