"""Players, the dealer who pays, and their faults: whole shoes in memory, checked against the truth log."""

from __future__ import annotations

import tomllib
from collections import Counter, defaultdict
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.game.cards import Card
from controller.game.chips import ChipRange, ChipRegistry, ChipStatus, parse_uid
from controller.game.coup import CoupResult
from controller.game.payouts import Outcome
from controller.game.rules import BUILTIN_RULESETS, COMMISSION, Bet, CommissionCollection
from controller.game.settlement import TableLimits, Wager, settle, validate_wagers
from controller.game.wagers import Spot
from hw_sim.chipset import DENOMINATIONS, ChipSet, ForeignKind, chips_for
from hw_sim.core import DealerMode, Dialect, ShoeSimulator, SimConfig
from hw_sim.faults import MONEY_FAULTS, Fault, FaultPlan, FaultSpecError, ScriptedFault, parse_script
from hw_sim.money import MoneyConfig, MoneyConfigError, SpotRead
from hw_sim.players import STRATEGY_ORDER, BetsError, Players, ScriptedWagers, Strategy, parse_bets
from tests.hw_sim.test_core import PromptingController, converse, without_time

SHOE_END = replace(COMMISSION, commission_collection=CommissionCollection.AT_SHOE_END)


def run(money: MoneyConfig, *, faults: FaultPlan | None = None, seed: int = 5, decks: int = 2) -> ShoeSimulator:
    sim = ShoeSimulator(
        SimConfig(
            decks=decks,
            seed=seed,
            pace=0.0,
            dealer=DealerMode.SELF,
            money=money,
            faults=faults or FaultPlan(),
        )
    )
    assert sim.money is not None
    sim.money.keep_reads = True
    converse(sim)
    return sim


def money_faults(*items: tuple[int, str, int | None]) -> FaultPlan:
    return FaultPlan(script=tuple(ScriptedFault(0, Fault(name), 1, at_coup=c, seat=s) for c, name, s in items))


def of(sim: ShoeSimulator, event: str, **match: Any) -> list[dict[str, Any]]:
    return [e for e in sim.truth.of(event) if all(e.get(k) == v for k, v in match.items())]


# -- the chip set ----------------------------------------------------------------------------------------


def test_the_registry_file_reads_back_as_the_same_ranges_and_foreign_chips_resolve_to_their_status() -> None:
    chips = ChipSet()
    data = tomllib.loads(chips.registry_toml())
    status = {s.value: s for s in ChipStatus}
    ranges = [
        ChipRange(
            parse_uid(r["first"]),
            parse_uid(r.get("last", r["first"])),
            round(float(r["value"]) * 100),
            status[r.get("status", "in_play")],
        )
        for r in data["range"]
    ]
    assert ranges == list(chips.ranges())
    registry = ChipRegistry(ranges)
    assert sorted({r.cents for r in ranges if r.status is ChipStatus.IN_PLAY}) == sorted(DENOMINATIONS)
    assert any(r.first == r.last and "last" not in d for r, d in zip(ranges, data["range"], strict=True))
    import random

    rng = random.Random(1)
    for kind in ForeignKind:
        assert registry.resolve(chips.foreign(kind, rng)).status.value == kind.value


def test_the_tables_own_chip_file_reader_reads_the_chip_set() -> None:
    """controller/chipfile.py is helper table's; skipped until it is on this branch."""
    chipfile = pytest.importorskip("controller.chipfile")
    assert chipfile.parse_chips(ChipSet().registry_toml()).ranges == ChipSet().ranges()


@given(st.integers(0, 2_000_000).map(lambda n: n * 25))
def test_a_stake_is_the_fewest_chips_each_with_its_own_uid(cents: int) -> None:
    chips = ChipSet()
    registry = chips.registry()
    stack = chips.take(cents)
    assert len(set(stack)) == len(stack)
    assert registry.resolve_all(list(stack)).cents == cents
    # greedy is optimal for this chip set: no denomination could be replaced by fewer larger ones
    counts = Counter(chips_for(cents))
    for small, large in zip(DENOMINATIONS[1:], DENOMINATIONS, strict=False):
        assert counts[small] * small < large


