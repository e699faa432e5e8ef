"""The five roads: golden vectors worked out by hand (not by the code), and the invariants as properties.

Notation in the comments: a big-road cell is (n, m), logical column n and row m, both from 1; h[n] is the
height of column n. The derived-road rule under test (controller/game/roads.py docstring): m = 1 → red iff
h[n-1] == h[n-1-k]; m > 1, p = h[n-k] → red if m <= p, blue if m == p + 1, red if m > p + 1.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.game.cards import parse_cards
from controller.game.coup import Coup, Winner
from controller.game.roads import (
    Bead,
    BigRoadCell,
    Colour,
    RoadError,
    Roads,
    RoadsBuilder,
    bead_plate_grid,
    big_road_grid,
    compute_roads,
    derived_mark,
    roads_layout,
)

R, BL = "red", "blue"
DERIVED = {"big_eye_boy": 1, "small_road": 2, "cockroach_pig": 3}


def road(results: str) -> dict[str, Any]:
    """The JSON form of the roads of space-separated results."""
    return compute_roads(results.split()).to_dict()


def cell(winner: str, ties: int = 0, player_pair: bool = False, banker_pair: bool = False) -> dict[str, Any]:
    return {
        "winner": {"B": "banker", "P": "player"}[winner],
        "ties": ties,
        "player_pair": player_pair,
        "banker_pair": banker_pair,
    }


# -- bead plate and big road ---------------------------------------------------------------------------------


def test_bead_plate_keeps_every_result_in_order_ties_included() -> None:
    assert road("B T P T T B")["bead_plate"] == ["banker", "tie", "player", "tie", "tie", "banker"]


def test_results_are_accepted_as_letters_words_any_case_and_winners() -> None:
    roads = compute_roads(["b", "Banker", " p ", "PLAYER", "t", "Tie", Winner.BANKER, "T"])
    assert roads.to_dict()["bead_plate"] == [
        "banker", "banker", "player", "player", "tie", "tie", "banker", "tie",
    ]  # fmt: skip


def test_several_ties_stack_on_one_cell() -> None:
    assert road("B T T T P P T B")["big_road"] == [
        [cell("B", 3)],
        [cell("P"), cell("P", 1)],
        [cell("B")],
    ]


def test_leading_ties_attach_to_the_first_cell_when_it_appears() -> None:
    assert road("T T P B T")["big_road"] == [[cell("P", 2)], [cell("B", 1)]]


def test_ties_alone_leave_the_big_road_empty_until_the_first_banker_or_player() -> None:
    builder = RoadsBuilder(["T", "T"])
    assert builder.roads.big_road == ()
    assert builder.roads.pending_ties == 2
    after = builder.add("B")
    assert after.big_road == ((BigRoadCell(Winner.BANKER, 2),),)
    assert after.pending_ties == 0


def test_a_long_streak_is_one_logical_column() -> None:
    big = road("B " * 9 + "P")["big_road"]
    assert big == [[cell("B")] * 9, [cell("P")]]


def test_to_dict_has_exactly_the_contract_keys() -> None:
    keys = ["bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig", "ask"]
    assert list(road("B P")) == keys


# -- input errors and richer input ---------------------------------------------------------------------------


@pytest.mark.parametrize(("bad", "index"), [("X", 3), ("BB", 3), ("", 3), (3, 3), (None, 3)])
def test_a_bad_result_raises_road_error_naming_it_and_its_position(bad: object, index: int) -> None:
    with pytest.raises(RoadError) as info:
        compute_roads(["B", "P", bad, "B"])  # type: ignore[list-item]
    assert info.value.value == bad
    assert info.value.index == index
    assert repr(bad) in str(info.value)
    assert "result 3" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_a_bad_result_leaves_the_builder_unchanged() -> None:
    builder = RoadsBuilder("B B P".split())
    before = builder.roads
    with pytest.raises(RoadError):
        builder.add("Q")
    assert builder.roads == before
    assert builder.add("P").to_dict() == road("B B P P")


def test_journal_records_carry_the_bead_flags_and_void_coups_are_skipped() -> None:
    records: list[dict[str, Any]] = [
        {"coup": 1, "winner": "banker", "player_pair": True, "banker_pair": False, "natural": True},
        {"coup": 2, "winner": None, "void": True},
        {"coup": 3, "winner": "tie"},
    ]
    roads = compute_roads(records)
    assert roads.bead_plate_details() == [
        {"winner": "banker", "player_pair": True, "banker_pair": False, "natural": True},
        {"winner": "tie", "player_pair": False, "banker_pair": False, "natural": False},
    ]
    assert roads.to_dict()["big_road"] == [[cell("B", 1, player_pair=True)]]


def test_a_big_road_cell_carries_the_pairs_of_its_win_and_of_its_ties() -> None:
    """No pair the bead plate shows is missing from the big road: a tie's pair goes on the cell its tie is
    written on, the pairs of ties before the first cell on that cell; a cell without one has none."""
    records: list[dict[str, Any]] = [
        {"winner": "tie", "banker_pair": True},  # before any cell
        {"winner": "player"},
        {"winner": "player", "player_pair": True},
        {"winner": "tie", "banker_pair": True},  # on the second Player cell
        {"winner": "banker"},
        {"winner": "tie"},
    ]
    big = compute_roads(records).to_dict()["big_road"]
    assert big == [
        [cell("P", 1, banker_pair=True), cell("P", 1, player_pair=True, banker_pair=True)],
        [cell("B", 1)],
    ]
    layout = roads_layout(compute_roads(records))["layout"]["big_road"]
    assert layout == [
        [0, 0, "player", 1, False, True],
        [0, 1, "player", 1, True, True],
        [1, 0, "banker", 1, False, False],
    ]


def test_a_journal_record_without_a_winner_is_refused() -> None:
    with pytest.raises(RoadError, match=r"result 2.*winner"):
        compute_roads([{"winner": "player"}, {"coup": 2, "winner": None}])
    with pytest.raises(RoadError, match=r"result 1.*no 'winner'"):
        compute_roads([{"coup": 1}])
    with pytest.raises(RoadError, match="natural"):
        compute_roads([{"winner": "player", "natural": "yes"}])


def test_coup_results_give_beads_with_pairs_and_natural() -> None:
    # P: 4H 4S (8, a natural and a pair); B: 2D 3C (5). Player wins on a natural with a pair.
    coup = Coup.from_cards(parse_cards(["4H", "2D", "4S", "3C"]))
    roads = compute_roads([coup.result(), Bead(Winner.BANKER, banker_pair=True)])
    assert roads.bead_plate == (
        Bead(Winner.PLAYER, player_pair=True, banker_pair=False, natural=True),
        Bead(Winner.BANKER, banker_pair=True),
    )


# -- the dragon tail ----------------------------------------------------------------------------------------


def test_a_nine_long_banker_streak_turns_right_along_the_bottom_row() -> None:
    grid = big_road_grid(compute_roads("B B B B B B B B B P".split()).big_road)
    positions = [(col, row, c.winner.letter) for col, row, c in grid]
    assert positions == [
        (0, 0, "B"), (0, 1, "B"), (0, 2, "B"), (0, 3, "B"), (0, 4, "B"), (0, 5, "B"),
        (1, 5, "B"), (2, 5, "B"), (3, 5, "B"),
        (1, 0, "P"),
    ]  # fmt: skip


def test_a_tail_blocked_by_an_earlier_tail_turns_one_row_higher() -> None:
    # B x8: down column 0, tail along row 5 to column 2. P x8: down column 1 to row 4 (row 5 is the
    # banker tail), then right along row 4, staying in row 4 past the end of the banker tail (column 4).
    # B x6: down column 2 to row 3 (row 4 taken), right along row 3. P x1: column 3, top.
    results = ["B"] * 8 + ["P"] * 8 + ["B"] * 6 + ["P"]
    grid = big_road_grid(compute_roads(results).big_road)
    assert [(col, row) for col, row, _ in grid] == [
        (0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 5), (2, 5),
        (1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (2, 4), (3, 4), (4, 4),
        (2, 0), (2, 1), (2, 2), (2, 3), (3, 3), (4, 3),
        (3, 0),
    ]  # fmt: skip


def test_a_tail_along_the_top_row_pushes_the_next_column_right() -> None:
    # One row: every column is all tail; the next column starts at the first free top cell.
    grid = big_road_grid([["b1", "b2", "b3"], ["p1", "p2"], ["b4"]], rows=1)
    assert grid == [(0, 0, "b1"), (1, 0, "b2"), (2, 0, "b3"), (3, 0, "p1"), (4, 0, "p2"), (5, 0, "b4")]


def test_the_grid_lays_out_any_columns_and_ties_ride_with_their_cell() -> None:
    big = compute_roads("B T T P".split()).big_road
    assert big_road_grid(big, rows=6) == [
        (0, 0, BigRoadCell(Winner.BANKER, 2)),
        (1, 0, BigRoadCell(Winner.PLAYER, 0)),
    ]
    red = Colour.RED
    assert big_road_grid([[red] * 3], rows=2) == [(0, 0, red), (0, 1, red), (1, 1, red)]
    with pytest.raises(ValueError, match="rows"):
        big_road_grid(big, rows=0)


def test_bead_plate_grid_fills_columns_top_to_bottom() -> None:
    assert bead_plate_grid("abcdefg", rows=3) == [
        (0, 0, "a"), (0, 1, "b"), (0, 2, "c"), (1, 0, "d"), (1, 1, "e"), (1, 2, "f"), (2, 0, "g"),
    ]  # fmt: skip


# -- derived roads: hand-worked ------------------------------------------------------------------------------

# Sequence A: columns B(1) P(3) B(1) P(2) B(4) P(1); h = [1, 3, 1, 2, 4, 1].
SEQ_A = "B P P P B P P B B B B P"


def test_big_eye_boy_on_sequence_a_starts_at_column_2_row_2() -> None:
    # k=1, h[2]=3 >= 2 so the road starts at (2,2), before (3,1). (2,1) makes no mark.
    # (2,2) p=h1=1, m=p+1 blue | (2,3) m=3>p+1 red (straight drop) | (3,1) h2=3 vs h1=1 blue
    # (4,1) h3=1 vs h2=3 blue | (4,2) p=h3=1, m=p+1 blue | (5,1) h4=2 vs h3=1 blue
    # (5,2) p=h4=2, m<=p red | (5,3) m=p+1 blue | (5,4) m>p+1 red | (6,1) h5=4 vs h4=2 blue
    assert road(SEQ_A)["big_eye_boy"] == [[BL], [R], [BL, BL, BL, BL], [R], [BL], [R], [BL]]


def test_small_road_on_sequence_a_starts_at_column_4_row_1() -> None:
    # k=2, h[3]=1 so (3,2) never exists: the road starts at (4,1).
    # (4,1) h3=1 vs h1=1 same: red | (4,2) p=h2=3, m<=p red | (5,1) h4=2 vs h2=3 blue
    # (5,2) p=h3=1, m=p+1 blue | (5,3) m>p+1 red | (5,4) red | (6,1) h5=4 vs h3=1 blue
    assert road(SEQ_A)["small_road"] == [[R, R], [BL, BL], [R, R], [BL]]


def test_cockroach_pig_on_sequence_a_starts_at_column_4_row_2() -> None:
    # k=3, h[4]=2 so (4,2) comes before (5,1).
    # (4,2) p=h1=1, m=p+1 blue | (5,1) h4=2 vs h1=1 blue | (5,2) p=h2=3 red | (5,3) m<=p red
    # (5,4) m=p+1 blue | (6,1) h5=4 vs h2=3 blue
    assert road(SEQ_A)["cockroach_pig"] == [[BL, BL], [R, R], [BL, BL]]


# Sequence B: columns B(2) P(1) B(2) P(1) B(1); h = [2, 1, 2, 1, 1].
SEQ_B = "B B P B B P B"


def test_sequence_b_big_eye_boy_starts_at_column_3_row_1() -> None:
    # k=1, h[2]=1: (2,2) never exists, start (3,1).
    # (3,1) h2=1 vs h1=2 blue | (3,2) p=h2=1, m=p+1 blue | (4,1) h3=2 vs h2=1 blue | (5,1) h4=1 vs h3=2 blue
    assert road(SEQ_B)["big_eye_boy"] == [[BL, BL, BL, BL]]


def test_sequence_b_small_road_starts_at_column_3_row_2() -> None:
    # k=2, h[3]=2: (3,2) before (4,1).
    # (3,2) p=h1=2, m<=p red | (4,1) h3=2 vs h1=2 red | (5,1) h4=1 vs h2=1 red
    assert road(SEQ_B)["small_road"] == [[R, R, R]]


def test_sequence_b_cockroach_pig_starts_at_column_5_row_1() -> None:
    # k=3, h[4]=1: start (5,1). (5,1) h4=1 vs h1=2 blue.
    assert road(SEQ_B)["cockroach_pig"] == [[BL]]


def test_ties_before_and_inside_the_derived_roads_start_make_no_mark() -> None:
    tied = "T B T T B P T B B P T B T"
    assert road(tied)["bead_plate"].count("tie") == 6
    for name in DERIVED:
        assert road(tied)[name] == road(SEQ_B)[name]


def test_nothing_marks_before_the_start_cell() -> None:
    # B P B P: h = 1,1,1,1. Big eye boy starts (3,1): h2 vs h1 red, (4,1) h3 vs h2 red.
    # Small road starts (4,1): h3 vs h1 red. Cockroach pig would start (5,1): nothing yet.
    roads = road("B P B P")
    assert roads["big_eye_boy"] == [[R, R]]
    assert roads["small_road"] == [[R]]
    assert roads["cockroach_pig"] == []


def test_derived_mark_is_the_rule_cell_by_cell() -> None:
    h = [1, 3, 1, 2, 4]
    assert derived_mark(h, 2, 2, 1) is Colour.BLUE  # m = p + 1 with p = h1 = 1
    assert derived_mark(h, 2, 3, 1) is Colour.RED  # m > p + 1
    assert derived_mark(h, 5, 2, 1) is Colour.RED  # m <= p = h4 = 2
    assert derived_mark(h, 4, 1, 2) is Colour.RED  # h3 == h1
    assert derived_mark(h, 5, 1, 2) is Colour.BLUE  # h4 != h2
    assert derived_mark(h, 2, 1, 1) is None  # before (3,1)
    assert derived_mark(h, 3, 2, 3) is None  # column 3 < k + 1


# -- ask roads ---------------------------------------------------------------------------------------------


def test_ask_roads_on_sequence_a() -> None:
    # After SEQ_A, h = [1, 3, 1, 2, 4, 1], last column Player.
    # Banker next opens column 7 at row 1: BEB h6=1 vs h5=4 blue; SR h6 vs h4=2 blue; CP h6 vs h3=1 red.
    # Player next is (6,2): BEB p=h5=4 red; SR p=h4=2 red; CP p=h3=1, m=p+1 blue.
    assert road(SEQ_A)["ask"] == {
        "banker": {"big_eye_boy": BL, "small_road": BL, "cockroach_pig": R},
        "player": {"big_eye_boy": R, "small_road": R, "cockroach_pig": BL},
    }


def test_ask_roads_are_null_while_a_road_would_not_mark() -> None:
    none = {"big_eye_boy": None, "small_road": None, "cockroach_pig": None}
    assert road("")["ask"] == {"banker": none, "player": none}
    assert road("T")["ask"] == {"banker": none, "player": none}
    assert road("B")["ask"] == {"banker": none, "player": none}
    # B P: Banker next is (3,1): h2=1 vs h1=1 red. Player next is (2,2): p=h1=1, m=p+1 blue.
    assert road("B P")["ask"] == {
        "banker": {"big_eye_boy": R, "small_road": None, "cockroach_pig": None},
        "player": {"big_eye_boy": BL, "small_road": None, "cockroach_pig": None},
    }


# -- properties ----------------------------------------------------------------------------------------------

results_st = st.lists(st.sampled_from("BPT"), max_size=80)
non_tie_st = st.lists(st.sampled_from("BP"), max_size=60)


def derived_json(roads: Roads) -> dict[str, Any]:
    d = roads.to_dict()
    return {name: d[name] for name in (*DERIVED, "ask")}


@given(non_tie_st, st.data())
def test_inserting_ties_anywhere_leaves_the_derived_roads_unchanged(plain: list[str], data: st.DataObject) -> None:
    tied = list(plain)
    for _ in range(data.draw(st.integers(0, 12), label="ties")):
        tied.insert(data.draw(st.integers(0, len(tied)), label="at"), "T")
    assert derived_json(compute_roads(tied)) == derived_json(compute_roads(plain))
    winners = [[c["winner"] for c in col] for col in compute_roads(tied).to_dict()["big_road"]]
    assert winners == [[c["winner"] for c in col] for col in compute_roads(plain).to_dict()["big_road"]]
    ties = sum(c.ties for col in compute_roads(tied).big_road for c in col)
    assert ties == (tied.count("T") if plain else 0)


@given(results_st)
def test_each_derived_road_marks_every_big_road_cell_from_its_start_cell(results: list[str]) -> None:
    roads = compute_roads(results)
    cells = [(n, m) for n, col in enumerate(roads.big_road, 1) for m in range(1, len(col) + 1)]
    for name, k in DERIVED.items():
        start = next((i for i, c in enumerate(cells) if c in ((k + 1, 2), (k + 2, 1))), len(cells))
        columns = roads.to_dict()[name]
        assert sum(len(col) for col in columns) == len(cells) - start
        assert all(col and len(set(col)) == 1 for col in columns)
        assert all(a[0] != b[0] for a, b in itertools.pairwise(columns))


@given(results_st)
def test_the_builder_gives_the_same_roads_as_compute_roads_at_every_coup(results: list[str]) -> None:
    builder = RoadsBuilder()
    for i, r in enumerate(results, 1):
        assert builder.add(r) == compute_roads(results[:i])
    half = len(results) // 2
    assert RoadsBuilder(results[:half]).extend(results[half:]) == builder.roads


@given(results_st, st.sampled_from("BP"))
def test_ask_roads_foretell_the_next_marks(results: list[str], nxt: str) -> None:
    before = compute_roads(results)
    after = compute_roads([*results, nxt])
    asked = before.to_dict()["ask"]["banker" if nxt == "B" else "player"]
    for name in DERIVED:
        old, new = before.to_dict()[name], after.to_dict()[name]
        grew = sum(map(len, new)) - sum(map(len, old))
        assert grew in (0, 1)
        assert asked[name] == (new[-1][-1] if grew else None)


@given(results_st, st.integers(1, 8))
def test_the_grid_places_every_cell_once_stepping_down_or_right(results: list[str], rows: int) -> None:
    big = compute_roads(results).big_road
    grid = big_road_grid(big, rows)
    assert [c for _, _, c in grid] == [c for col in big for c in col]
    places = [(col, row) for col, row, _ in grid]
    assert len(set(places)) == len(places)
    assert all(0 <= row < rows for _, row in places)
    i = 0
    for column in big:
        path = places[i : i + len(column)]
        i += len(column)
        assert path[0][1] == 0
        for (c0, r0), (c1, r1) in itertools.pairwise(path):
            assert (c1, r1) in ((c0, r0 + 1), (c0 + 1, r0))
