"""Settlement: every wager against every kind of coup, EZ and Super 6 pays, the Dragon Bonus ladder,
commission at payout and on the shoe-end ledger, and every table-limit refusal.

Coups are dealt from real card tokens through the coup machine; expected amounts are written out by hand.
"""

from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.game.cards import DECK, parse_cards
from controller.game.coup import Coup, CoupResult, Winner
from controller.game.errors import RulesViolation
from controller.game.rules import COMMISSION, EZ, SUPER6, Bet, CommissionCollection, DragonBonus, Ruleset
from controller.game.settlement import (
    CommissionLedger,
    Outcome,
    Settlement,
    TableLimits,
    Wager,
    WagerError,
    WagerOutcome,
    WagerRule,
    settle,
    validate_wagers,
)

B, P, T = Bet.BANKER, Bet.PLAYER, Bet.TIE
PP, BP = Bet.PLAYER_PAIR, Bet.BANKER_PAIR
DBP, DBB = Bet.DRAGON_BONUS_PLAYER, Bet.DRAGON_BONUS_BANKER
D7, P8 = Bet.DRAGON_7, Bet.PANDA_8

COMMISSION_AT_SHOE_END = replace(COMMISSION, commission_collection=CommissionCollection.AT_SHOE_END)


def coup_of(tokens: str) -> CoupResult:
    return Coup.from_cards(parse_cards(tokens.split())).result()


def one(
    result: CoupResult,
    bet: Bet,
    cents: int,
    rules: Ruleset = COMMISSION,
    limits: TableLimits | None = None,
) -> WagerOutcome:
    return settle(result, [Wager(bet, cents)], rules, limits)[bet]


# The outcome classes, in shoe order P1 B1 P2 B2 [P3] [B3].
COUPS = {
    "banker_natural": "2S 9D 3H KC",  # Banker 9 natural beats 5, margin 4
    "banker_plain": "6S 4D KH 3C",  # Banker two-card 7 beats 6, margin 1
    "banker_3card7": "6S 3D KH AC 3H",  # Banker three-card 7 beats 6, margin 1
    "banker_six": "2S 4D 3H 2C KD",  # Banker two-card 6 beats three-card 5, margin 1
    "player_natural": "5S 2D 3H 3C",  # Player 8 natural beats 5, margin 3
    "player_plain": "7S 2D KH 3C KS",  # Player two-card 7 beats three-card 5, margin 2
    "player_3card8": "2S KD 3H 6C 3D",  # Player three-card 8 beats 6, margin 2
    "tie_natural": "9S 9D KH QC",  # 9-9, both natural
    "tie_plain": "7S 4D KH 3C",  # 7-7, no natural
    "pairs_both": "3S 5D 3H 5C 8D",  # Player 3-3, Banker 5-5; Banker three-card 8 beats 6
    "pairs_none": "KS JS QH TC 9D KD",  # K-Q and J-T: same value, not same rank; Player 9-0 by three cards
}


def test_the_coups_are_what_their_names_say() -> None:
    # A guard on the fixtures: if the coup machine changes, the table below stops meaning anything.
    r = {name: coup_of(tokens) for name, tokens in COUPS.items()}
    assert r["banker_natural"].winner is Winner.BANKER and r["banker_natural"].natural_hand == "banker"
    assert r["banker_plain"].winner is Winner.BANKER and not r["banker_plain"].natural
    assert r["banker_plain"].banker_total == 7 and not r["banker_plain"].banker_three_cards
    assert r["banker_3card7"].banker_total == 7 and r["banker_3card7"].banker_three_cards
    assert r["banker_six"].winner is Winner.BANKER and r["banker_six"].banker_total == 6
    assert r["player_natural"].winner is Winner.PLAYER and r["player_natural"].natural_hand == "player"
    assert r["player_plain"].winner is Winner.PLAYER and not r["player_plain"].natural
    assert r["player_3card8"].player_total == 8 and r["player_3card8"].player_three_cards
    assert r["tie_natural"].winner is Winner.TIE and r["tie_natural"].natural_hand == "both"
    assert r["tie_plain"].winner is Winner.TIE and not r["tie_plain"].natural
    assert r["pairs_both"].player_pair and r["pairs_both"].banker_pair
    assert not r["pairs_none"].player_pair and not r["pairs_none"].banker_pair
    assert r["pairs_none"].margin == 9 and not r["pairs_none"].natural
    others = [n for n in COUPS if n != "pairs_both"]
    assert not any(r[n].player_pair or r[n].banker_pair for n in others)


