"""The simulated players: who sits where and what each one wagers on each coup.

Two kinds of bettor, one interface (:meth:`wagers`: the wagers each seat intends for a coup):

* :class:`Players` (``shoe-sim --players N``): N players on seats 1..N, seeded and deterministic, each
  betting by a strategy, in this order round the table: flat Banker, flat Player, a random main bet, a
  side bettor (a main wager with Tie, pairs, Dragon Bonus, Dragon 7 or Panda 8 as the table offers them),
  and a player who leaves after a few coups (the seat stays empty for the rest of the shoe, so the table
  sees the seat leave and asks for its commission box; a new player sits down at the next shoe). One seat
  may instead be a **counter** (:class:`Counting`, ``shoe-sim --counter SEAT:WAGER[:FACTOR]``): Banker at
  its stake and the side wager at a base of 1, 2 or 5 times the side minimum, times ``FACTOR`` when the
  wager's live edge (as the cards it has seen price it) is positive, or only then (``FACTOR`` 0). Every
  wager a player intends is within the table's limits and rules: each seat's wagers pass
  :func:`controller.game.settlement.validate_wagers` (a bet that would not is left off).
* :class:`ScriptedBets` (``shoe-sim --bets FILE``): one JSON line per coup and seat,
  ``{"shoe": 1, "coup": 3, "seat": 2, "wagers": {"banker": "25.00", "tie": "5.00"}}``, placed as written:
  a script may break the table's rules on purpose (the table must refuse the wager).

With ``--players`` each seat also has the chips in front of its player (:class:`Bankrolls`): the player buys in
with cash on sitting down, and again when what is left will not cover the coup's wagers; the table's settlements
move it. (A ``--bets`` script buys in nothing.)

Pure: a seeded generator, no clock, no I/O (the command line reads the file and hands over its lines).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

from controller.game.rules import Bet, Ruleset
from controller.game.settlement import TableLimits, Wager, WagerError, validate_wagers
from controller.game.wagers import MAX_SEATS
from hw_sim.script_lines import ScriptLineError, script_objects

__all__ = [
    "BUY_IN_MINIMUMS",
    "BUY_IN_UNIT",
    "STRATEGY_ORDER",
    "Bankrolls",
    "BetsError",
    "Counting",
    "Players",
    "ScriptedBets",
    "ScriptedWagers",
    "Strategy",
    "fit",
    "parse_bets",
    "refusals",
]


class Strategy(Enum):
    """How a simulated player bets."""

    FLAT_BANKER = "flat_banker"
    FLAT_PLAYER = "flat_player"
    RANDOM_MAIN = "random_main"
    SIDE_BETTOR = "side_bettor"
    LEAVER = "leaver"


#: Seat 1 plays the first strategy, seat 2 the second ..., seat 6 the first again.
STRATEGY_ORDER: tuple[Strategy, ...] = tuple(Strategy)

_SIDE_CANDIDATES: tuple[Bet, ...] = (
    Bet.TIE,
    Bet.PLAYER_PAIR,
    Bet.BANKER_PAIR,
    Bet.DRAGON_BONUS_PLAYER,
    Bet.DRAGON_BONUS_BANKER,
    Bet.DRAGON_7,
    Bet.PANDA_8,
)


def _levels(minimum: int, maximum: int, unit: int, factors: Iterable[int]) -> list[int]:
    """Stakes ``minimum x factor`` rounded up to the unit, within the maximum (the minimum at least)."""
    out: list[int] = []
    for f in factors:
        stake = -(-minimum * f // unit) * unit
        if stake <= maximum and stake not in out:
            out.append(stake)
    return out or [-(-minimum // unit) * unit]


def refusals(wagers: Iterable[Wager], limits: TableLimits, rules: Ruleset) -> tuple[tuple[Wager, ...], dict[Bet, str]]:
    """One seat's wagers split into those the table takes and those it refuses (bet -> the rule broken):
    :func:`validate_wagers` names the first wager it refuses, which is left off, and so on until what is
    left passes (a main wager refused takes the side bets that need it along)."""
    left = list(wagers)
    refused: dict[Bet, str] = {}
    while left:
        try:
            validate_wagers(left, limits, rules)
        except WagerError as exc:
            refused[exc.bet] = exc.rule.value
            left = [w for w in left if w.bet is not exc.bet]
            continue
        break
    return tuple(left), refused


def fit(wagers: Iterable[Wager], limits: TableLimits, rules: Ruleset) -> tuple[Wager, ...]:
    """The wagers less each one the table refuses (see :func:`refusals`)."""
    return refusals(wagers, limits, rules)[0]


@dataclass
class _Player:
    seat: int
    strategy: Strategy
    rng: random.Random
    main_cents: int
    side_levels: list[int]
    main_levels: list[int]
    stay_coups: int
    coups_bet: int = 0

    @property
    def gone(self) -> bool:
        return self.strategy is Strategy.LEAVER and self.coups_bet >= self.stay_coups


@dataclass(frozen=True)
class Counting:
    """A seat that bets ``bet`` with the count: its base, times ``factor`` when the edge is positive (0: the
    wager only then)."""

    seat: int
    bet: Bet
    factor: int = 10

    def __post_init__(self) -> None:
        if self.bet not in _SIDE_CANDIDATES:
            raise ValueError(f"a counter bets a side wager, not {self.bet.value}")
        if not 0 <= self.factor <= 100:
            raise ValueError(f"the counter's factor is 0-100, not {self.factor}")


class Players:
    """N seeded players on seats 1..N, betting by strategy within the table's limits and rules."""

    def __init__(
        self,
        count: int,
        seed: int,
        rules: Ruleset,
        limits: TableLimits,
        *,
        seats: int = 9,
        counter: Counting | None = None,
    ) -> None:
        if not 1 <= count <= min(seats, MAX_SEATS):
            raise ValueError(f"players: 1-{min(seats, MAX_SEATS)} (one a seat), not {count}")
        if counter is not None and not 1 <= counter.seat <= count:
            raise ValueError(f"the counter sits on one of the players' seats (1-{count}), not {counter.seat}")
        if counter is not None and not rules.offers(counter.bet):
            raise ValueError(f"the table does not offer {counter.bet.value}")
        self.counter = counter
        self.count = count
        self.seed = seed
        self.rules = rules
        self.limits = limits
        self._shoe = 0
        self._players: dict[int, _Player] = {}
        self.new_shoe(1)

    def strategy(self, seat: int) -> Strategy:
        return self._players[seat].strategy

    def new_shoe(self, shoe: int) -> None:
        """A new shoe: the players sit down again (a seat left last shoe has a new player)."""
        if shoe == self._shoe:
            return
        self._shoe = shoe
        lim = self.limits
        main_levels = _levels(lim.minimum_cents, lim.maximum_cents, lim.unit_cents, (1, 2, 4, 10, 20, 40))
        side_levels = _levels(lim.side_minimum_cents, lim.side_maximum_cents, lim.unit_cents, (1, 2, 5, 10))
        self._players = {}
        for seat in range(1, self.count + 1):
            rng = random.Random(f"{self.seed}:player:{seat}:shoe:{shoe}")
            self._players[seat] = _Player(
                seat=seat,
                strategy=STRATEGY_ORDER[(seat - 1) % len(STRATEGY_ORDER)],
                rng=rng,
                main_cents=rng.choice(main_levels[:4]),
                side_levels=side_levels,
                main_levels=main_levels,
                stay_coups=rng.randint(2, 6),
            )

    def seated(self) -> set[int]:
        """The seats whose player is at the table (a leaver who has left is not)."""
        return {seat for seat, p in self._players.items() if not p.gone or (self.counter and seat == self.counter.seat)}

    def wagers(self, shoe: int, coup: int, edges: Mapping[str, float] | None = None) -> dict[int, tuple[Wager, ...]]:
        """Each seat's wagers for this coup (seats betting nothing left out). Call once per coup dealt.
        ``edges``: each wager's player EV as the cards seen price it (what a counter bets by)."""
        self.new_shoe(shoe)
        out: dict[int, tuple[Wager, ...]] = {}
        for seat, p in self._players.items():
            if p.gone and not (self.counter is not None and seat == self.counter.seat):
                continue
            intended = self._count(p, edges or {}) if self.counter and seat == self.counter.seat else self._intend(p)
            wagers = fit(intended, self.limits, self.rules)
            p.coups_bet += 1
            if wagers:
                out[seat] = wagers
        return out

    def _count(self, p: _Player, edges: Mapping[str, float]) -> list[Wager]:
        assert self.counter is not None
        bet, factor = self.counter.bet, self.counter.factor
        base = p.side_levels[min(len(p.side_levels) - 1, p.rng.choice((0, 1, 2)))]  # 1, 2 or 5 times the minimum
        wagers = [Wager(Bet.BANKER, p.main_cents)]
        if edges.get(bet.value, -1.0) > 0:
            stake = base if factor == 0 else base * factor
            wagers.append(Wager(bet, min(stake, self.limits.side_maximum_cents)))
        elif factor:
            wagers.append(Wager(bet, base))
        return wagers

    def _intend(self, p: _Player) -> list[Wager]:
        rng = p.rng
        if p.strategy is Strategy.FLAT_BANKER:
            return [Wager(Bet.BANKER, p.main_cents)]
        if p.strategy is Strategy.FLAT_PLAYER:
            return [Wager(Bet.PLAYER, p.main_cents)]
        if p.strategy in (Strategy.RANDOM_MAIN, Strategy.LEAVER):
            side = rng.choice((Bet.BANKER, Bet.PLAYER))
            return [Wager(side, rng.choice(p.main_levels))]
        main = rng.choice((Bet.BANKER, Bet.PLAYER))
        wagers = [Wager(main, p.main_cents)]
        offered = [b for b in _SIDE_CANDIDATES if self.rules.offers(b)]
        chosen = [b for b in offered if rng.random() < 0.4]
        if not chosen and offered:
            chosen = [rng.choice(offered)]
        wagers += [Wager(b, rng.choice(p.side_levels)) for b in chosen]
        return wagers