def test_chips_for_refuses_what_no_chips_make() -> None:
    with pytest.raises(ValueError, match="cannot be made of chips"):
        chips_for(510)


# -- the players -----------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    count=st.integers(1, 9),
    rules=st.sampled_from(sorted(BUILTIN_RULESETS)),
    offered=st.sets(st.sampled_from([b for b in Bet if b not in (Bet.BANKER, Bet.PLAYER, Bet.TIE)])),
    same_side=st.booleans(),
)
def test_every_wager_a_player_intends_is_within_the_rules(
    seed: int, count: int, rules: str, offered: set[Bet], same_side: bool
) -> None:
    ruleset = BUILTIN_RULESETS[rules].with_side_bets(frozenset(offered))
    limits = TableLimits(
        minimum_cents=1_000, maximum_cents=20_000, side_maximum_cents=2_500, main_wager_same_side=same_side
    )
    players = Players(count, seed, ruleset, limits)
    seats_betting: set[int] = set()
    for coup in range(1, 30):
        for seat, wagers in players.wagers(1, coup).items():
            validate_wagers(wagers, limits, ruleset)
            seats_betting.add(seat)
    assert seats_betting == set(range(1, count + 1))


def test_the_strategies_go_round_the_table() -> None:
    players = Players(7, 1, COMMISSION, TableLimits())
    assert [players.strategy(s) for s in range(1, 8)] == [*STRATEGY_ORDER, *STRATEGY_ORDER[:2]]
    bets: dict[int, set[Bet]] = defaultdict(set)
    leaver_coups = 0
    for coup in range(1, 40):
        wagers = players.wagers(1, coup)
        leaver_coups += 5 in wagers
        for seat, ws in wagers.items():
            bets[seat] |= {w.bet for w in ws}
    assert bets[1] == {Bet.BANKER} and bets[2] == {Bet.PLAYER}
    assert bets[3] == {Bet.BANKER, Bet.PLAYER}
    assert bets[4] - {Bet.BANKER, Bet.PLAYER} and {Bet.TIE, Bet.DRAGON_BONUS_PLAYER, Bet.DRAGON_BONUS_BANKER} & bets[4]
    assert 2 <= leaver_coups <= 6  # the leaver left
    assert Players(7, 1, COMMISSION, TableLimits()).wagers(1, 1) == Players(7, 1, COMMISSION, TableLimits()).wagers(
        1, 1
    )
    players.new_shoe(2)
    assert 5 in players.wagers(2, 1)  # a new player sits down at the next shoe
    assert players.strategy(5) is Strategy.LEAVER


def test_scripted_bets_parse_and_bad_lines_are_named() -> None:
    lines = [
        "# coup 1",
        '{"shoe": 1, "coup": 1, "seat": 2, "wagers": {"banker": "25.00", "tie": "5"}}',
        "",
    ]
    assert parse_bets(lines, "b.jsonl") == [ScriptedWagers(1, 1, 2, (Wager(Bet.BANKER, 2500), Wager(Bet.TIE, 500)))]
    bad = {
        '{"shoe": 1, "coup": 1, "seat": 2, "wagers": {"banker": 25}}': "is not dollars",
        '{"shoe": 1, "coup": 1, "seat": 15, "wagers": {}}': "seat must be",
        '{"shoe": 1, "coup": 1, "seat": 2, "wagers": {"baccarat": "5.00"}}': "is not a wager",
        '{"shoe": 1, "coup": 0, "seat": 2, "wagers": {}}': "coup must be",
        '{"shoe": 1, "coup": 1, "seat": 2, "wagers": {}, "x": 1}': "unknown key",
        '{"shoe": 1, "coup": 1, "seat": 2, "wagers": {"tie": "0.00"}}': "must be positive",
        "[1]": "expected an object",
        "{": "not JSON",
    }
    for line, words in bad.items():
        with pytest.raises(BetsError, match=words) as info:
            parse_bets(["", line], "b.jsonl")
        assert info.value.where == "b.jsonl:2"
    twice = '{"shoe": 1, "coup": 1, "seat": 2, "wagers": {"banker": "25.00"}}'
    with pytest.raises(BetsError, match="already has its wagers"):
        parse_bets([twice, twice])
    with pytest.raises(MoneyConfigError, match="cannot be made of chips"):
        MoneyConfig(bets=(ScriptedWagers(1, 1, 1, (Wager(Bet.BANKER, 2510),)),))