# Net for the player on a $10 (1000 cent) wager under the Commission ruleset (5 % at payout).
# Columns: Banker, Player, Tie, Player Pair, Banker Pair, Dragon Bonus Player, Dragon Bonus Banker,
# Dragon 7, Panda 8.
NET_ON_TEN_DOLLARS = {
    #                  B     P      T      PP     BP     DBP    DBB    D7     P8
    "banker_natural": (950, -1000, -1000, -1000, -1000, -1000, 1000, -1000, -1000),
    "banker_plain": (950, -1000, -1000, -1000, -1000, -1000, -1000, -1000, -1000),
    "banker_3card7": (950, -1000, -1000, -1000, -1000, -1000, -1000, 40000, -1000),
    "banker_six": (950, -1000, -1000, -1000, -1000, -1000, -1000, -1000, -1000),
    "player_natural": (-1000, 1000, -1000, -1000, -1000, 1000, -1000, -1000, -1000),
    "player_plain": (-1000, 1000, -1000, -1000, -1000, -1000, -1000, -1000, -1000),
    "player_3card8": (-1000, 1000, -1000, -1000, -1000, -1000, -1000, -1000, 25000),
    "tie_natural": (0, 0, 8000, -1000, -1000, 0, 0, -1000, -1000),
    "tie_plain": (0, 0, 8000, -1000, -1000, -1000, -1000, -1000, -1000),
    "pairs_both": (950, -1000, -1000, 11000, 11000, -1000, -1000, -1000, -1000),
    "pairs_none": (-1000, 1000, -1000, -1000, -1000, 30000, -1000, -1000, -1000),
}
BET_COLUMNS = (B, P, T, PP, BP, DBP, DBB, D7, P8)


@pytest.mark.parametrize("coup_name", sorted(NET_ON_TEN_DOLLARS))
def test_every_bet_against_every_outcome_class(coup_name: str) -> None:
    result = coup_of(COUPS[coup_name])
    # Each bet settled alone so the expectations are per wager; all together must give the same.
    wagers = [Wager(bet, 1000) for bet in BET_COLUMNS]
    together = settle(result, wagers, COMMISSION)
    for bet, expected_net in zip(BET_COLUMNS, NET_ON_TEN_DOLLARS[coup_name], strict=True):
        alone = one(result, bet, 1000)
        assert alone.net_cents == expected_net, (coup_name, bet)
        assert together[bet] == alone
        if expected_net > 0 or (bet is B and expected_net == 950):
            assert alone.outcome is Outcome.WIN and alone.returned_cents == 1000
        elif expected_net == 0:
            assert alone.outcome is Outcome.PUSH and alone.returned_cents == 1000 and alone.paid_cents == 0
        else:
            assert alone.outcome is Outcome.LOSE and alone.returned_cents == 0 and alone.paid_cents == 0
    assert together.net_cents == sum(NET_ON_TEN_DOLLARS[coup_name])


def test_winning_banker_wager_in_full() -> None:
    o = one(coup_of(COUPS["banker_plain"]), B, 10_000)
    assert o.outcome is Outcome.WIN
    assert o.pays == 1
    assert o.paid_cents == 10_000
    assert o.commission_cents == 500
    assert o.commission_owed_cents == 0
    assert o.net_cents == 9_500
    assert o.payout_cents == 19_500  # stake back plus $95


def test_settlement_totals_and_lookup() -> None:
    s = settle(coup_of(COUPS["pairs_both"]), [Wager(B, 2000), Wager(PP, 500), Wager(T, 500)], COMMISSION)
    assert isinstance(s, Settlement)
    assert s.ruleset == "commission"
    assert s.staked_cents == 3000
    assert s.paid_cents == 2000 + 5500
    assert s.commission_cents == 100
    assert s.net_cents == 1900 + 5500 - 500
    assert s.payout_cents == 2000 + 1900 + 500 + 5500
    assert s.to_dict()["wagers"][1] == {
        "bet": "player_pair",
        "stake_cents": 500,
        "outcome": "win",
        "pays": "11",
        "paid_cents": 5500,
        "returned_cents": 500,
        "commission_cents": 0,
        "commission_owed_cents": 0,
        "net_cents": 5500,
        "payout_cents": 6000,
    }
    with pytest.raises(KeyError):
        s[Bet.DRAGON_7]


