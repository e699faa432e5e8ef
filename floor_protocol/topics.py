"""The MQTT topics of a table and the floor, stated once: ``baccarat/<site>/<table>/<leaf>``.

A table publishes ``record`` (QoS 1), ``state`` and ``status`` (retained) under its own prefix and reads
``ack`` (retained, written by the floor); the floor publishes its alerts on ``baccarat/<site>/floor/alert``
and, retained, the site's staff list on ``baccarat/<site>/floor/staff``.
The table's config, its floor link, the collector, the pit and the tests build and read topics only here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeGuard

__all__ = [
    "ALERT",
    "ALERTS",
    "FLOOR",
    "ID_PATTERN",
    "LEVEL_PATTERN",
    "PIT_FILTERS",
    "ROOT",
    "STAFF",
    "Leaf",
    "Topic",
    "alert_topic",
    "filter_of",
    "is_level",
    "parse_topic",
    "shared",
    "staff_topic",
    "table_prefix",
    "table_topic",
]

#: The first level of every topic.
ROOT = "baccarat"
#: The table level of the floor's own topics (``baccarat/<site>/floor/alert``).
FLOOR = "floor"
#: The leaf of the floor's alert topic.
ALERT = "alert"
#: The leaf of the floor's staff list (retained, signed: :mod:`floor_protocol.staff`).
STAFF = "staff"
#: A site or table id as the table's configuration accepts it: one topic level, 1-64 characters.
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
#: A site, table or share group as the floor takes it (from a topic, an ack, a state message or its command
#: line): any one topic level, 1-100 characters, without MQTT's separator and wildcards (``/``, ``+``, ``#``)
#: or a control character. The floor is more tolerant than a table's configuration, which writes only
#: :data:`ID_PATTERN`. The one rule: :func:`is_level` and everything else read it.
LEVEL_PATTERN = re.compile(r"[^/+#\x00-\x1f\x7f]{1,100}")


def is_level(text: object) -> TypeGuard[str]:
    """Whether ``text`` is one topic level as the floor takes it (:data:`LEVEL_PATTERN`)."""
    return isinstance(text, str) and LEVEL_PATTERN.fullmatch(text) is not None


class Leaf(StrEnum):
    """The last level of a table's topics."""

    RECORD = "record"  # every journal record (TableRecord JSON), QoS 1
    STATE = "state"  # retained: the table now (floor_protocol.state)
    STATUS = "status"  # retained: online / offline (the Last Will)
    ACK = "ack"  # retained, from the floor: the highest contiguous seq archived (floor_protocol.ack)


def table_prefix(site: str, table: str) -> str:
    """``baccarat/<site>/<table>``: the table's own topics are under it."""
    return f"{ROOT}/{site}/{table}"


def table_topic(site: str, table: str, leaf: Leaf) -> str:
    """``baccarat/<site>/<table>/<leaf>``; ``+`` for site or table makes a subscription filter."""
    return f"{table_prefix(site, table)}/{leaf.value}"


def alert_topic(site: str) -> str:
    """``baccarat/<site>/floor/alert``; ``+`` for the site makes a subscription filter."""
    return f"{ROOT}/{site}/{FLOOR}/{ALERT}"


def staff_topic(site: str) -> str:
    """``baccarat/<site>/floor/staff``: the site's staff list, which every table of the site's link reads."""
    return f"{ROOT}/{site}/{FLOOR}/{STAFF}"


def filter_of(leaf: Leaf, site: str = "+") -> str:
    """Every table's ``leaf`` topic of ``site`` (by default of every site)."""
    return table_topic(site, "+", leaf)


def shared(group: str, topic_filter: str) -> str:
    """An MQTT 5 shared subscription: the group's members take turns with each message."""
    return f"$share/{group}/{topic_filter}"


#: Every site's floor alerts.
ALERTS = alert_topic("+")
#: What the pit view follows: every table's state, status and records, and the floor's alerts.
PIT_FILTERS = (filter_of(Leaf.STATE), filter_of(Leaf.STATUS), filter_of(Leaf.RECORD), ALERTS)


@dataclass(frozen=True)
class Topic:
    """A topic read back: the site, the table (``floor`` for the floor's own) and the leaf."""

    site: str
    table: str
    leaf: Leaf | None  # None: the floor's alert topic

    @property
    def is_alert(self) -> bool:
        return self.leaf is None


def parse_topic(topic: str) -> Topic | None:
    """The parts of one of our topics, or None for any other (wrong root, depth, leaf, or empty level)."""
    parts = topic.split("/")
    if len(parts) != 4 or parts[0] != ROOT or not parts[1] or not parts[2]:
        return None
    _, site, table, leaf = parts
    if table == FLOOR and leaf == ALERT:
        return Topic(site, table, None)
    try:
        return Topic(site, table, Leaf(leaf))
    except ValueError:
        return None
