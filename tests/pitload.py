"""Simulated tables for the pit page's tests and benchmark: real records of a real journal, published by many
tables through a real broker, with the retained ``state`` and ``status`` each table's floor link publishes.

The records are those a real table wrote (``shoe-controller demo`` deals a shoe through the real table loop
into a real journal; each simulated table publishes that journal's chain under its own id, as
``controller.journal`` ``for_floor`` does). The ``state`` message after each record is built the way
``controller.link.floor_link.state_message`` builds it from the table's coups (shoe, coup, due, alarms, counts,
the bead string of the shoe), a valid ``floor_protocol.state`` message; what it cannot know without the
table's live view is that of a table between coups (no card on the layout, the cards remaining counted from
the declared coups' cards). The journal does not
record an alarm's clearing, so an alarm shows in the state until the next declared coup.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from controller.game.records import RECORD_VERSION, TableRecord
from controller.game.roads import PAIR_LETTERS
from controller.journal import Journal
from floor_protocol.state import Counts, JournalMarks, Roads, TableStateMessage
from floor_protocol.topics import Leaf, table_topic
from mqttloop import NetworkLoop
from tests.processes import dealing_data
from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[1]


def demo_journal(path: Path, shoes: int = 1, seed: int | None = None) -> Path:
    """A real journal: ``shoes`` shoes dealt by the demo (simulated shoe, real table loop); ``seed`` fixes its
    shuffles and players (a test that needs something particular in the journal names one that has it)."""
    # its board on ports of its own (the defaults are one demo's: two tests' demos at once would share them)
    demo = [sys.executable, "-m", "controller.cli", "demo", "--pace", "fast"]
    demo += ["--scoreboard", f"127.0.0.1:{free_port()}", "--dealer", f"127.0.0.1:{free_port()}"]
    if seed is not None:
        demo += ["--seed", str(seed)]
    with dealing_data():
        subprocess.run(
            [*demo, "--shoes", str(shoes), "--journal", str(path)],
            check=True,
            capture_output=True,
            timeout=300,
            cwd=ROOT,
        )
    return path


def journal_records(path: Path, table: str) -> list[TableRecord]:
    journal = Journal.open(str(path), create=False, read_only=True)
    try:
        return [r.for_floor(table) for r in journal.records()]
    finally:
        journal.close()


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class SimTable:
    """One simulated table: its records in journal order and what it has published so far."""

    site: str
    table: str
    records: list[TableRecord]
    sent: int = 0
    shoe: int | None = None
    coup: int | None = None
    bead: str = ""
    alarms: list[str] = field(default_factory=list)
    coups: list[dict[str, Any]] = field(default_factory=list)  # declared coups, in order (every shoe's)

    def topic(self, what: str) -> str:
        return table_topic(self.site, self.table, Leaf(what))

    def follow(self, record: TableRecord) -> None:
        body = record.body
        if record.kind == "shoe" and body.get("event") == "start":
            self.shoe, self.coup, self.bead = int(body["shoe"]), 1, ""
        elif record.kind == "coup" and body.get("coup") is not None:
            if body.get("declared"):  # the journal does not record an alarm's clearing: a declared coup clears
                self.alarms.clear()
                self.bead += str(body.get("winner") or "?")[0].upper()
                self.coups.append(dict(body))
                self.coup = int(body["coup"]) + 1
        elif record.kind == "alarm":
            name = str(body.get("alarm") or body.get("name") or "alarm").lower()
            if name not in self.alarms:
                self.alarms.append(name)

    def shoe_coups(self) -> list[dict[str, Any]]:
        """The current shoe's declared coups (what a state message counts)."""
        return [c for c in self.coups if c.get("shoe") == self.shoe]

    def state(self) -> dict[str, Any]:
        """The retained state message of the table now, built through its model (as the table's link builds it)."""
        coups = self.shoe_coups()
        return TableStateMessage(
            v=RECORD_VERSION,
            site=self.site,
            table=self.table,
            at=now_iso(),
            shoe=self.shoe or 0,
            coup=self.coup or 0,
            due="deal",
            cards_dealt=0,
            cards_remaining=max(0, 416 - sum(len(c["player"]) + len(c["banker"]) for c in coups)),
            cut_card_out=False,
            last_coup=False,
            alarms=tuple(self.alarms),
            counts=Counts(
                coups=len(coups),
                **{w: sum(c.get("winner") == w for c in coups) for w in ("banker", "player", "tie")},
                **{f: sum(bool(c.get(f)) for c in coups) for f in ("natural", "player_pair", "banker_pair")},
            ),
            roads=Roads(
                bead=self.bead,
                pairs="".join(PAIR_LETTERS[bool(c.get("player_pair")), bool(c.get("banker_pair"))] for c in coups),
            ),
            journal=JournalMarks(head=self.sent, acked=self.sent),
            player=(),
            banker=(),
            result=None,
        ).to_dict()


class Floor:
    """The tables' side: one paho client publishing for every simulated table (QoS 1, like the floor link)."""

    def __init__(self, port: int, tables: list[SimTable]) -> None:
        self.tables = {t.table: t for t in tables}
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.max_inflight_messages_set(1000)
        self.client.connect("127.0.0.1", port)
        self.network = NetworkLoop(self.client, "test-mqtt")
        self.network.start()

    def online(self, table: str, up: bool = True) -> None:
        t = self.tables[table]
        self.client.publish(t.topic("status"), b"online" if up else b"offline", qos=1, retain=True).wait_for_publish(10)

    def deal(self, table: str, until_kind: str = "coup") -> Iterator[mqtt.MQTTMessageInfo]:
        """Publish the table's records up to and including its next ``until_kind`` record, then its state."""
        t = self.tables[table]
        while t.sent < len(t.records):
            r = t.records[t.sent]
            t.sent += 1
            t.follow(r)
            yield self.client.publish(t.topic("record"), r.to_json(), qos=1)
            if r.kind == until_kind and (r.kind != "coup" or r.body.get("declared")):
                break
        yield self.publish_state(table)

    def publish_state(self, table: str) -> mqtt.MQTTMessageInfo:
        t = self.tables[table]
        return self.client.publish(t.topic("state"), json.dumps(t.state(), separators=(",", ":")), qos=1, retain=True)

    def deal_coups(self, table: str, n: int) -> None:
        infos = [info for _ in range(n) for info in self.deal(table)]
        for info in infos:
            info.wait_for_publish(10)

    def alert(self, site: str, item: dict[str, Any]) -> None:
        self.client.publish(f"baccarat/{site}/floor/alert", json.dumps(item), qos=1).wait_for_publish(10)

    def close(self) -> None:
        self.network.stop()