# EZ baccarat ------------------------------------------------------------------------------------------


def test_ez_banker_three_card_seven_pushes() -> None:
    o = one(coup_of(COUPS["banker_3card7"]), B, 1000, EZ)
    assert o.outcome is Outcome.PUSH
    assert o.returned_cents == 1000 and o.paid_cents == 0 and o.net_cents == 0 and o.payout_cents == 1000


def test_ez_other_banker_wins_pay_even_money_without_commission() -> None:
    # A two-card 7 is not the EZ push.
    assert one(coup_of(COUPS["banker_plain"]), B, 1000, EZ).net_cents == 1000
    assert one(coup_of(COUPS["banker_natural"]), B, 1000, EZ).net_cents == 1000
    o = one(coup_of(COUPS["pairs_both"]), B, 1000, EZ)
    assert o.net_cents == 1000 and o.commission_cents == 0


def test_ez_dragon_7_still_pays_when_the_banker_wager_pushes() -> None:
    s = settle(coup_of(COUPS["banker_3card7"]), [Wager(B, 2500), Wager(D7, 500)], EZ)
    assert s[B].outcome is Outcome.PUSH
    assert s[D7].paid_cents == 20_000
    assert s.net_cents == 20_000


# Super 6 ----------------------------------------------------------------------------------------------


def test_super6_banker_six_pays_half() -> None:
    o = one(coup_of(COUPS["banker_six"]), B, 1000, SUPER6)
    assert o.outcome is Outcome.WIN
    assert o.pays == Fraction(1, 2)
    assert o.paid_cents == 500 and o.net_cents == 500 and o.commission_cents == 0


def test_super6_three_card_six_pays_half_too() -> None:
    # Player 2+3+K = 5; Banker 2+K = 2 draws the 4: a three-card 6.
    o = one(coup_of("2S 2D 3H KC KD 4S"), B, 2000, SUPER6)
    assert o.paid_cents == 1000


@pytest.mark.parametrize(
    ("stake", "paid"),
    [(1001, 500), (1003, 501), (1, 0), (2505, 1252)],
)
def test_super6_half_pay_rounds_down_to_the_cent(stake: int, paid: int) -> None:
    assert one(coup_of(COUPS["banker_six"]), B, stake, SUPER6).paid_cents == paid


def test_super6_other_banker_wins_pay_even_money() -> None:
    assert one(coup_of(COUPS["banker_3card7"]), B, 1000, SUPER6).paid_cents == 1000
    assert one(coup_of(COUPS["banker_natural"]), B, 1000, SUPER6).paid_cents == 1000


def test_commission_game_pays_a_banker_six_in_full_less_commission() -> None:
    o = one(coup_of(COUPS["banker_six"]), B, 1000, COMMISSION)
    assert o.paid_cents == 1000 and o.commission_cents == 50


# Main wagers on a tie, Tie pays ----------------------------------------------------------------------


def test_main_wagers_lose_on_a_tie_when_the_rules_say_so() -> None:
    rules = replace(COMMISSION, tie_pushes_main_bets=False)
    assert one(coup_of(COUPS["tie_plain"]), B, 1000, rules).net_cents == -1000
    assert one(coup_of(COUPS["tie_plain"]), P, 1000, rules).net_cents == -1000


def test_tie_pays_nine_to_one_when_the_house_says() -> None:
    o = one(coup_of(COUPS["tie_plain"]), T, 500, COMMISSION.with_tie_pays(9))
    assert o.paid_cents == 4500


# Dragon Bonus -----------------------------------------------------------------------------------------