def test_money_faults_are_scripted_by_coup() -> None:
    assert parse_script(['{"at_coup": 3, "fault": "late_bet", "seat": 2}']) == [
        ScriptedFault(0, Fault.LATE_BET, 1, at_coup=3, seat=2)
    ]
    with pytest.raises(FaultSpecError, match="at_coup"):
        parse_script(['{"at_card": 3, "fault": "underpay"}'])
    with pytest.raises(FaultSpecError, match="at_card"):
        parse_script(['{"at_coup": 3, "fault": "misdraw"}'])


# -- whole shoes -----------------------------------------------------------------------------------------


def test_same_seed_same_money_and_money_faults_change_neither_the_cards_nor_the_wagers() -> None:
    a = run(MoneyConfig(players=6))
    b = run(MoneyConfig(players=6))
    assert without_time(a.truth.events) == without_time(b.truth.events)
    other = run(MoneyConfig(players=6), seed=6)
    assert [e["stake"] for e in a.truth.of("wager")] != [e["stake"] for e in other.truth.of("wager")]
    # a loser left on its spot rides on the next coup; every other fault leaves the wagers as they were
    noisy = run(MoneyConfig(players=6), faults=FaultPlan(dict.fromkeys(MONEY_FAULTS - {Fault.LOSER_NOT_TAKEN}, 0.1)))
    assert [e["card"] for e in noisy.truth.of("card")] == [e["card"] for e in a.truth.of("card")]
    assert [e["stake"] for e in noisy.truth.of("wager")] == [e["stake"] for e in a.truth.of("wager")]
    assert len({e["kind"] for e in noisy.truth.of("fault")}) == len(MONEY_FAULTS) - 1


def test_bets_are_down_before_the_first_card_and_nothing_touches_a_locked_spot() -> None:
    sim = run(MoneyConfig(players=9))
    events = sim.truth.events
    coup_of_card: dict[int, int] = {}
    coup = 1
    cards_in_coup = 0
    for i, e in enumerate(events):
        if e["event"] == "card" and e["role"] == "coup":
            if cards_in_coup == 0:
                coup_of_card[coup] = i
            cards_in_coup += 1
        elif e["event"] == "declare":
            coup, cards_in_coup = coup + 1, 0
    for i, e in enumerate(events):
        if e["event"] == "spot" and e["why"] == "bet":
            assert i < coup_of_card[e["coup"]]
    locked = False
    for e in events:
        if e["event"] == "lock":
            locked = True
        elif e["event"] == "settle":
            locked = False
        elif e["event"] == "spot" and locked:
            raise AssertionError(f"a locked spot changed without a fault: {e}")
    assert len(sim.truth.of("lock")) == len(sim.truth.of("declare")) > 10


