"""controller.game.approvals: the desk that keeps a table's one pending approval, pure: who may approve, the PIN's
verdicts, the lock-out after three wrong PINs, what the dealer screen is told."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from controller.game.approvals import (
    MAX_WRONG_PINS,
    Action,
    ApprovalAsked,
    ApprovalDesk,
    ApprovalRefused,
    Approved,
    PinDue,
    RefusedWhy,
)
from controller.game.notice import Notice
from controller.game.staff import Member

SUP, PIT, DEALER = Member("S1", "supervisor"), Member("P1", "pit_manager"), Member("D2", "dealer")
TECH = Member("T1", "technician")


def asked(desk: ApprovalDesk | None = None, dealer: str | None = "D1") -> ApprovalDesk:
    desk = desk or ApprovalDesk(as_of="list-1")
    assert desk.ask(Action.VOID, 2, 7, dealer) == [ApprovalAsked(2, 7, Action.VOID, dealer)]
    return desk


def whys(notices: Sequence[Notice]) -> list[RefusedWhy]:
    return [n.reason for n in notices if isinstance(n, ApprovalRefused)]


def test_nothing_pending_means_no_badge_or_verdict_is_the_desks() -> None:
    desk = ApprovalDesk()
    assert desk.badge(SUP, "0004A1B2C3D4E5A1") == []
    assert desk.pin_checked("S1", True) == []
    assert desk.view() is None


@pytest.mark.parametrize(
    ("member", "has_pin", "why"),
    [
        (None, True, RefusedWhy.UNKNOWN_BADGE),
        (DEALER, True, RefusedWhy.NOT_SUPERVISOR),
        (TECH, True, RefusedWhy.NOT_SUPERVISOR),
        (Member("D1", "supervisor"), True, RefusedWhy.OWN_CORRECTION),  # the supervisor who deals and asked
        (SUP, False, RefusedWhy.NO_PIN),
    ],
    ids=["unknown", "dealer", "technician", "own", "no-pin"],
)
def test_who_may_not_approve(member: Member | None, has_pin: bool, why: RefusedWhy) -> None:
    desk = asked()
    [refused] = desk.badge(member, "0004A1B2C3D4E5A1", has_pin)
    assert isinstance(refused, ApprovalRefused) and refused.reason is why and refused.staff_as_of == "list-1"
    assert desk.pending is not None and desk.pending.approver is None  # still pending, for another supervisor
    assert desk.view() is not None and desk.view().said == refused.text  # type: ignore[union-attr]


def test_the_asking_dealers_own_badge_back_is_no_news() -> None:
    desk = asked()
    assert desk.badge(Member("D1", "dealer"), "0004A1B2C3D4E501") == []
    assert desk.pending is not None and desk.pending.approver is None and desk.said == ""


@pytest.mark.parametrize("member", [SUP, PIT], ids=["supervisor", "pit manager"])
def test_a_supervisor_or_pit_manager_approves_with_the_right_pin(member: Member) -> None:
    desk = asked()
    assert desk.badge(member, "0004A1B2C3D4E5A1") == [PinDue(member.staff_id)]
    assert desk.badge(member, "0004A1B2C3D4E5A1") == []  # the reader repeats its cards: no news
    assert desk.pin_checked("someone else", True) == []  # a verdict for another is stale
    [approved] = desk.pin_checked(member.staff_id, True)
    assert approved == Approved(2, 7, Action.VOID, member.staff_id, member.role, "D1", "list-1")
    assert desk.pending is None


def test_the_third_wrong_pin_in_a_row_locks_out_until_the_next_list() -> None:
    desk = asked()
    desk.badge(SUP, "B")
    got = [desk.pin_checked("S1", False) for _ in range(MAX_WRONG_PINS)]
    assert [whys(g) for g in got] == [[RefusedWhy.WRONG_PIN]] * (MAX_WRONG_PINS - 1) + [[RefusedWhy.LOCKED_OUT]]
    assert [g[0].wrong_pins for g in got] == list(range(1, MAX_WRONG_PINS + 1))  # type: ignore[attr-defined]
    assert desk.pending is not None and desk.pending.approver is None  # another supervisor may approve
    assert whys(desk.badge(SUP, "B")) == [RefusedWhy.LOCKED]
    desk.new_staff_list("list-1")  # the same list again: still locked
    assert whys(desk.badge(SUP, "B")) == [RefusedWhy.LOCKED]
    desk.new_staff_list("list-2")  # a newer list (a PIN reset): lifted
    assert desk.badge(SUP, "B") == [PinDue("S1")]


def test_a_right_pin_starts_the_count_again() -> None:
    desk = asked()
    desk.badge(SUP, "B")
    desk.pin_checked("S1", False)
    desk.pin_checked("S1", False)
    assert isinstance(desk.pin_checked("S1", True)[0], Approved)
    asked(desk)
    desk.badge(SUP, "B")
    assert whys(desk.pin_checked("S1", False)) == [RefusedWhy.WRONG_PIN]  # one, not three


def test_asking_again_withdraws_and_another_action_waits_its_turn() -> None:
    desk = asked()
    [withdrawn] = desk.ask(Action.VOID, 2, 7, "D1")
    assert isinstance(withdrawn, ApprovalRefused) and withdrawn.reason is RefusedWhy.WITHDRAWN
    assert desk.pending is None
    assert desk.drop() is None


def test_relock_after_a_restart_and_drop_ends_it_unrecorded() -> None:
    desk = ApprovalDesk(as_of="list-1")
    desk.relock(["S1"])
    asked(desk)
    assert whys(desk.badge(SUP, "B")) == [RefusedWhy.LOCKED]
    p = desk.drop()
    assert p is not None and (p.shoe, p.coup) == (2, 7) and desk.pending is None


def test_an_anonymous_players_ref_is_no_cards() -> None:
    from controller.game.seats import ANONYMOUS_PREFIX, anonymous_player

    ref = anonymous_player(1, 2, 3)
    assert ref == "FF00000100020300" and len(ref) == 16 and ref.startswith(ANONYMOUS_PREFIX)
    assert anonymous_player(1, 2, 4) != ref and anonymous_player(2, 2, 3) != ref
    for bad in ((0, 1, 1), (1 << 24, 1, 1), (1, 1 << 16, 1), (1, 1, 0)):
        with pytest.raises(ValueError, match="no anonymous player"):
            anonymous_player(*bad)


def test_a_rating_is_asked_for_a_seat_and_withdrawn_for_the_same_seat_only() -> None:
    desk = ApprovalDesk(as_of="list-1")
    [asked_] = desk.ask(Action.RATE_UNCARDED, 1, 5, None, seat=3)
    assert isinstance(asked_, ApprovalAsked) and asked_.seat == 3
    assert desk.view() is not None and desk.view().text == "RATE SEAT 3"  # type: ignore[union-attr]
    assert desk.ask(Action.RATE_UNCARDED, 1, 5, None, seat=4) == []  # another seat waits its turn
    desk.badge(SUP, "B")
    [approved] = desk.pin_checked("S1", True)
    assert isinstance(approved, Approved) and approved.seat == 3 and approved.action is Action.RATE_UNCARDED