# -- the chips in front of the players ------------------------------------------------------------------------

#: A player buys in for this many table minimums (one of them, at random) ...
BUY_IN_MINIMUMS: tuple[int, ...] = (10, 20, 40, 100)
#: ... in $100 notes (integer cents), at least what the coup's wagers need.
BUY_IN_UNIT = 10_000


class Bankrolls:
    """The chips in front of each seated player, and the cash buy-ins that fill them: on sitting down (a seat
    with no player's chips yet), and when what is left will not cover the coup's wagers (:meth:`need`). The
    settlements (:meth:`won`) move them; a player who leaves takes theirs (:meth:`left`). Seeded apart from the
    wagers (its own generator), so that buy-ins change neither the cards nor the bets."""

    def __init__(self, seed: int, minimum_cents: int) -> None:
        self._rng = random.Random(f"{seed}:buy-ins")
        self.minimum_cents = max(1, minimum_cents)
        self._chips: dict[int, int] = {}

    def chips(self, seat: int) -> int | None:
        """The chips in front of the seat's player (None: nobody has bought in there)."""
        return self._chips.get(seat)

    def need(self, seat: int, wagers_cents: int) -> int:
        """The cash the seat's player buys in for before wagering ``wagers_cents`` (0: the chips cover it)."""
        have = self._chips.get(seat)
        if have is not None and have >= wagers_cents:
            return 0
        want = max(self.minimum_cents * self._rng.choice(BUY_IN_MINIMUMS), wagers_cents - (have or 0))
        cents = -(-want // BUY_IN_UNIT) * BUY_IN_UNIT
        self._chips[seat] = (have or 0) + cents
        return cents

    def bought(self, seat: int, cents: int) -> None:
        """A buy-in decided elsewhere (the split-cash player's): ``cents`` more in front of the seat's player."""
        self._chips[seat] = self._chips.get(seat, 0) + cents

    def won(self, seat: int, net_cents: int) -> None:
        """A settlement (or a commission box paid, negative) moved the seat's chips."""
        if seat in self._chips:
            self._chips[seat] = max(0, self._chips[seat] + net_cents)

    def left(self, seat: int) -> None:
        """The seat's player left with their chips: the next player there buys in on sitting down."""
        self._chips.pop(seat, None)


# -- scripted wagers -----------------------------------------------------------------------------------------


class BetsError(ScriptLineError):
    """A ``--bets`` line that cannot be used; ``where`` names the file and line."""


@dataclass(frozen=True, slots=True)
class ScriptedWagers:
    """One line of a ``--bets`` file: a seat's wagers on one coup of one shoe."""

    shoe: int
    coup: int
    seat: int
    wagers: tuple[Wager, ...]


_AMOUNT = re.compile(r"(0|[1-9][0-9]{0,8})(\.[0-9]{2})?")


def parse_amount(text: object) -> int:
    """``"25.00"`` or ``"25"`` -> 2500 cents; ValueError for anything else (a float is not money)."""
    if not isinstance(text, str) or not _AMOUNT.fullmatch(text):
        raise ValueError(f'amount {str(text)[:20]!r} is not dollars like "25.00"')
    whole, _, frac = text.partition(".")
    return int(whole) * 100 + int(frac or "0")


def _whole(obj: Mapping[str, object], key: str, low: int, high: int) -> int:
    value = obj.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"{key} must be a whole number {low}-{high}")
    return value