def check_money(sim: ShoeSimulator) -> None:
    """Every locked wager settled by settle(), paid by the dealer as settled (or off by the fault named),
    every commission box collected in full."""
    assert sim.money is not None
    rules, limits = sim.money.rules, sim.money.limits
    results = {
        (e["shoe"], e["coup"]): CoupResult(
            tuple(Card.parse(c) for c in e["player"]), tuple(Card.parse(c) for c in e["banker"])
        )
        for e in sim.truth.of("settle")
    }
    payouts = {(p["shoe"], p["coup"], p["seat"], p["bet"]): p for p in sim.truth.of("payout")}
    owed: Counter[int] = Counter()
    faults = Counter(e["kind"] for e in sim.truth.of("fault"))
    seen_faults: Counter[str] = Counter()
    for lock in sim.truth.of("lock"):
        key = (lock["shoe"], lock["coup"])
        if key not in results:
            continue
        by_seat: dict[int, list[Wager]] = defaultdict(list)
        for w in lock["wagers"]:
            by_seat[w["seat"]].append(Wager(Bet(w["bet"]), w["stake"]))
        for seat, wagers in by_seat.items():
            for o in settle(results[key], wagers, rules, limits).outcomes:
                p = payouts.pop((*key, seat, o.bet.value))
                assert (p["stake"], p["outcome"]) == (o.stake_cents, o.outcome.value)
                due = {Outcome.WIN: o.payout_cents - o.returned_cents, Outcome.LOSE: -o.stake_cents}
                assert p["expected"] == due.get(o.outcome, 0)
                fault = p.get("fault")
                if fault is not None:
                    seen_faults[fault] += 1
                if fault is None:
                    assert p["amount"] == p["expected"]
                elif fault == "underpay":
                    assert 0 < p["expected"] - p["amount"] <= 500
                elif fault == "overpay":
                    assert p["amount"] - p["expected"] == 500
                else:
                    assert fault == "loser_not_taken" and p["amount"] == 0
                owed[seat] += o.commission_owed_cents
                if o.commission_owed_cents:
                    assert p["owed"] == o.commission_owed_cents
        # a box is collected when its seat leaves or the shoe ends
    assert payouts == {}, "a payout for no locked wager"
    collected: Counter[int] = Counter()
    for c in sim.truth.of("commission"):
        assert c["collected"] == c["owed"]
        collected[c["seat"]] += c["collected"]
    assert collected == +owed
    for kind in ("underpay", "overpay", "loser_not_taken"):
        assert seen_faults[kind] == faults[kind]


@pytest.mark.parametrize("rules", [COMMISSION, SHOE_END, BUILTIN_RULESETS["ez"], BUILTIN_RULESETS["super6"]])
def test_the_money_in_the_truth_balances(rules: Any) -> None:
    sim = run(MoneyConfig(players=9, rules=rules))
    check_money(sim)
    assert {e["outcome"] for e in sim.truth.of("payout")} == {"win", "lose", "push"}
    if rules is SHOE_END:
        assert {e["why"] for e in sim.truth.of("commission")} == {"shoe_end", "seat_left"}


def test_the_money_balances_with_every_dealer_fault() -> None:
    faults = FaultPlan({Fault.UNDERPAY: 0.1, Fault.OVERPAY: 0.1, Fault.LOSER_NOT_TAKEN: 0.1, Fault.LATE_BET: 0.05})
    sim = run(MoneyConfig(players=9, rules=SHOE_END), faults=faults)
    check_money(sim)
    kinds = Counter(e["kind"] for e in sim.truth.of("fault"))
    assert kinds["underpay"] and kinds["overpay"] and kinds["loser_not_taken"] and kinds["late_bet"]


def test_a_seat_that_leaves_pays_its_box_on_the_commission_spot() -> None:
    sim = run(MoneyConfig(players=5, rules=SHOE_END, leave_after_coups=3))
    left = of(sim, "seat_left", seat=5)
    assert left
    last_bet = max(e["coup"] for e in of(sim, "wager", seat=5) if e["shoe"] == 1)
    assert left[0]["coup"] == last_bet + 3
    paid = of(sim, "commission", seat=5, why="seat_left")
    if left[0]["box"]:
        assert paid[0]["collected"] == left[0]["box"]
        put = [e for e in of(sim, "spot", seat=5, spot="commission") if e["why"] == "commission"]
        assert put[0]["cents"] == left[0]["box"]
    ends = of(sim, "commission", why="shoe_end")
    assert ends and all(e["seat"] != 5 for e in ends)