# Non-natural wins by every margin, both sides: (tokens, margin).
PLAYER_WINS_BY = {
    1: "7C KD JS 6H",
    2: "TS TH 7H AC 4D",
    3: "9S AH 8S 3C TD",
    4: "JC 8S 7H 5C QD",
    5: "7D AD JD 2S 9C",
    6: "9S JS 7C QD QS",
    7: "KS 8S 7C 3S 9C",
    8: "7H KC 8C 2H 3D 8S",
    9: "TD KH JD AC 9S 9D",
}
BANKER_WINS_BY = {
    1: "5D 8C AC 9C",
    2: "2C 4D JS KH TH",
    3: "8H 6D 3D TC 2C",
    4: "5H QH 7D 6D JC",
    5: "QS 5C JH TS JC",
    6: "5C JD QD 7S 6C",
    7: "AC KS 9S 7S JH",
    8: "4D JC QC 3H 7D 6H",
    9: "9D 8S 6C 7H 5S 4D",
}
# Net on a $10 Dragon Bonus by margin with the default ladder (9:30, 8:10, 7:6, 6:4, 5:2, 4:1; 1-3 lose).
LADDER_NET = {1: -1000, 2: -1000, 3: -1000, 4: 1000, 5: 2000, 6: 4000, 7: 6000, 8: 10_000, 9: 30_000}


@pytest.mark.parametrize("margin", range(1, 10))
@pytest.mark.parametrize(
    ("side_bet", "other_bet", "wins"),
    [(DBP, DBB, PLAYER_WINS_BY), (DBB, DBP, BANKER_WINS_BY)],
    ids=["player", "banker"],
)
def test_dragon_bonus_ladder(margin: int, side_bet: Bet, other_bet: Bet, wins: dict[int, str]) -> None:
    result = coup_of(wins[margin])
    assert result.margin == margin and not result.natural  # the fixture is what it claims
    assert one(result, side_bet, 1000).net_cents == LADDER_NET[margin]
    assert one(result, other_bet, 1000).net_cents == -1000  # the losing side's Dragon Bonus


def test_dragon_bonus_natural_win_pays_even_money_whatever_the_margin() -> None:
    # Natural 9 over natural 8: margin 1 would lose on the ladder, a natural win pays 1:1.
    assert one(coup_of("8S 9D KH QC"), DBB, 1000).net_cents == 1000
    assert one(coup_of("8S 9D KH QC"), DBP, 1000).net_cents == -1000
    # Natural 9 over a 0: margin 9 would pay 30:1 on the ladder, a natural pays 1:1.
    assert one(coup_of("9S KD KH QC"), DBP, 1000).net_cents == 1000


def test_dragon_bonus_natural_tie_pushes_both_sides() -> None:
    for tokens in ("9S 9D KH QC", "8S 8D KH QC"):
        for bet in (DBP, DBB):
            o = one(coup_of(tokens), bet, 1000)
            assert o.outcome is Outcome.PUSH and o.returned_cents == 1000


def test_dragon_bonus_natural_tie_loses_when_the_table_does_not_push_it() -> None:
    rules = replace(COMMISSION, dragon_bonus=DragonBonus(natural_tie_pushes=False))
    assert one(coup_of(COUPS["tie_natural"]), DBP, 1000, rules).net_cents == -1000


def test_dragon_bonus_custom_ladder_and_natural_pay() -> None:
    rules = replace(
        COMMISSION, dragon_bonus=DragonBonus(natural_win=Fraction(2), ladder={1: Fraction(1, 2), 9: Fraction(50)})
    )
    assert one(coup_of(PLAYER_WINS_BY[1]), DBP, 1000, rules).paid_cents == 500
    assert one(coup_of(PLAYER_WINS_BY[9]), DBP, 1000, rules).paid_cents == 50_000
    assert one(coup_of(PLAYER_WINS_BY[4]), DBP, 1000, rules).net_cents == -1000
    assert one(coup_of(COUPS["player_natural"]), DBP, 1000, rules).paid_cents == 2000


# Dragon 7 and Panda 8 --------------------------------------------------------------------------------


def test_dragon_7_needs_a_banker_win_with_three_cards() -> None:
    # Banker two-card 7 wins: not a Dragon 7.
    assert one(coup_of(COUPS["banker_plain"]), D7, 500).net_cents == -500
    # Three-card 7 tied with the Player's 7: not a win.
    tie_on_three_card_seven = coup_of("7S 3D KH AC 3H")
    assert tie_on_three_card_seven.winner is Winner.TIE and tie_on_three_card_seven.banker_three_cards
    assert one(tie_on_three_card_seven, D7, 500).net_cents == -500


def test_panda_8_needs_a_player_win_with_three_cards() -> None:
    # Player two-card 8 (a natural) wins: not a Panda 8.
    assert one(coup_of(COUPS["player_natural"]), P8, 500).net_cents == -500
    assert one(coup_of(COUPS["player_3card8"]), P8, 500).paid_cents == 12_500