def parse_bets(lines: Iterable[str], source: str = "bets") -> list[ScriptedWagers]:
    """Parse ``--bets`` JSON Lines (blank lines and ``#`` comments skipped); :class:`BetsError` names the line."""
    out: list[ScriptedWagers] = []
    seen: set[tuple[int, int, int]] = set()
    example = '{"shoe": 1, "coup": 3, "seat": 2, "wagers": {...}}'
    for where, obj in script_objects(lines, source, BetsError, example):
        extra = set(obj) - {"shoe", "coup", "seat", "wagers"}
        if extra:
            raise BetsError(where, f"unknown key {sorted(extra)[0]!r}")
        try:
            shoe = _whole(obj, "shoe", 1, 10_000)
            coup = _whole(obj, "coup", 1, 1_000)
            seat = _whole(obj, "seat", 1, MAX_SEATS)
            raw = obj.get("wagers")
            if not isinstance(raw, dict):
                raise ValueError('wagers must be an object like {"banker": "25.00"}')
            wagers: list[Wager] = []
            for name, amount in raw.items():
                try:
                    bet = Bet(name)
                except ValueError:
                    raise ValueError(f"{str(name)[:30]!r} is not a wager") from None
                cents = parse_amount(amount)
                if cents <= 0:
                    raise ValueError(f"{name}: a wager must be positive")
                wagers.append(Wager(bet, cents))
        except ValueError as exc:
            raise BetsError(where, str(exc)) from None
        if (shoe, coup, seat) in seen:
            raise BetsError(where, f"shoe {shoe} coup {coup} seat {seat} already has its wagers")
        seen.add((shoe, coup, seat))
        out.append(ScriptedWagers(shoe, coup, seat, tuple(wagers)))
    return out


class ScriptedBets:
    """The wagers of a ``--bets`` file, placed as written (not checked against the rules)."""

    def __init__(self, entries: Iterable[ScriptedWagers], *, seats: int = 9) -> None:
        self._by_coup: dict[tuple[int, int], dict[int, tuple[Wager, ...]]] = {}
        for e in entries:
            if e.seat > seats:
                raise ValueError(f"shoe {e.shoe} coup {e.coup}: seat {e.seat} beyond the table's {seats} seats")
            if e.wagers:
                self._by_coup.setdefault((e.shoe, e.coup), {})[e.seat] = e.wagers

    def wagers(self, shoe: int, coup: int) -> dict[int, tuple[Wager, ...]]:
        return dict(sorted(self._by_coup.get((shoe, coup), {}).items()))