def test_each_fault_shows_in_the_truth() -> None:
    script = money_faults(
        (2, "late_bet", 1),
        (3, "pulled_bet", 2),
        (4, "unknown_chip", 4),
        (5, "underpay", None),
        (6, "overpay", None),
        (7, "loser_not_taken", None),
        (8, "dropped_read", 1),
        (9, "duplicate_read", 2),
        (10, "ghost_read", 4),
        (1, "card_left", 5),  # seat 5's player, the leaver: their card stays behind when they go
    )
    sim = run(MoneyConfig(players=5), faults=script)
    faults = {e["kind"]: e for e in sim.truth.of("fault")}
    assert set(faults) == {f.value for f in MONEY_FAULTS}
    assert sim.money is not None
    registry = sim.money.registry
    for kind, coup in (("late_bet", 2), ("pulled_bet", 3)):
        f = faults[kind]
        assert f["coup"] == coup and f["locked"] != f["seen"]
        assert (f["seen"] > f["locked"]) == (kind == "late_bet")
        spots = of(sim, "spot", coup=coup, seat=f["seat"], spot=f["spot"])
        assert [s["why"] for s in spots][:2] == ["bet", kind.split("_")[0]]
        locked = of(sim, "spot", coup=coup, seat=f["seat"], spot=f["spot"], why="bet")[0]["uids"]
        payout = of(sim, "payout", coup=coup, seat=f["seat"], bet=f["spot"])[0]
        after = spots[2]
        # put back as locked before the payout; a winner paid on the locked stack in the same move
        assert after["why"] == {"win": "pay", "lose": "restored", "push": "restored"}[payout["outcome"]]
        assert after["uids"][: len(locked)] == locked
        assert after["cents"] == f["locked"] + max(payout["amount"], 0)
    chip = faults["unknown_chip"]
    assert registry.resolve(chip["chip"]).status.value == chip["status"] != "in_play"
    placed = of(sim, "spot", coup=4, seat=4, spot=chip["spot"], why="bet")[0]
    assert chip["chip"] in placed["uids"]
    wager = of(sim, "wager", coup=4, seat=4, bet=chip["spot"])[0]
    assert wager["stake"] == placed["cents"]  # the foreign chip does not count
    for kind in ("underpay", "overpay"):
        f = faults[kind]
        paid = of(sim, "spot", coup=f["coup"], seat=f["seat"], spot=f["spot"], why="pay")[0]
        assert paid["cents"] == f["seen"] != f["expected"]
    left = faults["loser_not_taken"]
    assert left["coup"] >= 7 and left["seen"] > 0
    assert not of(sim, "spot", coup=left["coup"], seat=left["seat"], spot=left["spot"], why="take")
    rides = of(sim, "wager", coup=left["coup"] + 1, seat=left["seat"], bet=left["spot"])  # on the next coup
    assert rides and rides[0]["stake"] >= left["seen"]