# Commission --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stake", "rounding", "commission"),
    [
        (500, 1, 25),
        (1010, 1, 51),  # 50.5 cents rounds up
        (1001, 1, 51),  # 50.05 cents rounds up
        (2000, 1, 100),
        (500, 25, 25),
        (700, 25, 50),  # 35 cents up to the quarter
        (1500, 25, 75),
        (2500, 25, 125),
        (500, 100, 100),  # 25 cents up to the dollar
        (3000, 100, 200),  # $1.50 up to $2
        (500, 1000, 500),  # never more than the winnings
    ],
)
def test_commission_rounds_up(stake: int, rounding: int, commission: int) -> None:
    limits = TableLimits(commission_rounding_cents=rounding)
    o = one(coup_of(COUPS["banker_plain"]), B, stake, COMMISSION, limits)
    assert o.commission_cents == commission
    assert o.net_cents == stake - commission


def test_commission_only_on_winning_banker_wagers() -> None:
    s = settle(coup_of(COUPS["player_plain"]), [Wager(P, 1000), Wager(DBP, 1000)], COMMISSION)
    assert s.commission_cents == 0
    for tokens in (COUPS["tie_plain"], COUPS["player_plain"]):
        assert one(coup_of(tokens), B, 1000).commission_cents == 0


def test_commission_at_shoe_end_pays_the_full_win_and_leaves_commission_owed() -> None:
    o = one(coup_of(COUPS["banker_plain"]), B, 10_000, COMMISSION_AT_SHOE_END)
    assert o.paid_cents == 10_000
    assert o.commission_cents == 500
    assert o.commission_owed_cents == 500
    assert o.net_cents == 10_000
    assert o.payout_cents == 20_000


def test_ledger_across_coups_and_seats() -> None:
    rules = COMMISSION_AT_SHOE_END
    ledger = CommissionLedger()
    banker_wins = coup_of(COUPS["banker_natural"])
    # Coup 1: seats 1 and 2 win on Banker, seat 3 loses on Player.
    assert ledger.record(1, settle(banker_wins, [Wager(B, 10_000)], rules)) == 500
    assert ledger.record(2, settle(banker_wins, [Wager(B, 2500)], rules)) == 125
    assert ledger.record(3, settle(banker_wins, [Wager(P, 5000)], rules)) == 0
    # Coup 2: the Player wins; seat 1's Banker wager loses and owes nothing more.
    assert ledger.record(1, settle(coup_of(COUPS["player_plain"]), [Wager(B, 2000)], rules)) == 500
    # Coup 3: Banker wins again, seat 2 adds 75 cents.
    assert ledger.record(2, settle(coup_of(COUPS["pairs_both"]), [Wager(B, 1500)], rules)) == 200
    # Coup 4: a tie; pushes owe nothing.
    assert ledger.record(1, settle(coup_of(COUPS["tie_plain"]), [Wager(B, 1000)], rules)) == 500
    assert ledger.owed(1) == 500 and ledger.owed(2) == 200 and ledger.owed(3) == 0
    assert ledger.total_owed == 700
    # Seat 2 leaves mid-shoe and pays up.
    assert ledger.collect(2) == 200
    assert ledger.owed(2) == 0 and ledger.collect(2) == 0
    # A new player in seat 2 wins $5 on Banker.
    ledger.record(2, settle(banker_wins, [Wager(B, 500)], rules))
    assert ledger.balances() == {1: 500, 2: 25}
    assert ledger.close_shoe() == {1: 500, 2: 25}
    assert ledger.total_owed == 0 and ledger.close_shoe() == {}


def test_ledger_ignores_commission_already_taken_at_payout() -> None:
    ledger = CommissionLedger()
    s = settle(coup_of(COUPS["banker_plain"]), [Wager(B, 10_000)], COMMISSION)
    assert s.commission_cents == 500
    assert ledger.record(4, s) == 0
    assert ledger.close_shoe() == {}


# Wager validation ---------------------------------------------------------------------------------------


def refused(wagers: list[Wager], limits: TableLimits | None = None) -> WagerError:
    with pytest.raises(WagerError) as info:
        validate_wagers(wagers, limits or TableLimits())
    return info.value


