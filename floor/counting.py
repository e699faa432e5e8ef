"""Betting with the count: a seat whose stakes on a wager rise when that wager's live exact edge is positive.

Deep in some shoes a side wager (Dragon 7, Panda 8, the pairs, the Dragon Bonus, Tie) turns in the
player's favour (controller/game/edges.py prices every offered wager at every coup's betting time). An
advantage player (or a player in league with a preset shoe) stakes more on it then. This module is the pure
detector (no I/O, no clock): fed, coup by coup, every offered wager's exact edge at the betting time and each
seat's stakes, it tests per **seat session** and **wager** whether the stakes depend on the edge's sign, and
says when the evidence is beyond what chance explains (:class:`Finding`). floor/counting_watch.py feeds it
from the archive's records.

**The test** (docs/floor.md, "Betting with the count"). Under the null hypothesis a seat's stakes on a wager
are exchangeable over the coups it plays and independent of the shoe's cards (flat bettors, random bettors,
a seat betting a hunch). Then at each coup the *sequential rank* of its stake (how many of the session's
stakes so far, itself included, are at least as large) is uniform on 1..t and independent of the earlier
ranks (ties counted as larger, which only makes a rank larger: conservative). At each coup where the wager's
edge is positive, with ``m`` earlier positive-edge coups in the session, the stake is a **hit** when its
rank is at most ``m + 1`` (it is as large as the largest stakes, which for a counter are the earlier
positive-edge ones); under the null a hit has probability at most ``(m + 1) / t``. Each such coup multiplies
a betting score by ``1 - lam + lam * t / (m + 1)`` on a hit and ``1 - lam`` on a miss: a nonnegative
martingale under the null (a likelihood ratio), for each of the fixed betting fractions ``lam`` in
:data:`LAMBDAS`; their average is too. By Ville's inequality the chance that the average *ever* reaches
``threshold``, however many coups are looked at, is at most ``1 / threshold``: the test stays valid at every
look. An alert is raised when it does, once per seat session and wager.

A flat bettor's stakes all tie (rank ``t``): never a hit, the score only falls. A counter betting its base
at non-positive edge and more at positive edge hits at every positive-edge coup: the score grows by about
``t / (m + 1)`` each time. What it cannot see: a shoe whose wager never turns positive (nothing to bet
with), a counter whose raises are no larger than its ordinary spread of stakes, a seat that sits down only
when the edge is positive (wonging: its session starts at a positive edge, so it has nothing to compare), and
it assumes the null's exchangeability: a seat whose stakes climb through every shoe (a progression) does bet
more late in the shoe, when the side wagers' edges turn, and may be flagged (the evidence shows its stakes).

State (:class:`CountState`) is JSON-serialisable and bounded: per seat in session, per wager, the stakes'
histogram (at most :data:`MAX_DISTINCT` distinct stakes; beyond that neighbouring stakes are merged *up*,
which can only make ranks larger, so the test stays conservative), the scores, and the last
:data:`KEPT_COUPS` positive-edge coups as evidence.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: The betting fractions whose likelihood-ratio martingales are averaged (a bold one catches a pure counter in
#: the fewest coups, a timid one survives a counter's occasional miss).
LAMBDAS: tuple[float, ...] = (0.75, 0.95, 0.99)
#: The average betting score at which a seat session's wager is alerted: by Ville's inequality a seat whose
#: stakes do not depend on the edge reaches it with probability at most 1 / DEFAULT_THRESHOLD per seat session
#: and wager, however long it plays (docs/floor.md gives the floor-wide rate).
DEFAULT_THRESHOLD = 100_000.0
#: A seat with no wager at this many coups running has left: its session ends (the table's ``leave_after_coups``).
DEFAULT_LEAVE_AFTER = 3
#: Most distinct stakes kept per seat session and wager (more are merged upward: conservative).
MAX_DISTINCT = 32
#: Positive-edge coups kept per seat session and wager, as the alert's evidence (the newest).
KEPT_COUPS = 16
#: Most seats followed per table (the largest layout has 14; a seat number beyond is refused).
MAX_SEATS = 14
#: A wager's edge must exceed this to count as positive (player EV per unit staked).
POSITIVE = 0.0


def _stake_of(entry: list[int]) -> int:
    return entry[0]


@dataclass(slots=True)
class Stream:
    """One seat session's evidence on one wager."""

    hist: list[list[int]] = field(default_factory=list)  # [stake cents, coups] ascending by stake
    played: int = 0  # coups of the session counted (the seat had a wager on some spot)
    positive: int = 0  # of them, coups where this wager's edge was positive
    hits: int = 0
    log_scores: list[float] = field(default_factory=lambda: [0.0] * len(LAMBDAS))
    pos_stake: int = 0  # cents staked at positive edge
    pos_max: int = 0
    non_stake: int = 0  # cents staked at non-positive edge
    non_max: int = 0
    coups: list[list[Any]] = field(default_factory=list)  # [shoe, coup, ev, stake, rank, t, hit] the newest
    alerted: bool = False

    def score(self) -> float:
        """The average of the martingales (the betting score)."""
        top = max(self.log_scores)
        return math.exp(top) * sum(math.exp(x - top) for x in self.log_scores) / len(self.log_scores)

    def add(self, stake: int) -> int:
        """Count ``stake`` in the histogram; its sequential rank (stakes so far at least as large, itself in)."""
        hist = self.hist
        if hist and hist[-1][0] == stake:  # the usual case: the seat's stake repeats (or is its largest)
            hist[-1][1] += 1
            rank = hist[-1][1]
        else:
            i = bisect.bisect_left(hist, stake, key=_stake_of)
            if i < len(hist) and hist[i][0] == stake:
                hist[i][1] += 1
            else:
                hist.insert(i, [stake, 1])
            rank = sum(h[1] for h in hist[i:])
        if len(hist) > MAX_DISTINCT:
            self._merge()
        return rank

    def _merge(self) -> None:
        """Merge the two nearest stakes (by ratio) into the larger: ranks can only grow (conservative)."""
        best, at = math.inf, 0
        for j in range(len(self.hist) - 1):
            lo, hi = self.hist[j][0], self.hist[j + 1][0]
            ratio = hi / lo if lo > 0 else math.inf
            if ratio < best:
                best, at = ratio, j
        self.hist[at + 1][1] += self.hist[at][1]
        del self.hist[at]

    def to_json(self) -> list[Any]:
        """The fields in order, as one JSON array (a table's state holds some 100 of these)."""
        return [getattr(self, name) for name in _STREAM_FIELDS]

    @classmethod
    def from_json(cls, data: Sequence[Any]) -> Stream:
        if len(data) != len(_STREAM_FIELDS):
            raise ValueError("a stream of the count's state has the wrong number of fields")
        return cls(*data)


