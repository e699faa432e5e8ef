"""The simulated chip tray: the dealer's float in its tubes, every chip the dealer moves, and the tray's faults.

:class:`ChipTray` is the tray's tubes with the chips in them (the *truth*), one denomination a tube, in the order
of :data:`hw_sim.chipset.DENOMINATIONS` (tube 1 the $5,000 chips ... tube 8 the 25-cent chips). It starts full of
its float (:func:`default_float`, or a ``--float`` file: :func:`parse_float`), chips of the chip set whose UIDs
come from the top of each denomination's block (:meth:`hw_sim.chipset.ChipSet.float_chip`; the rack hands the
players' chips out from the bottom, and skips a chip while it lies in the tray: the tray's chips and the
players' are distinct). The money table (:mod:`hw_sim.money`) calls it for every move the dealer makes:

* **losers taken** (:meth:`ChipTray.take`): the losing stack into the tubes of its denominations (a chip that
  does not count, unknown, retired or stolen, is put aside for the pit, not into the tray);
* **a payout** (:meth:`ChipTray.pay`): the amount (already less any commission deducted at payout) out of the
  tray, largest denomination first among the chips the tray holds, onto the winning spot;
* **commission collected** from a seat's box: into the tray;
* **a buy-in** for cash (:meth:`ChipTray.sell`): chips of that amount out of the tray to the player;
* **colour changes** (:meth:`ChipTray.paid` and inside a payout): when a tube runs low (or a payout cannot be
  made of the chips the tray holds) the dealer breaks a chip of the next higher tube into chips of the lower one,
  and when a tube runs high (above :data:`HIGH` chips) colours chips up into the next higher tube; the chips are
  exchanged with the pit's chip bank (the simulator's rack): no net change.

Each move is a ``tray`` truth line (why, the cents and the chips per denomination in and out); after each coup's
payout :meth:`ChipTray.paid` is the dealer's pause (``--tray-still``) and a ``tray_still`` truth line: what the
table should count. With :attr:`ChipTray.keep_reads` (a tray device attached, :mod:`hw_sim.tray_device`) every
tube change is a read once the tube has read the same for the tray's debounce (:attr:`TrayConfig.debounce`), where
the tray's faults show (``tray_misread``, ``tray_double``); ``tray_theft`` is a chip palmed at the pause. Each
tray fault has its own seeded generator, so switching one on changes nothing else.

Pure and sans-I/O: times are injected; the truth log is the only output.
"""

from __future__ import annotations

import heapq
import itertools
import random
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from controller.game.chips import ChipRegistry, format_uid
from controller.game.settlement import TableLimits
from firmware_protocol.tray import MAX_TUBE_CHIPS
from hw_sim.chipset import DENOMINATIONS, ChipSet
from hw_sim.faults import TRAY_FAULTS, Fault, FaultPlan, ScriptedFault
from hw_sim.players import parse_amount
from hw_sim.truth import TruthLog

__all__ = [
    "DEBOUNCE",
    "DEFAULT_COUNT",
    "DEFAULT_STILL",
    "FLICKER",
    "HIGH",
    "LOW",
    "TUBES",
    "ChipTray",
    "FloatError",
    "TrayConfig",
    "TubeRead",
    "default_float",
    "denomination_of_tube",
    "parse_float",
    "tube_of",
]

#: The tray's tubes: one per denomination of the chip set, largest first (tube 1: $5,000 ... tube 8: 25 cents).
TUBES = len(DENOMINATIONS)
_TUBE_OF: dict[int, int] = {cents: i + 1 for i, cents in enumerate(DENOMINATIONS)}
#: Chips of each denomination (up to the table maximum) in the default float.
DEFAULT_COUNT = 60
#: A tube with fewer chips than this is coloured down into at the pause after a payout ...
LOW = 5
#: ... one with more than this coloured up (a tube holds at most 100: the tray's protocol reports no more) ...
HIGH = 90
#: ... down to this many.
FULL = 75
#: The tray reports a tube once it has read the same this long (seconds of the simulator's clock).
DEBOUNCE = 0.1
#: A misread (or a chip read twice) is put right by the next report this long after (a fraction of the table's
#: 2 s settle time: the table must not count it).
FLICKER = 0.3
#: The dealer's pause after each coup's payout (seconds, times ``--pace``): the table counts the still tray.
DEFAULT_STILL = 2.5
#: Largest ``--float`` file read.
MAX_FLOAT_BYTES = 64 * 1024