def test_valid_wagers_pass() -> None:
    validate_wagers([Wager(B, 2500)], TableLimits())
    validate_wagers([Wager(P, 500_000), Wager(T, 500), Wager(PP, 50_000), Wager(DBP, 500)])
    validate_wagers([Wager(T, 2500)])  # a lone Tie at the table minimum
    validate_wagers([Wager(PP, 500), Wager(P8, 500), Wager(D7, 500)])  # pairs and 7/8 need no main wager
    validate_wagers([Wager(B, 2500), Wager(DBP, 500)])  # either side by default
    validate_wagers([Wager(B, 2500), Wager(P, 2500)], TableLimits(allow_both_sides=True))
    validate_wagers([])


@pytest.mark.parametrize("amount", [0, -500])
def test_refused_amount_not_positive(amount: int) -> None:
    e = refused([Wager(B, amount)])
    assert e.rule is WagerRule.NOT_POSITIVE and e.bet is B and e.amount_cents == amount
    assert isinstance(e, RulesViolation)


def test_refused_not_a_multiple_of_the_unit() -> None:
    e = refused([Wager(B, 2501)])
    assert e.rule is WagerRule.NOT_UNIT_MULTIPLE and e.limit_cents == 500
    assert "$5" in str(e) and "$25.01" in str(e)
    validate_wagers([Wager(B, 2525), Wager(T, 25)], TableLimits(unit_cents=25, side_minimum_cents=25))


def test_refused_below_and_above_the_table_limits() -> None:
    e = refused([Wager(P, 2000)])
    assert (e.rule, e.bet, e.amount_cents, e.limit_cents) == (WagerRule.BELOW_MINIMUM, P, 2000, 2500)
    e = refused([Wager(B, 500_500)])
    assert (e.rule, e.bet, e.limit_cents) == (WagerRule.ABOVE_MAXIMUM, B, 500_000)


def test_refused_side_bets_outside_their_limits() -> None:
    limits = TableLimits(side_minimum_cents=1000)
    e = refused([Wager(B, 2500), Wager(PP, 500)], limits)
    assert (e.rule, e.bet, e.limit_cents) == (WagerRule.SIDE_BELOW_MINIMUM, PP, 1000)
    e = refused([Wager(B, 2500), Wager(T, 50_500)])
    assert (e.rule, e.bet, e.limit_cents) == (WagerRule.SIDE_ABOVE_MAXIMUM, T, 50_000)


def test_refused_lone_tie_below_the_table_minimum() -> None:
    e = refused([Wager(T, 2000)])
    assert (e.rule, e.bet, e.limit_cents) == (WagerRule.LONE_TIE_BELOW_MINIMUM, T, 2500)
    # With a main wager, the side minimum applies.
    validate_wagers([Wager(P, 2500), Wager(T, 500)])


@pytest.mark.parametrize("bet", [DBP, DBB])
def test_refused_dragon_bonus_without_a_main_wager(bet: Bet) -> None:
    e = refused([Wager(bet, 500), Wager(T, 2500)])
    assert (e.rule, e.bet) == (WagerRule.NEEDS_MAIN_WAGER, bet)


def test_refused_dragon_bonus_on_the_other_side_when_the_table_wants_the_same_side() -> None:
    limits = TableLimits(main_wager_same_side=True)
    e = refused([Wager(B, 2500), Wager(DBP, 500)], limits)
    assert (e.rule, e.bet) == (WagerRule.NEEDS_MAIN_WAGER, DBP) and "player" in str(e)
    validate_wagers([Wager(P, 2500), Wager(DBP, 500)], limits)


def test_more_side_bets_can_be_made_to_need_a_main_wager() -> None:
    limits = TableLimits(needs_main_wager=frozenset({P8, D7}))
    assert refused([Wager(P8, 500)], limits).rule is WagerRule.NEEDS_MAIN_WAGER
    validate_wagers([Wager(DBP, 500), Wager(T, 2500)], limits)  # no longer required for Dragon Bonus


def test_refused_duplicate_bet_on_one_seat() -> None:
    e = refused([Wager(B, 2500), Wager(PP, 500), Wager(B, 5000)])
    assert (e.rule, e.bet, e.amount_cents) == (WagerRule.DUPLICATE_BET, B, 5000)