_STREAM_FIELDS = tuple(Stream.__dataclass_fields__)


@dataclass
class Session:
    """A seat from its first wager to the coup it is judged to have left."""

    shoe: int  # where it started
    coup: int
    seq: int  # the record (seq) of its first coup: with the seat, the session's name
    idle: int = 0  # coups running with no wager
    streams: dict[str, Stream] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "shoe": self.shoe,
            "coup": self.coup,
            "seq": self.seq,
            "idle": self.idle,
            "streams": {bet: s.to_json() for bet, s in self.streams.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Session:
        streams = {str(bet): Stream.from_json(s) for bet, s in data["streams"].items()}
        return cls(int(data["shoe"]), int(data["coup"]), int(data["seq"]), int(data["idle"]), streams)


@dataclass(frozen=True)
class Finding:
    """A seat session's wager whose betting score reached the threshold: what the alert says."""

    seat: int
    bet: str
    shoe: int
    coup: int
    seq: int  # the coup's record
    session_shoe: int
    session_coup: int
    session_seq: int
    score: float
    threshold: float
    played: int
    positive: int
    hits: int
    pos_stake: int
    pos_max: int
    non_stake: int
    non_max: int
    coups: tuple[tuple[Any, ...], ...]

    @property
    def key(self) -> str:
        """Once per seat session and wager."""
        return f"{self.seat}:{self.session_seq}:{self.bet}"

    @property
    def p_bound(self) -> float:
        """Ville's bound: the chance a seat whose stakes ignore the edge ever scores this high."""
        return min(1.0, 1.0 / self.score)

    def pos_mean(self) -> float:
        return self.pos_stake / self.positive if self.positive else 0.0

    def non_mean(self) -> float:
        non = self.played - self.positive
        return self.non_stake / non if non else 0.0

    def extra(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "bet": self.bet,
            "shoe": self.shoe,
            "coup": self.coup,
            "session": {"shoe": self.session_shoe, "coup": self.session_coup, "seq": self.session_seq},
            "coups_played": self.played,
            "positive_coups": self.positive,
            "hits": self.hits,
            "stake_positive": {"coups": self.positive, "cents": self.pos_stake, "max": self.pos_max},
            "stake_non_positive": {
                "coups": self.played - self.positive,
                "cents": self.non_stake,
                "max": self.non_max,
            },
            "statistic": "sequential-rank betting score",
            "score": self.score,
            "threshold": self.threshold,
            "p_bound": self.p_bound,
            "evidence": [
                {"shoe": c[0], "coup": c[1], "ev": c[2], "stake": c[3], "rank": c[4], "of": c[5], "hit": c[6]}
                for c in self.coups
            ],
        }


@dataclass
class CountState:
    """One table's seats in session (JSON-serialisable, bounded by :data:`MAX_SEATS`)."""

    sessions: dict[int, Session] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"sessions": {str(seat): s.to_json() for seat, s in self.sessions.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CountState:
        return cls({int(seat): Session.from_json(s) for seat, s in data.get("sessions", {}).items()})


@dataclass(frozen=True)
class Detector:
    """The test's parameters; :meth:`coup` applies one coup to a table's :class:`CountState`."""

    threshold: float = DEFAULT_THRESHOLD
    leave_after: int = DEFAULT_LEAVE_AFTER

    def coup(
        self,
        state: CountState,
        shoe: int,
        coup: int,
        seq: int,
        edges: Mapping[str, float],
        stakes: Mapping[int, Mapping[str, int]],
    ) -> list[Finding]:
        """One coup: every offered wager's player EV at its betting time (``edges``, by wager name) and the
        stakes each seat locked (seat -> wager -> cents; a seat with none is absent). Seats idle for
        ``leave_after`` coups leave; the findings of the wagers whose score reached the threshold now."""
        found: list[Finding] = []
        for seat in list(state.sessions):
            if seat not in stakes:
                session = state.sessions[seat]
                session.idle += 1
                if session.idle >= self.leave_after:
                    del state.sessions[seat]
        for seat, bets in sorted(stakes.items()):
            if not 1 <= seat <= MAX_SEATS or not any(v > 0 for v in bets.values()):
                continue
            if seat not in state.sessions:
                state.sessions[seat] = Session(shoe, coup, seq)
            session = state.sessions[seat]
            session.idle = 0
            for bet, ev in edges.items():
                stream = session.streams.get(bet)
                if stream is None:
                    stream = session.streams[bet] = Stream()
                finding = self.look(stream, seat, bet, ev, max(0, int(bets.get(bet, 0))), shoe, coup, seq, session)
                if finding is not None:
                    found.append(finding)
        return found

    def look(
        self, s: Stream, seat: int, bet: str, ev: float, stake: int, shoe: int, coup: int, seq: int, session: Session
    ) -> Finding | None:
        """One coup of ``session`` on one wager: count the seat's ``stake`` in ``s`` and, when the wager's edge
        ``ev`` is positive, bet on its rank; the finding when the score reaches the threshold (once)."""
        s.played += 1
        rank = s.add(stake)
        if not ev > POSITIVE:
            s.non_stake += stake
            s.non_max = max(s.non_max, stake)
            return None
        t, m = s.played, s.positive
        s.positive += 1
        s.pos_stake += stake
        s.pos_max = max(s.pos_max, stake)
        hit = rank <= m + 1
        s.hits += hit
        gain = t / (m + 1)
        for i, lam in enumerate(LAMBDAS):
            factor = 1 - lam + lam * gain if hit else 1 - lam
            s.log_scores[i] += math.log(factor)
        s.coups.append([shoe, coup, round(ev, 6), stake, rank, t, hit])
        del s.coups[:-KEPT_COUPS]
        if s.alerted or s.score() < self.threshold:
            return None
        s.alerted = True
        return Finding(
            seat,
            bet,
            shoe,
            coup,
            seq,
            session.shoe,
            session.coup,
            session.seq,
            s.score(),
            self.threshold,
            s.played,
            s.positive,
            s.hits,
            s.pos_stake,
            s.pos_max,
            s.non_stake,
            s.non_max,
            tuple(tuple(c) for c in s.coups),
        )