def test_read_faults_show_in_the_reads_and_are_put_right() -> None:
    script = money_faults((2, "dropped_read", 1), (3, "duplicate_read", 1), (4, "ghost_read", 1))
    # the ASCII shoe: nothing to acknowledge, so the shoe runs on its own here
    sim = ShoeSimulator(
        SimConfig(dialect=Dialect.ASCII, decks=1, seed=5, pace=0.5, money=MoneyConfig(players=2), faults=script)
    )
    assert sim.money is not None
    sim.money.keep_reads = True
    reads = []
    now = 0.0
    sim.start(now)
    while not sim.finished and now < 400:
        sim.poll(now)
        reads += [r for r in sim.money.due_reads(now) if isinstance(r, SpotRead)]  # the spots' (not the cards')
        now += 0.05
    faults = {e["kind"]: e for e in sim.truth.of("fault")}
    dropped = faults["dropped_read"]
    spot = Spot(dropped["spot"])
    mine = [r for r in reads if r.seat == 1 and r.spot is spot]
    chip = parse_uid(dropped["chip"])
    at = next(i for i, r in enumerate(mine) if r.at == pytest.approx(dropped["t"]) and chip not in r.uids)
    assert chip in mine[at + 1].uids and mine[at + 1].at - mine[at].at == pytest.approx(0.25)
    ghost = faults["ghost_read"]
    chip = parse_uid(ghost["chip"])
    on_neighbour = [r for r in reads if r.seat == 1 and r.spot is Spot(ghost["neighbour"])]
    with_ghost = next(i for i, r in enumerate(on_neighbour) if chip in r.uids and r.at == pytest.approx(ghost["t"]))
    assert chip not in on_neighbour[with_ghost + 1].uids
    twice = Counter((r.at, r.seat, r.spot, r.uids) for r in reads)
    assert max(twice.values()) == 2


def test_a_scripted_wager_against_the_rules_is_refused_at_the_lock_and_handed_back() -> None:
    bets = parse_bets(
        [
            '{"shoe": 1, "coup": 1, "seat": 1, "wagers": {"banker": "25.00", "dragon_bonus_player": "5.00"}}',
            '{"shoe": 1, "coup": 1, "seat": 2, "wagers": {"tie": "5.00"}}',
            '{"shoe": 1, "coup": 2, "seat": 3, "wagers": {"player": "7.00"}}',
        ]
    )
    sim = run(MoneyConfig(bets=tuple(bets)), decks=1)
    assert [(e["seat"], e["bet"], e.get("violation")) for e in sim.truth.of("wager")] == [
        (1, "banker", None),
        (1, "dragon_bonus_player", None),
        (2, "tie", "lone_tie_below_minimum"),
        (3, "player", "not_unit_multiple"),
    ]
    lock1, lock2 = sim.truth.of("lock")[:2]
    assert [w["seat"] for w in lock1["wagers"]] == [1, 1] and lock1["refused"] == [
        {"seat": 2, "bet": "tie", "stake": 500}
    ]
    assert lock2["wagers"] == [] and lock2["refused"][0]["bet"] == "player"
    assert of(sim, "spot", seat=2, why="refused") and not of(sim, "payout", seat=2)
    check_money(sim)


def test_prompt_dealer_places_the_bets_before_the_deal() -> None:
    from firmware_protocol.session import ControllerSession, ShoeEvent
    from hw_sim.link import MemoryLink

    sim = ShoeSimulator(SimConfig(decks=1, seed=2, pace=0.0, dealer=DealerMode.PROMPT, money=MoneyConfig(players=3)))
    link = MemoryLink(sim)
    ctrl = ControllerSession()
    table = PromptingController()
    while not link.finished:
        assert link.now < 600
        for chunk in link.read():
            for event in ctrl.receive(chunk, link.now):
                if isinstance(event, ShoeEvent):
                    link.write(ctrl.acknowledge(event.number, event.key))
                    due = table.on(event.message)
                    if due is not None:
                        link.write(ctrl.prompt(due))
        _, out = ctrl.poll(link.now)
        if out:
            link.write(out)
    assert len(sim.truth.of("lock")) == len(sim.truth.of("declare")) == table.coups
    check_money(sim)