def test_refused_banker_and_player_together_by_default() -> None:
    e = refused([Wager(B, 2500), Wager(P, 5000)])
    assert (e.rule, e.bet, e.amount_cents) == (WagerRule.BOTH_SIDES, P, 5000)


def test_table_limits_check_themselves() -> None:
    with pytest.raises(ValueError, match="unit_cents"):
        TableLimits(unit_cents=0)
    with pytest.raises(ValueError, match="minimum_cents"):
        TableLimits(minimum_cents=10_000, maximum_cents=5_000)
    with pytest.raises(ValueError, match="side_minimum_cents"):
        TableLimits(side_minimum_cents=10_000, side_maximum_cents=5_000)
    with pytest.raises(ValueError, match="commission_rounding_cents"):
        TableLimits(commission_rounding_cents=0)
    with pytest.raises(ValueError, match="side bets only"):
        TableLimits(needs_main_wager=frozenset({B}))


def test_wager_amount_must_be_integer_cents() -> None:
    with pytest.raises(TypeError):
        Wager(B, 25.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Wager("banker", 2500)  # type: ignore[arg-type]


def test_settle_refuses_a_stake_that_is_not_positive() -> None:
    with pytest.raises(WagerError) as info:
        settle(coup_of(COUPS["banker_plain"]), [Wager(B, 0)], COMMISSION)
    assert info.value.rule is WagerRule.NOT_POSITIVE


# Properties ---------------------------------------------------------------------------------------------


@st.composite
def coups(draw: st.DrawFn) -> CoupResult:
    """Any coup the machine can deal: cards from an eight-deck shoe, dealt until complete."""
    coup = Coup()
    while not coup.complete:
        coup.deal(draw(st.sampled_from(DECK)))
    return coup.result()


wager_sets = st.dictionaries(st.sampled_from(list(Bet)), st.integers(min_value=1, max_value=10_000_000)).map(
    lambda d: [Wager(bet, amount) for bet, amount in d.items()]
)
rulesets = st.sampled_from([COMMISSION, EZ, SUPER6, COMMISSION_AT_SHOE_END, COMMISSION.with_tie_pays(9)])
roundings = st.sampled_from([1, 5, 25, 100])


@given(coups(), wager_sets, rulesets, roundings)
def test_settlement_invariants(result: CoupResult, wagers: list[Wager], rules: Ruleset, rounding: int) -> None:
    """A push returns exactly the stake; the net is never below minus the stake; commission only on a
    winning Banker wager; the money adds up."""
    s = settle(result, wagers, rules, TableLimits(commission_rounding_cents=rounding))
    assert [o.bet for o in s.outcomes] == [w.bet for w in wagers]
    for w, o in zip(wagers, s.outcomes, strict=True):
        assert o.stake_cents == w.amount_cents
        assert o.net_cents >= -w.amount_cents
        if o.outcome is Outcome.PUSH:
            assert o.payout_cents == w.amount_cents and o.net_cents == 0 and o.returned_cents == w.amount_cents
        if o.commission_cents:
            assert o.bet is Bet.BANKER and o.outcome is Outcome.WIN and result.winner is Winner.BANKER
            assert o.commission_cents <= o.paid_cents
        assert o.payout_cents - w.amount_cents == o.net_cents
        if o.outcome is Outcome.LOSE:
            assert o.payout_cents == 0
    assert s.commission_owed_cents == (s.commission_cents if rules is COMMISSION_AT_SHOE_END else 0)


def test_a_bet_the_table_does_not_offer_is_refused() -> None:
    from controller.game.rules import COMMISSION, SIDE_BETS

    table = COMMISSION.with_side_bets(SIDE_BETS - {Bet.DRAGON_7, Bet.PANDA_8})
    assert table.offers(Bet.TIE)
    assert not table.offers(Bet.PANDA_8)
    validate_wagers([Wager(Bet.BANKER, 2_500), Wager(Bet.PLAYER_PAIR, 500)], rules=table)
    with pytest.raises(WagerError) as err:
        validate_wagers([Wager(Bet.BANKER, 2_500), Wager(Bet.PANDA_8, 500)], rules=table)
    assert err.value.rule is WagerRule.NOT_OFFERED
    assert err.value.bet is Bet.PANDA_8
    with pytest.raises(ValueError, match="not side bets: banker"):
        COMMISSION.with_side_bets(frozenset({Bet.BANKER}))
