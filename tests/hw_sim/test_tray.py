"""The simulated chip tray: the dealer's moves through the tray's tubes, its TRAY wire to a table-side session, and
its faults. In process, on a virtual clock."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from controller.game.chips import ChipRegistry, parse_uid
from controller.game.settlement import TableLimits
from firmware_protocol.session import ControllerSession, ShoeEvent
from firmware_protocol.tray import (
    TRAY,
    CountRequest,
    TrayHello,
    TraySnapshotBegin,
    TraySnapshotEnd,
    TrayStatus,
    TubeReport,
)
from hw_sim.chipset import DENOMINATIONS, ChipSet
from hw_sim.core import ConfigError, DealerMode, ShoeSimulator, SimConfig
from hw_sim.faults import Fault, FaultPlan, parse_rate, parse_script
from hw_sim.money import MoneyConfig
from hw_sim.tray import (
    DEFAULT_COUNT,
    HIGH,
    ChipTray,
    FloatError,
    TrayConfig,
    default_float,
    denomination_of_tube,
    parse_float,
)
from hw_sim.tray_device import TrayDevice, TrayFeed
from hw_sim.truth import TruthLog

STILL = 2.5  # the dealer's pause at pace 1.0
#: For each coup's pause: its ``tray_still`` line, and the table's count (cents, chips per denomination) then.
Checks = list[tuple[dict[str, Any], tuple[int, dict[int, int]]]]


class TableSide:
    """What a table makes of the tray's wire: each tube's UIDs, every TUBE told (tube, uids) in order."""

    def __init__(self, registry: ChipRegistry) -> None:
        self.registry = registry
        self.session = ControllerSession(dialect=TRAY)
        self.tubes: dict[int, frozenset[int]] = {}
        self.told: list[tuple[int, frozenset[int]]] = []
        self.hellos: list[TrayHello] = []
        self.snapshots = 0
        self.statuses: list[TrayStatus] = []
        self._snapshot: dict[int, frozenset[int]] | None = None

    def feed(self, data: bytes, now: float) -> bytes:
        out = b""
        for ev in self.session.receive(data, now):
            if isinstance(ev, ShoeEvent):
                self._apply(ev.message)
                out += self.session.acknowledge(ev.number, ev.key)
        _events, more = self.session.poll(now)
        return out + more

    def _apply(self, m: object) -> None:
        if isinstance(m, TrayHello):
            self.hellos.append(m)
        elif isinstance(m, TrayStatus):
            self.statuses.append(m)
        elif isinstance(m, TraySnapshotBegin):
            self._snapshot = {}
        elif isinstance(m, TraySnapshotEnd):
            assert self._snapshot is not None and len(self._snapshot) == m.reports
            self.tubes, self._snapshot = self._snapshot, None
            self.snapshots += 1
        elif isinstance(m, TubeReport):
            uids = frozenset(m.uids)
            if self._snapshot is not None:
                self._snapshot[m.tube] = uids
            else:
                self.tubes[m.tube] = uids
                self.told.append((m.tube, uids))

    def counted(self) -> tuple[int, dict[int, int]]:
        """The tray as the table counts it: cents (a UID in two tubes once) and chips per denomination."""
        every = {u for uids in self.tubes.values() for u in uids}
        chips = [self.registry.resolve(u) for u in every]
        per: Counter[int] = Counter(c.cents for c in chips if c.counts)
        return sum(c.cents for c in chips if c.counts), dict(per)


def play(
    faults: FaultPlan, *, players: int = 7, decks: int = 1, seed: int = 5
) -> tuple[ShoeSimulator, TableSide, Checks]:
    """A whole shoe with players, a tray on its wire; returns the simulator, the table side and, for each coup's
    pause, (the ``tray_still`` line, the table's count just before the pause ends)."""
    sim = ShoeSimulator(
        SimConfig(
            decks=decks,
            seed=seed,
            pace=1.0,
            dealer=DealerMode.SELF,
            money=MoneyConfig(players=players),
            faults=faults,
            tray=TrayConfig(),
        )
    )
    tray = sim.tray
    assert tray is not None and sim.money is not None
    feed = TrayFeed(tray, TrayDevice(seed=seed))
    table = TableSide(sim.money.registry)
    shoe = ControllerSession()
    now = 0.0
    sim.start(now)
    feed.start(now)
    checks: Checks = []
    waiting: list[dict[str, Any]] = []
    seen_stills = 0
    while not sim.finished:
        assert now < 5_000, "the run never finished"
        shoe_side(sim, shoe, now)
        data = feed.poll(now)
        back = table.feed(data, now)
        if back:
            feed.receive(back, now)
        stills = sim.truth.of("tray_still")
        waiting += stills[seen_stills:]
        seen_stills = len(stills)
        while waiting and now >= waiting[0]["t"] + STILL - 0.1:
            checks.append((waiting.pop(0), table.counted()))
        now = round(now + 0.02, 6)
    return sim, table, checks


def shoe_side(sim: ShoeSimulator, shoe: ControllerSession, now: float) -> None:
    """The table's side of the shoe's link: every event acknowledged at once."""
    for chunk in sim.poll(now):
        for ev in shoe.receive(chunk, now):
            if isinstance(ev, ShoeEvent):
                sim.receive(shoe.acknowledge(ev.number, ev.key), now)


def flows(events: list[dict[str, Any]], upto: dict[str, Any] | None = None) -> tuple[int, Counter[int]]:
    """The float plus every ``tray`` line's flow (up to the line ``upto``): cents and chips per denomination."""
    cents, per = 0, Counter[int]()
    for e in events:
        if e is upto:
            break
        if e["event"] == "tray":
            cents += e["cents"]
            for c in e["chips"]:
                per[c["cents"]] += c["count"]
    return cents, per


def _positive(per: Counter[int]) -> dict[int, int]:
    return {d: n for d, n in per.items() if n}


def test_the_tray_holds_the_float_plus_the_flows_after_every_coup_exactly() -> None:
    sim, table, checks = play(FaultPlan())
    truth = sim.truth.events
    tray = sim.tray
    assert tray is not None
    float_line = sim.truth.of("tray")[0]
    assert float_line["why"] == "float" and float_line["cents"] == sum(d * DEFAULT_COUNT for d in DENOMINATIONS)
    whys = Counter(e["why"] for e in sim.truth.of("tray"))
    assert whys["take"] > 10 and whys["pay"] > 10 and whys["buy_in"] > 0, whys
    assert len(checks) >= 5 and len(checks) == len(sim.truth.of("settle"))
    for still, (counted, per) in checks:
        cents, want = flows(truth, upto=still)
        assert still["cents"] == cents, still
        assert {c["cents"]: c["count"] for c in still["chips"]} == _positive(want)
        assert counted == cents, f"coup {still['coup']}: the table counts {counted}, the flows say {cents}"
        assert per == _positive(want), f"coup {still['coup']}"
    cents, per = flows(truth)
    assert tray.cents == cents and tray.denominations() == _positive(per)
    # the losers taken and the payouts are the settlements' own (the commission kept back at payout)
    paid = sum(-e["cents"] for e in sim.truth.of("tray") if e["why"] == "pay")
    taken = sum(e["cents"] for e in sim.truth.of("tray") if e["why"] == "take")
    assert paid == sum(e["amount"] for e in sim.truth.of("payout") if e["amount"] > 0)
    assert taken == sum(-e["amount"] for e in sim.truth.of("payout") if e["amount"] < 0)
    sold = sum(-e["cents"] for e in sim.truth.of("tray") if e["why"] == "buy_in")
    assert sold == sum(e["cents"] for e in sim.truth.of("buy_in"))
    # every payout's chips came out of the tray onto the winning spot
    for e in sim.truth.of("tray"):
        if e["why"] == "pay":
            spots = [
                s for s in sim.truth.of("spot") if s["why"] == "pay" and s["seat"] == e["seat"] and s["t"] == e["t"]
            ]
            assert any(set(e["out"]) <= set(s["uids"]) for s in spots), e
    # no tube ever held more than the protocol carries, and the table was told every change
    assert all(len(uids) <= HIGH + 5 for _t, uids in table.told)
    assert table.hellos and table.snapshots == 1


def test_the_trays_chips_are_distinct_from_the_players() -> None:
    sim, _table, _checks = play(FaultPlan(), players=3)
    float_chips = set(sim.truth.of("tray")[0]["in"])
    bets = {u for s in sim.truth.of("spot") if s["why"] == "bet" for u in s["uids"]}
    assert float_chips and not float_chips & {u for u in bets if u not in _sold_chips(sim)}


def _sold_chips(sim: ShoeSimulator) -> set[str]:
    return {u for e in sim.truth.of("tray") if e["why"] == "buy_in" for u in e["out"]}


def test_a_theft_leaves_the_tray_short_by_exactly_what_was_stolen() -> None:
    sim, _table, checks = play(FaultPlan({Fault.TRAY_THEFT: 0.3}))
    thefts = sim.truth.of("tray_theft")
    assert thefts and all({"shoe", "coup", "cents", "expect"} <= set(t) for t in thefts)
    truth = sim.truth.events
    short_somewhere = False
    for still, (counted, _per) in checks:
        cents, _ = flows(truth, upto=still)
        stolen = sum(t["cents"] for t in thefts if truth.index(t) < truth.index(still))
        assert counted == cents - stolen == still["cents"], still
        short_somewhere |= stolen > 0
    assert short_somewhere
    tray = sim.tray
    assert tray is not None
    assert tray.cents == flows(truth)[0] - sum(t["cents"] for t in thefts) and tray.stolen_cents > 0
    # each theft is at the pause after its coup's payout
    for t in thefts:
        still = next(e for e in sim.truth.of("tray_still") if e["t"] == t["t"])
        assert (still["shoe"], still["coup"]) == (t["shoe"], t["coup"])


@pytest.mark.parametrize("fault", [Fault.TRAY_MISREAD, Fault.TRAY_DOUBLE])
def test_a_misread_or_a_double_is_put_right_by_the_next_report(fault: Fault) -> None:
    sim, table, checks = play(FaultPlan({fault: 0.15}), players=4)
    injected = [e for e in sim.truth.of("fault") if e["kind"] == fault.value]
    assert len(injected) >= 3
    truth = sim.truth.events
    for still, (counted, per) in checks:  # the table's count at every pause: never a variance
        cents, want = flows(truth, upto=still)
        assert counted == cents and per == _positive(want), still
    for f in injected:
        chip = parse_uid(f["chip"])
        tube = f["tube"] if fault is Fault.TRAY_MISREAD else f["neighbour"]
        told = [uids for t, uids in table.told if t == tube]
        # the flicker was told: the tube without the chip (misread) or with a chip of its neighbour (double)
        bad = [i for i, uids in enumerate(told) if (chip not in uids) == (fault is Fault.TRAY_MISREAD)]
        if fault is Fault.TRAY_MISREAD:
            bad = [i for i in bad if i + 1 < len(told) and chip in told[i + 1]]
        else:
            bad = [i for i in bad if i + 1 < len(told) and chip not in told[i + 1]]
        assert bad, f"{f}: no flicker put right by the next report"
    assert all(
        denomination_of_tube(t) == sim.money.registry.resolve(u).cents  # type: ignore[union-attr]
        for t, uids in table.tubes.items()
        for u in uids
    ), "at the end every chip is reported in its own tube only"


def test_a_tray_changes_neither_the_cards_nor_the_wagers() -> None:
    def run(tray: TrayConfig | None, faults: FaultPlan) -> ShoeSimulator:
        config = SimConfig(
            decks=1, seed=9, pace=1.0, dealer=DealerMode.SELF, money=MoneyConfig(players=6), faults=faults, tray=tray
        )
        sim, shoe = ShoeSimulator(config), ControllerSession()
        now = 0.0
        sim.start(now)
        while not sim.finished:
            shoe_side(sim, shoe, now)
            now += 0.05
        return sim

    def same(sim: ShoeSimulator) -> list[Any]:
        keep = ("card", "wager", "lock", "settle", "payout", "buy_in", "commission", "seat_left", "player_in")
        return [{k: v for k, v in e.items() if k != "t"} for e in sim.truth.events if e["event"] in keep]

    plain = run(None, FaultPlan())
    assert same(run(TrayConfig(), FaultPlan())) == same(plain)
    assert same(run(TrayConfig(), FaultPlan(dict.fromkeys([Fault.TRAY_THEFT, Fault.TRAY_MISREAD], 0.5)))) == same(plain)
    assert not [e for e in plain.truth.events if e["event"].startswith("tray")]


def test_the_pause_after_a_payout_is_the_tray_still_times_the_pace() -> None:
    config = SimConfig(
        decks=1, seed=3, pace=0.5, dealer=DealerMode.SELF, money=MoneyConfig(players=2), tray=TrayConfig(still=4.0)
    )
    sim, shoe = ShoeSimulator(config), ControllerSession()
    now = 0.0
    sim.start(now)
    while not sim.finished:
        shoe_side(sim, shoe, now)
        now = round(now + 0.01, 6)
    stills = sim.truth.of("tray_still")
    assert stills and all(s["seconds"] == 2.0 for s in stills)
    for s in stills[:-1]:
        after = next(e for e in sim.truth.events if e["t"] > s["t"])
        assert after["t"] - s["t"] >= 2.0 - 1e-9, after


def test_the_tray_needs_players() -> None:
    with pytest.raises(ConfigError, match="tray"):
        SimConfig(tray=TrayConfig())


def test_scripted_and_rated_tray_faults_parse() -> None:
    assert parse_rate("tray_theft=0.1") == (Fault.TRAY_THEFT, 0.1)
    [s] = parse_script(['{"at_coup": 4, "fault": "tray_theft"}'])
    assert (s.fault, s.at_coup, s.shoe) == (Fault.TRAY_THEFT, 4, 1)


def test_a_scripted_theft_happens_at_its_coup() -> None:
    sim, _table, _checks = play(FaultPlan(script=tuple(parse_script(['{"at_coup": 3, "fault": "tray_theft"}']))))
    [theft] = sim.truth.of("tray_theft")
    assert (theft["shoe"], theft["coup"]) == (1, 3)


# -- the float --------------------------------------------------------------------------------------------------


def test_a_float_file_and_its_mistakes() -> None:
    got = parse_float('"25.00" = 80\n"5" = 40\n"0.25" = 10\n')
    assert got[2_500] == 80 and got[500] == 40 and got[25] == 10 and got[500_000] == 0
    for text, words in [
        ('"30.00" = 5', "not a denomination"),
        ('"25.00" = 101', "0-90"),
        ('"25.00" = "x"', "0-90"),
        ("nonsense =", "not TOML"),
        ('"25.00" = 0', "empty float"),
        ('"abc" = 1', "dollars"),
    ]:
        with pytest.raises(FloatError, match=words):
            parse_float(text, "f.toml")


def test_the_default_float_follows_the_table_maximum() -> None:
    assert default_float(TableLimits()) == dict.fromkeys(DENOMINATIONS, DEFAULT_COUNT)
    small = default_float(TableLimits(maximum_cents=50_000))
    assert small[100_000] == small[500_000] == 0 and small[50_000] == DEFAULT_COUNT


# -- the tray alone ----------------------------------------------------------------------------------------------


def _tray(counts: dict[int, int]) -> tuple[ChipTray, TruthLog]:
    truth = TruthLog(keep=True)
    chips = ChipSet()
    tray = ChipTray(counts, chips, chips.registry(), truth, FaultPlan(), 0)
    tray.open(0.0)
    return tray, truth


def test_a_payout_the_tubes_cannot_make_is_coloured_down_first_and_a_full_tube_up() -> None:
    tray, truth = _tray({2_500: 10})
    chips = tray.pay(2_375, 1.0, seat=1)  # $23.75: a $25 chip broken into $5s, a $5 into $1s, a $1 into quarters
    assert sum(tray.chips.denomination(u) or 0 for u in chips) == 2_375
    assert tray.cents == 25_000 - 2_375
    colours = [e for e in truth.of("tray") if e["why"] == "colour"]
    assert len(colours) == 3 and all(e["cents"] == 0 for e in colours)
    # the rack never hands out a chip that lies in the tray
    assert not set(tray.chips.take(100_000)) & {u for uids in tray.tubes.values() for u in uids}
    before = tray.cents
    tray.take(tray.chips.take(2_500 * 40) + tray.chips.take(2_500 * 40), 2.0, seat=2)  # 80 $25 chips more
    assert max(len(u) for u in tray.tubes.values()) <= HIGH
    assert tray.cents == before + 200_000


def test_a_buy_in_the_tray_cannot_cover_is_a_fill() -> None:
    tray, truth = _tray({500: 2})
    tray.sell(2_500, 1.0, seat=1)
    [fill] = [e for e in truth.of("tray") if e["why"] == "fill"]
    assert fill["cents"] == 1_500 and "OVER" in fill["expect"]
    assert tray.cents == 0


# -- the device --------------------------------------------------------------------------------------------------


def test_the_device_says_hello_sends_a_snapshot_answers_a_count_and_a_reset() -> None:
    chips = ChipSet()
    truth = TruthLog(keep=True)
    tray = ChipTray({2_500: 3, 10_000: 2}, chips, chips.registry(), truth, FaultPlan(), 0)
    device = TrayDevice(seed=1)
    feed = TrayFeed(tray, device)
    table = TableSide(chips.registry())
    feed.start(0.0)
    feed.receive(table.feed(feed.poll(0.0), 0.0), 0.0)
    assert [h.tubes for h in table.hellos] == [8] and table.snapshots == 1
    assert table.counted() == (27_500, {2_500: 3, 10_000: 2})
    assert device.unacked == 0
    feed.receive(table.session.command(CountRequest()), 1.0)
    feed.receive(table.feed(feed.poll(1.0), 1.0), 1.0)
    assert table.snapshots == 2 and device.count_requests == 1 and device.unacked == 0
    tray.take(chips.take(2_500), 2.0, seat=1)
    feed.receive(table.feed(feed.poll(2.05), 2.05), 2.05)
    assert table.counted()[0] == 27_500  # not yet: the tube's debounce
    feed.receive(table.feed(feed.poll(2.1), 2.1), 2.1)
    assert table.counted()[0] == 30_000 and table.told[-1][0] == 5
    first = device.session_id
    feed.receive(table.session.reset(), 3.0)
    feed.receive(table.feed(feed.poll(3.0), 3.0), 3.0)
    assert device.session_id != first and len(table.hellos) == 2 and table.snapshots == 3
    assert table.counted()[0] == 30_000