def test_a_void_leaves_the_wagers_on_their_spots_for_the_redeal() -> None:
    """The table voids a halted coup: the stacks stay (a late chip is taken back first) and lock again."""
    from controller.game.cards import parse_cards
    from hw_sim.money import MoneyTable
    from hw_sim.truth import TruthLog

    truth = TruthLog(keep=True)
    money = MoneyTable(MoneyConfig(players=3), money_faults((1, "late_bet", 1)), 4, truth)
    money.shoe_started(1)

    def settle_steps(now: float) -> None:
        while money.busy:
            money.step(now)

    assert money.open_coup(1, 0.0)
    settle_steps(0.0)
    before = dict(money.spots)
    money.on_coup_card(parse_cards(["9H"])[0], 1.0)  # the lock; the late bet follows
    settle_steps(1.0)
    assert money.spots != before
    money.voided(2.0)
    settle_steps(2.0)
    assert money.spots == before
    assert money.open_coup(2, 3.0)  # the redeal: nothing new is placed
    settle_steps(3.0)
    assert money.spots == before
    for card in parse_cards(["9H", "2C", "8D", "3S", "KD"]):  # Player 7 stands, Banker 5 draws
        money.on_coup_card(card, 4.0)
    locks = truth.of("lock")
    assert locks[0]["wagers"] == locks[1]["wagers"] and locks[1]["coup"] == 2
    assert [e["why"] for e in truth.of("spot")].count("bet") == sum(len(s) > 0 for s in before.values())
    money.declared(5.0)
    settle_steps(5.0)
    assert len(truth.of("payout")) == len(locks[1]["wagers"]) and money.spots == {}


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 100_000),
    players=st.integers(1, 9),
    rules=st.sampled_from([COMMISSION, SHOE_END, BUILTIN_RULESETS["ez"], BUILTIN_RULESETS["super6"]]),
    rates=st.dictionaries(st.sampled_from(sorted(MONEY_FAULTS, key=lambda f: f.value)), st.floats(0, 0.3)),
)
def test_whatever_the_seed_and_the_faults_the_money_balances(
    seed: int, players: int, rules: Any, rates: dict[Fault, float]
) -> None:
    sim = run(MoneyConfig(players=players, rules=rules), faults=FaultPlan(rates), seed=seed, decks=1)
    check_money(sim)
    for lock in sim.truth.of("lock"):
        by_seat: dict[int, list[Wager]] = defaultdict(list)
        for w in lock["wagers"]:
            by_seat[w["seat"]].append(Wager(Bet(w["bet"]), w["stake"]))
        for wagers in by_seat.values():
            validate_wagers(wagers, sim.config.money.limits if sim.config.money else None, rules)


def test_the_chips_move_only_once_the_table_has_what_the_shoe_sent() -> None:
    """Binary: a money step waits for the shoe's events to be acknowledged (the first card that locked the
    bets, the DECLARE that settled them), so that the table never sees a payout before its declare."""
    from firmware_protocol.messages import Button, ButtonPressed
    from firmware_protocol.session import ControllerSession, ShoeEvent

    sim = ShoeSimulator(SimConfig(decks=1, seed=5, pace=0.0, dealer=DealerMode.SELF, money=MoneyConfig(players=3)))
    ctrl = ControllerSession()
    now = 0.0
    sim.start(now)
    held: list[ShoeEvent] = []
    while not held:  # acknowledge everything up to the first DECLARE, and hold that one back
        for chunk in sim.poll(now):
            for event in ctrl.receive(chunk, now):
                if not isinstance(event, ShoeEvent):
                    continue
                if isinstance(event.message, ButtonPressed) and event.message.button is Button.DECLARE:
                    held.append(event)
                elif not held:
                    sim.receive(ctrl.acknowledge(event.number, event.key), now)
        now += 0.05
        assert now < 30
    assert sim.truth.of("settle") and of(sim, "spot", why="bet")
    for _ in range(40):
        sim.poll(now)
        now += 0.05
    assert not sim.truth.of("payout")  # the DECLARE is not acknowledged: no chip moves
    sim.receive(ctrl.acknowledge(held[0].number, held[0].key), now)
    for _ in range(40):
        sim.poll(now)
        now += 0.05
    assert sim.truth.of("payout")