def tube_of(cents: int) -> int:
    """The tube of a denomination."""
    return _TUBE_OF[cents]


def denomination_of_tube(tube: int) -> int:
    """The denomination (cents) a tube holds."""
    return DENOMINATIONS[tube - 1]


def _money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


class FloatError(ValueError):
    """A ``--float`` file that cannot be used; ``where`` names it."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.where = where
        self.reason = reason


def default_float(limits: TableLimits) -> dict[int, int]:
    """The float for the table's limits: :data:`DEFAULT_COUNT` chips of every denomination up to the table maximum
    (none above it): enough to pay a shoe of the simulator's players and to sell them their buy-ins, with the
    colour changes that keep each tube between :data:`LOW` and :data:`HIGH`."""
    return {d: DEFAULT_COUNT if d <= limits.maximum_cents else 0 for d in DENOMINATIONS}


def parse_float(text: str, source: str = "float") -> dict[int, int]:
    """A ``--float`` file: TOML, one key per denomination (dollars as text, as the chip registry writes values),
    the chips of it in the tray at the start; a denomination left out is an empty tube::

        "5000.00" = 10
        "1000.00" = 40
        "25.00" = 80
        "0.25" = 80
    """
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FloatError(source, f"not TOML: {exc}") from None
    out = dict.fromkeys(DENOMINATIONS, 0)
    for key, count in doc.items():
        try:
            cents = parse_amount(key)
        except ValueError as exc:
            raise FloatError(source, str(exc)) from None
        if cents not in _TUBE_OF:
            known = ", ".join(_money(d) for d in DENOMINATIONS)
            raise FloatError(source, f"{key!r} is not a denomination of the chip set ({known})")
        if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= HIGH:
            raise FloatError(source, f"{key!r}: a whole number of chips 0-{HIGH} (a tube holds {MAX_TUBE_CHIPS})")
        out[cents] = count
    if not any(out.values()):
        raise FloatError(source, "an empty float (no chips at all)")
    return out


@dataclass(frozen=True)
class TrayConfig:
    """The chip tray of a run: its float (None: :func:`default_float` for the table's limits), the dealer's pause
    after each payout (seconds at ``--pace real``: the simulator multiplies it by the pace), the tray's debounce and
    how soon a flickering read is put right (seconds of the simulator's clock, not scaled)."""

    float_counts: tuple[tuple[int, int], ...] | None = None
    still: float = DEFAULT_STILL
    debounce: float = DEBOUNCE
    flicker: float = FLICKER

    def __post_init__(self) -> None:
        if not self.still >= 0:
            raise ValueError(f"tray still {self.still} cannot be negative")
        if not self.debounce > 0 or not self.flicker > 0:
            raise ValueError("the tray's debounce and flicker must be positive")
        for cents, count in self.float_counts or ():
            if cents not in _TUBE_OF or not 0 <= count <= HIGH:
                raise ValueError(f"float: {count} chips of {cents} cents")


@dataclass(frozen=True, slots=True)
class TubeRead:
    """What the tray's antennas make of one tube (:mod:`hw_sim.tray_device` carries it out): ``reading`` is the
    tube's debounced reading from now on (None: unchanged); ``seen`` what is reported (None: the reading); ``extra``
    chips reported besides (a chip of the neighbouring tube read twice)."""

    tube: int
    reading: frozenset[int] | None = None
    seen: frozenset[int] | None = None
    extra: frozenset[int] = frozenset()


def _hex(uids: Iterable[int]) -> list[str]:
    return [format_uid(u) for u in uids]


class ChipTray:
    """The tray's tubes and the dealer's moves; see the module's docstring."""

    def __init__(
        self,
        counts: Mapping[int, int],
        chips: ChipSet,
        registry: ChipRegistry,
        truth: TruthLog,
        faults: FaultPlan,
        seed: int,
        *,
        still: float = DEFAULT_STILL,
        debounce: float = DEBOUNCE,
        flicker: float = FLICKER,
    ) -> None:
        self.chips = chips
        self.registry = registry
        self.truth = truth
        self.still = still
        self.debounce = debounce
        self.flicker = flicker
        self.float_counts = {d: int(counts.get(d, 0)) for d in DENOMINATIONS}
        self.tubes: dict[int, list[int]] = {t: [] for t in range(1, TUBES + 1)}
        for cents, n in self.float_counts.items():
            uids = [chips.float_chip(cents, i) for i in range(n)]
            self.tubes[tube_of(cents)] = uids
            chips.held.update(uids)
        self.shoe = 0
        self.coup = 0
        #: A tray device reads the tubes (the command line's ``--tray-link``, a test): reads are kept for it.
        self.keep_reads = False
        self._due: dict[int, float] = {}  # a tube changed: reported once it has read the same until then
        self._fixes: list[tuple[float, int, int]] = []  # (when, order, tube): a flickering read put right
        self._order = itertools.count()
        self._rates = {f: faults.rate(f) for f in TRAY_FAULTS if faults.rate(f) > 0}
        self._script: list[ScriptedFault] = [s for s in faults.scripted_money() if s.fault in TRAY_FAULTS]
        self._rngs = {f: random.Random(f"{seed}:tray-faults:{f.value}") for f in TRAY_FAULTS}
        self.stolen_cents = 0
        self.opened = False

    # -- what it holds ---------------------------------------------------------------------------------
    @property
    def cents(self) -> int:
        """The tray's value: every chip in it (all are chips in play of the set)."""
        return sum(denomination_of_tube(t) * len(uids) for t, uids in self.tubes.items())

    def denominations(self) -> dict[int, int]:
        """Chips per denomination now (cents: count), denominations held only."""
        return {denomination_of_tube(t): len(uids) for t, uids in self.tubes.items() if uids}

    def content(self) -> dict[int, frozenset[int]]:
        """Each tube's chips now (every tube, empty ones too)."""
        return {t: frozenset(uids) for t, uids in self.tubes.items()}

    def open(self, now: float) -> None:
        """Power on: the float's truth line (``why: "float"``), once."""
        if self.opened:
            return
        self.opened = True
        every = [u for t in sorted(self.tubes) for u in self.tubes[t]]
        self._line("float", now, into=every, out=(), seat=None)

    # -- the dealer's moves ----------------------------------------------------------------------------
    def take(self, uids: Iterable[int], now: float, *, seat: int | None, why: str = "take") -> None:
        """Chips into the tray (a losing stack, a commission box), each into the tube of its denomination; a chip
        that does not count (not in play, or not of the set) is put aside."""
        into: list[int] = []
        aside: list[int] = []
        for uid in uids:
            (into if self._counts(uid) else aside).append(uid)
        if not into and not aside:
            return
        self._move(why, now, into=into, out=(), seat=seat, aside=aside)
        self._colour_up(now)

    def pay(self, cents: int, now: float, *, seat: int | None, why: str = "pay") -> tuple[int, ...]:
        """``cents`` out of the tray, largest denomination first among the chips it holds (colouring down first if
        they cannot make it); the chips, for the spot (or the player)."""
        if cents <= 0:
            return ()
        out = self._make(cents, now)
        self._move(why, now, into=(), out=out, seat=seat)
        return tuple(out)

    def sell(self, cents: int, now: float, *, seat: int) -> tuple[int, ...]:
        """A buy-in for cash (or a marker): chips of ``cents`` out of the tray to the player."""
        return self.pay(cents, now, seat=seat, why="buy_in")

    def paid(self, now: float) -> float:
        """A coup's payout is over: tubes run low coloured down, the ``tray_theft`` fault, and the dealer's pause
        (a ``tray_still`` line with what the table should count). Returns the pause in seconds."""
        self._colour_down(now)
        if self.cents and self._fault(Fault.TRAY_THEFT):
            rng = self._rngs[Fault.TRAY_THEFT]
            tube = rng.choice([t for t, uids in sorted(self.tubes.items()) if uids])
            uid = self.tubes[tube].pop(rng.randrange(len(self.tubes[tube])))
            self.chips.held.discard(uid)
            self._changed(tube, now)
            cents = denomination_of_tube(tube)
            self.stolen_cents += cents
            self.truth.write(
                "tray_theft",
                now,
                shoe=self.shoe,
                coup=self.coup,
                cents=cents,
                tube=tube,
                chip=format_uid(uid),
                expect=f"tray_variance: SHORT {_money(cents)} at coup {self.coup}'s count (a recount confirms)",
            )
        self.truth.write(
            "tray_still",
            now,
            shoe=self.shoe,
            coup=self.coup,
            cents=self.cents,
            chips=_counts(self.denominations()),
            seconds=self.still,
        )
        return self.still

    # -- the tubes' reads (a tray device) --------------------------------------------------------------
    def next_read_at(self) -> float | None:
        times = list(self._due.values())
        if self._fixes:
            times.append(self._fixes[0][0])
        return min(times) if times else None

    def due_reads(self, now: float) -> list[TubeRead]:
        """The reads due by ``now``: tubes that have read the same for the debounce, flickers put right."""
        out: list[TubeRead] = []
        while self._fixes and self._fixes[0][0] <= now:
            out.append(TubeRead(heapq.heappop(self._fixes)[2]))  # the tube's reading reported again
        for tube in sorted(t for t, at in self._due.items() if at <= now):
            del self._due[tube]
            out.extend(self._read(tube, now))
        return out

    def _read(self, tube: int, now: float) -> list[TubeRead]:
        uids = self.tubes[tube]
        truth = frozenset(uids)
        if uids and self._fault(Fault.TRAY_MISREAD):
            chip = uids[self._rngs[Fault.TRAY_MISREAD].randrange(len(uids))]
            self._fix(tube, now)
            self._write_fault(
                Fault.TRAY_MISREAD,
                now,
                tube=tube,
                chip=format_uid(chip),
                seconds=self.flicker,
                expect="a tube report without the chip, right again at the next report: no tray variance",
            )
            return [TubeRead(tube, truth, truth - {chip})]
        if uids and self._fault(Fault.TRAY_DOUBLE):
            chip = uids[self._rngs[Fault.TRAY_DOUBLE].randrange(len(uids))]
            neighbour = tube + 1 if tube < TUBES else tube - 1
            self._fix(neighbour, now)
            self._write_fault(
                Fault.TRAY_DOUBLE,
                now,
                tube=tube,
                neighbour=neighbour,
                chip=format_uid(chip),
                seconds=self.flicker,
                expect="the chip reported in both tubes for a moment (it counts once), then in its own: no variance",
            )
            return [TubeRead(tube, truth), TubeRead(neighbour, extra=frozenset({chip}))]
        return [TubeRead(tube, truth)]

    def _fix(self, tube: int, now: float) -> None:
        heapq.heappush(self._fixes, (now + self.flicker, next(self._order), tube))

    # -- moving chips ------------------------------------------------------------------------------------
    def _counts(self, uid: int) -> bool:
        return self.chips.denomination(uid) is not None and self.registry.resolve(uid).counts

    def _move(
        self,
        why: str,
        now: float,
        *,
        into: Iterable[int],
        out: Iterable[int],
        seat: int | None,
        aside: Iterable[int] = (),
        **extra: object,
    ) -> None:
        into, out = list(into), list(out)
        for uid in out:
            tube = tube_of(self._denomination(uid))
            self.tubes[tube].remove(uid)
            self.chips.held.discard(uid)
            self._changed(tube, now)
        for uid in into:
            tube = tube_of(self._denomination(uid))
            self.tubes[tube].append(uid)
            self.chips.held.add(uid)
            self._changed(tube, now)
        self._line(why, now, into=into, out=out, seat=seat, aside=list(aside), **extra)

    def _line(
        self,
        why: str,
        now: float,
        *,
        into: list[int],
        out: Iterable[int],
        seat: int | None,
        aside: list[int] | None = None,
        **extra: object,
    ) -> None:
        out = list(out)
        change: Counter[int] = Counter(self._denomination(u) for u in into)
        change.subtract(Counter(self._denomination(u) for u in out))
        fields: dict[str, object] = {"shoe": self.shoe, "coup": self.coup, "why": why}
        if seat is not None:
            fields["seat"] = seat
        fields["cents"] = sum(d * n for d, n in change.items())
        fields["chips"] = _counts(change)
        fields["in"] = _hex(into)
        fields["out"] = _hex(out)
        fields["total"] = self.cents
        if aside:
            fields["aside"] = _hex(aside)  # chips that do not count, put aside for the pit
        fields.update(extra)
        self.truth.write("tray", now, **fields)

    def _denomination(self, uid: int) -> int:
        cents = self.chips.denomination(uid)
        assert cents is not None, f"{format_uid(uid)} is not a chip of the set"
        return cents

    def _changed(self, tube: int, now: float) -> None:
        if self.keep_reads:
            self._due[tube] = now + self.debounce  # a change restarts the tube's debounce

    def _make(self, cents: int, now: float) -> list[int]:
        """The chips that make ``cents``, largest first among those the tray holds; when they cannot, a chip of the
        smallest denomination above the shortfall is coloured down (a fill from the cage if there is none)."""
        for _ in range(4 * TUBES + 2):
            out: list[int] = []
            left = cents
            for d in DENOMINATIONS:
                tube = self.tubes[tube_of(d)]
                n = min(len(tube), left // d)
                if n:
                    out += tube[-n:]  # from the top of the tube
                    left -= n * d
            if not left:
                return out
            bigger = [d for d in DENOMINATIONS if d > left and self.tubes[tube_of(d)]]
            if bigger:
                self._break(min(bigger), now, "change")
            else:
                fill = list(self.chips.take(left))
                self._move(
                    "fill",
                    now,
                    into=fill,
                    out=(),
                    seat=None,
                    expect=f"the tray OVER {_money(left)}: chips from the cage the table was not told of",
                )
        raise AssertionError(f"the tray cannot make {cents} cents")  # pragma: no cover: each round gets closer

    def _break(self, cents: int, now: float, reason: str) -> None:
        """Colour down: one chip of ``cents`` to the chip bank, chips of the next lower denomination from it."""
        lower = DENOMINATIONS[DENOMINATIONS.index(cents) + 1]
        chip = self.tubes[tube_of(cents)][-1]
        into = [self.chips.one(lower) for _ in range(cents // lower)]
        self._move("colour", now, into=into, out=[chip], seat=None, reason=reason)

    def _colour_down(self, now: float) -> None:
        """Every tube of the float run below :data:`LOW` is filled back from the next higher tube that has chips."""
        for d in reversed(DENOMINATIONS):
            if self.float_counts[d] < LOW:
                continue
            for _ in range(4 * LOW):
                if len(self.tubes[tube_of(d)]) >= LOW:
                    break
                higher = [h for h in DENOMINATIONS if h > d and self.tubes[tube_of(h)]]
                if not higher:
                    break
                self._break(min(higher), now, "low")

    def _colour_up(self, now: float) -> None:
        """A tube above :data:`HIGH` chips: colour up into the next higher tube down to :data:`FULL` chips (the
        $5,000 tube: a credit to the cage)."""
        for i in range(len(DENOMINATIONS) - 1, -1, -1):
            d = DENOMINATIONS[i]
            tube = self.tubes[tube_of(d)]
            if len(tube) <= HIGH:
                continue
            if i == 0:
                out = tube[FULL:]
                self._move(
                    "credit",
                    now,
                    into=(),
                    out=out,
                    seat=None,
                    expect=f"the tray SHORT {_money(d * len(out))}: chips to the cage the table was not told of",
                )
                continue
            higher = DENOMINATIONS[i - 1]
            group = higher // d
            groups = -(-(len(tube) - FULL) // group)
            out = tube[-groups * group :]
            into = [self.chips.one(higher) for _ in range(groups)]
            self._move("colour", now, into=into, out=out, seat=None, reason="high")

    # -- faults ----------------------------------------------------------------------------------------
    def _fault(self, fault: Fault) -> bool:
        """Whether ``fault`` happens now: scripted for this coup or an earlier one of this shoe (once), or by rate
        (each tray fault its own generator)."""
        for s in self._script:
            if s.fault is fault and s.shoe == self.shoe and (s.at_coup or 0) <= self.coup:
                self._script.remove(s)
                return True
        rate = self._rates.get(fault, 0.0)
        return bool(rate) and self._rngs[fault].random() < rate

    def _write_fault(self, fault: Fault, now: float, **fields: object) -> None:
        self.truth.write("fault", now, kind=fault.value, shoe=self.shoe, coup=self.coup, **fields)


def _counts(counts: Mapping[int, int]) -> list[dict[str, int]]:
    return [{"cents": d, "count": n} for d, n in sorted(counts.items(), reverse=True) if n]
