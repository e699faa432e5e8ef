"""The count detector (floor/counting.py), pure: its test is valid under the null (the average betting score over
every ordering of a seat's stakes is at most 1, merged histograms included), flat bettors never score, a
counter is caught once per seat session and wager, and its state survives JSON between any two coups."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import floor.counting as counting
from floor.counting import LAMBDAS, CountState, Detector, Stream

D7 = "dragon_7"


def edges_of(positive: bool, others: float = -0.05) -> dict[str, float]:
    return {"banker": -0.0106, "player": -0.0124, D7: 0.02 if positive else -0.076, "panda_8": others}


def play(
    detector: Detector, signs: Sequence[bool], stakes: Sequence[dict[str, int]], seat: int = 3
) -> tuple[CountState, list[counting.Finding]]:
    state, found = CountState(), []
    for i, (sign, bets) in enumerate(zip(signs, stakes, strict=True)):
        found += detector.coup(state, 1, i + 1, 100 + i, edges_of(sign), {seat: bets})
    return state, found


def final_score(stakes: Sequence[int], signs: Sequence[bool]) -> float:
    s = Stream()
    for i, (stake, sign) in enumerate(zip(stakes, signs, strict=True)):
        Detector(threshold=float("inf")).look(
            s, 1, D7, 0.02 if sign else -0.05, stake, 1, i + 1, i, counting.Session(1, 1, 0)
        )
    return s.score()


@settings(max_examples=60, deadline=None)
@given(
    stakes=st.lists(st.sampled_from([0, 500, 1000, 2500, 5000]), min_size=2, max_size=6),
    signs=st.data(),
)
def test_under_the_null_the_average_score_over_every_ordering_of_the_stakes_is_at_most_one(
    stakes: list[int], signs: st.DataObject
) -> None:
    """Exchangeable stakes, independent of the edge: the betting score is a (super)martingale, so its mean over
    all orderings is at most 1 (this is what Ville's inequality, and so the false-alert rate, rests on)."""
    sign = signs.draw(st.lists(st.booleans(), min_size=len(stakes), max_size=len(stakes)))
    orders = list(itertools.permutations(stakes))
    mean = sum(final_score(o, sign) for o in orders) / len(orders)
    assert mean <= 1.0 + 1e-9


def test_merging_the_histogram_keeps_the_test_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(counting, "MAX_DISTINCT", 2)
    signs = [False, False, True, False, True, True]
    stakes = [100, 300, 700, 200, 900, 500]
    orders = list(itertools.permutations(stakes))
    assert sum(final_score(o, signs) for o in orders) / len(orders) <= 1.0 + 1e-9
    s = Stream()
    for x in stakes:
        s.add(x)
    assert len(s.hist) == 2 and sum(c for _, c in s.hist) == len(stakes)


def test_the_score_reaches_the_null_s_bound_only_rarely_with_random_stakes() -> None:
    """A random bettor over 2,000 sessions of 80 coups with 8 positive-edge coups late: the score reaches 20
    (Ville: at most 1 in 20) far less often than 1 in 20, and never the threshold."""
    rng = random.Random(7)
    signs = [False] * 72 + [True] * 8
    over, top = 0, 0.0
    for _ in range(2000):
        stakes = [rng.choice((0, 500, 1000, 2500, 5000)) for _ in signs]
        score = final_score(stakes, signs)
        over += score >= 20
        top = max(top, score)
    assert over / 2000 <= 1 / 20 and top < counting.DEFAULT_THRESHOLD


@settings(max_examples=40, deadline=None)
@given(signs=st.lists(st.booleans(), min_size=1, max_size=120), stake=st.integers(1, 10**7))
def test_a_flat_bettor_never_scores_above_one(signs: list[bool], stake: int) -> None:
    state, found = play(Detector(threshold=1.0 + 1e-12), signs, [{D7: stake, "banker": 2500}] * len(signs))
    assert found == []
    assert all(s.score() <= 1.0 + 1e-12 for s in state.sessions[3].streams.values())


def test_a_10x_counter_is_caught_at_its_fourth_positive_coup_once_per_session_and_wager() -> None:
    signs = [False] * 60 + [True] * 8
    stakes = [{"banker": 2500, D7: 5000 if s else 500} for s in signs]
    _, found = play(Detector(), signs, stakes)
    (f,) = found
    assert (f.seat, f.bet, f.coup, f.positive, f.hits) == (3, D7, 64, 4, 4)
    assert f.score >= counting.DEFAULT_THRESHOLD and f.p_bound == pytest.approx(1 / f.score)
    assert f.key == "3:100:dragon_7" and (f.session_shoe, f.session_coup, f.session_seq) == (1, 1, 100)
    assert (f.pos_stake, f.pos_max, f.non_stake, f.non_max) == (4 * 5000, 5000, 60 * 500, 500)
    extra = f.extra()
    assert extra["stake_positive"] == {"coups": 4, "cents": 20000, "max": 5000}
    assert extra["stake_non_positive"] == {"coups": 60, "cents": 30000, "max": 500}
    assert [e["coup"] for e in extra["evidence"]] == [61, 62, 63, 64] and all(e["hit"] for e in extra["evidence"])
    assert json.loads(json.dumps(extra)) == extra
    # three hits are not enough: the best any rank test can say of 3 coups in 63 is 1 in C(63, 3) = 39,711
    _, early = play(Detector(), signs[:63], stakes[:63])
    assert early == []


def test_a_seat_betting_the_wager_only_when_positive_is_caught() -> None:
    signs = [False] * 50 + [True] * 6
    stakes = [{"banker": 2500, D7: 1000} if s else {"banker": 2500} for s in signs]
    _, found = play(Detector(), signs, stakes)
    assert [(f.bet, f.positive) for f in found] == [(D7, 4)]


def test_a_counter_raising_less_than_its_own_spread_is_not_caught_in_the_shoe() -> None:
    rng = random.Random(3)
    signs = [False] * 60 + [True] * 8
    stakes = [{"banker": 2500, D7: rng.choice((500, 1000, 2500, 5000)) * (2 if s else 1)} for s in signs]
    _, found = play(Detector(), signs, stakes)
    assert found == []


def test_a_seat_that_leaves_ends_its_session_and_a_new_one_is_a_new_key() -> None:
    detector = Detector()
    state = CountState()
    found: list[counting.Finding] = []
    seq = 0
    for session in range(2):
        for i in range(68):
            seq += 1
            positive = i >= 60
            bets = {"banker": 2500, D7: 5000 if positive else 500}
            found += detector.coup(state, 1 + session, i + 1, seq, edges_of(positive), {3: bets})
        for i in range(3):  # three coups with nothing on the layout: the seat has left
            seq += 1
            found += detector.coup(state, 1 + session, 69 + i, seq, edges_of(False), {})
        assert 3 not in state.sessions
    assert [f.key for f in found] == ["3:1:dragon_7", "3:72:dragon_7"]


def test_two_idle_coups_keep_the_session() -> None:
    detector, state = Detector(), CountState()
    detector.coup(state, 1, 1, 1, edges_of(False), {2: {"banker": 2500}})
    detector.coup(state, 1, 2, 2, edges_of(False), {})
    detector.coup(state, 1, 3, 3, edges_of(False), {})
    detector.coup(state, 1, 4, 4, edges_of(False), {2: {"banker": 2500}})
    assert state.sessions[2].seq == 1 and state.sessions[2].streams[D7].played == 2


def test_seats_off_the_layout_and_empty_wagers_are_not_sessions() -> None:
    detector, state = Detector(), CountState()
    detector.coup(state, 1, 1, 1, edges_of(True), {0: {D7: 500}, 15: {D7: 500}, 4: {D7: 0}})
    assert state.sessions == {}


@settings(max_examples=25, deadline=None)
@given(split=st.integers(0, 70), seed=st.integers(0, 10**6))
def test_state_through_json_between_any_two_coups_changes_nothing(split: int, seed: int) -> None:
    rng = random.Random(seed)
    signs = [rng.random() < 0.15 for _ in range(70)]
    stakes = [{"banker": 2500, D7: 5000 if s and rng.random() < 0.8 else rng.choice((500, 1000))} for s in signs]
    detector = Detector()
    whole, found_whole = play(detector, signs, stakes)
    state, found = CountState(), []
    for i, (sign, bets) in enumerate(zip(signs, stakes, strict=True)):
        if i == split:
            state = CountState.from_json(json.loads(json.dumps(state.to_json())))
        found += detector.coup(state, 1, i + 1, 100 + i, edges_of(sign), {3: bets})
    assert state.to_json() == whole.to_json() and found == found_whole


def test_the_state_stays_bounded_however_long_a_seat_plays() -> None:
    rng = random.Random(1)
    detector, state = Detector(), CountState()
    for i in range(3000):
        seats = {seat: {D7: rng.randint(1, 10**6), "banker": rng.randint(1, 10**6)} for seat in range(1, 15)}
        detector.coup(state, 1 + i // 80, i % 80 + 1, i, edges_of(rng.random() < 0.2, others=0.01), seats)
    for session in state.sessions.values():
        for s in session.streams.values():
            assert len(s.hist) <= counting.MAX_DISTINCT and len(s.coups) <= counting.KEPT_COUPS
    assert len(json.dumps(state.to_json())) < 14 * 4 * 4000
    assert len(LAMBDAS) == len(state.sessions[1].streams[D7].log_scores)
