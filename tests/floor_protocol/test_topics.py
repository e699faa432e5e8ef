"""The topics are stated once (floor_protocol.topics): every user builds them there, and parsing gives back
what building made."""

from __future__ import annotations

import pytest

from controller.config import FloorSection
from floor_protocol.topics import (
    ALERTS,
    PIT_FILTERS,
    Leaf,
    Topic,
    alert_topic,
    filter_of,
    parse_topic,
    shared,
    table_topic,
)


def test_the_topics_are_the_documented_ones() -> None:
    assert [table_topic("casino", "t7", leaf) for leaf in Leaf] == [
        "baccarat/casino/t7/record",
        "baccarat/casino/t7/state",
        "baccarat/casino/t7/status",
        "baccarat/casino/t7/ack",
    ]
    assert alert_topic("casino") == "baccarat/casino/floor/alert"
    assert shared("shoe-floor", filter_of(Leaf.RECORD, "s1")) == "$share/shoe-floor/baccarat/s1/+/record"
    assert PIT_FILTERS == ("baccarat/+/+/state", "baccarat/+/+/status", "baccarat/+/+/record", ALERTS)
    assert ALERTS == "baccarat/+/floor/alert"


def test_the_tables_config_builds_its_topics_here() -> None:
    floor = FloorSection(site="casino", table="t7")
    assert {leaf: floor.topic(leaf) for leaf in Leaf} == {leaf: table_topic("casino", "t7", leaf) for leaf in Leaf}


@pytest.mark.parametrize("leaf", list(Leaf))
def test_parsing_gives_back_what_building_made(leaf: Leaf) -> None:
    assert parse_topic(table_topic("s1", "T-3.a", leaf)) == Topic("s1", "T-3.a", leaf)


def test_the_alert_topic_parses_as_the_floors() -> None:
    topic = parse_topic(alert_topic("s1"))
    assert topic == Topic("s1", "floor", None) and topic.is_alert


@pytest.mark.parametrize(
    "topic",
    ["", "baccarat", "baccarat/s1/t1", "baccarat/s1/t1/record/x", "other/s1/t1/record", "baccarat/s1/t1/nope",
     "baccarat//t1/record", "baccarat/s1//record", "baccarat/s1/t1/alert"],
)  # fmt: skip
def test_any_other_topic_is_none(topic: str) -> None:
    assert parse_topic(topic) is None


def test_the_floor_takes_any_topic_level_a_table_can_write() -> None:
    from floor.pit import valid_table
    from floor_protocol.topics import ID_PATTERN, LEVEL_PATTERN

    for name in ("t1", "Table-7.b", "x" * 64):
        assert ID_PATTERN.fullmatch(name) and LEVEL_PATTERN.fullmatch(name) and valid_table(name)
    assert valid_table("VIP Salon 01") and not ID_PATTERN.fullmatch("VIP Salon 01")  # the floor is tolerant
    for bad in ("", "a/b", "a+", "a#", "a\0", "x" * 101):
        assert not LEVEL_PATTERN.fullmatch(bad) and not valid_table(bad)


LEVEL_SAMPLES = ("t1", "VIP Salon 01", "x" * 100, "a$b", "é", "", "a/b", "a+", "a#", "a\0", "a\x1f", "a\x7f", "x" * 101)


def test_a_topic_level_is_one_rule_wherever_the_floor_reads_one() -> None:
    """The floor's command line (--site, --share, --table), an ack's table, the pit's tables and the state
    message's site and table take exactly what floor_protocol.topics.is_level takes (three rules before: the
    command line refused '$', the ack refused control characters, the pit neither)."""
    import argparse
    import json

    from floor import cli
    from floor.pit import valid_table
    from floor_protocol.ack import Ack
    from floor_protocol.signing import generate_key
    from floor_protocol.topics import is_level

    taken = {name for name in LEVEL_SAMPLES if is_level(name)}
    assert taken == {"t1", "VIP Salon 01", "x" * 100, "a$b", "é"}
    key = generate_key()
    for name in LEVEL_SAMPLES:
        try:
            cli._topic_level(name)
            by_cli = True
        except argparse.ArgumentTypeError:
            by_cli = False
        ack = Ack.signed(key, "archive-0001", "t1", 1, "ab" * 32).to_dict() | {"table": name}
        by_ack = Ack.from_dict(json.loads(json.dumps(ack))) is not None
        assert (by_cli, by_ack, valid_table(name)) == (name in taken,) * 3, repr(name)
