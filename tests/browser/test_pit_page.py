"""The pit page in headless Chromium with 12 simulated tables through a real Mosquitto.

The tables publish the records of a real journal (two shoes dealt by ``shoe-controller demo`` through the real
table loop) with their retained state and status (tests/pitload.py says how faithful that is); a real
collector archives them into a real SQLite archive; the pit (:class:`floor.pit.Pit`) follows the broker on
its own subscription and serves the pages. Checked: the tiles follow the tables (shoe, coup, last result,
online/offline/link down), recall on a table page shows the journal's cards for a chosen coup and lists the
coups of the current and previous shoes, and an advantage and a repeated shoe published on the floor's alert
topic appear at the top of the feed, newest first, with the record that caused each (and the advantage flag on
its tile). Screenshots at 1920x1080 and 800x480 go to test-output/.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.game.notation import result_text
from floor.archive import Archive
from floor.pit import Pit
from tests.browser.conftest import OUTPUT, recall_on_page
from tests.floor.conftest import InProcess, Keys
from tests.pitload import Floor, SimTable, demo_journal, journal_records
from tests.servers import Mosquitto
from tests.waiting import until

# the module's floor (a demo journal dealt through the real loop, twelve tables through a broker and a collector)
# is built in its first test's setup: some 90 s of the 120 s default on a loaded machine
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

TABLES = [f"T{i:02d}" for i in range(1, 13)]


class Setup:
    def __init__(self, tmp: Path) -> None:
        # seed 1: the first advantage record (+1 % threshold) comes at coup 64, before T12's 85th (a random
        # shoe may have none that early, and the feed test below needs one)
        journal = demo_journal(tmp / "journal.db", shoes=2, seed=1)
        self.broker = Mosquitto(tmp / "mosquitto").start()
        self.url = f"sqlite:///{tmp}/archive.db"
        keys = Keys(tmp / "keys")
        keys.enroll(self.url, *TABLES)  # every table's key (the collector archives only what they sign)
        self.collector = InProcess(self.broker, self.url, keys)
        self.pit = Pit(self.url)
        self.pit.start(("127.0.0.1", 0), self.broker.url)
        self.sims = [SimTable("s1", t, keys.sign(journal_records(journal, t))) for t in TABLES]
        self.floor = Floor(self.broker.port, self.sims)
        for i, sim in enumerate(self.sims):
            self.floor.online(sim.table)
            self.floor.deal_coups(sim.table, 3 + i)
        self.floor.deal_coups("T12", 85)  # into its second shoe: a current and a previous shoe
        host, port = self.pit.address
        self.base = f"http://{host}:{port}"

    def sim(self, table: str) -> SimTable:
        return self.floor.tables[table]

    def close(self) -> None:
        self.floor.close()
        self.pit.close()
        self.collector.stop()
        self.broker.stop()


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    s = Setup(tmp_path_factory.mktemp("pit"))
    try:
        yield s
    finally:
        s.close()


def tile(page: Any, table: str) -> Any:
    return page.locator(f'.tile[data-table="{table}"]')


def wait_tile(page: Any, table: str, attr: str, value: str) -> None:
    page.wait_for_function(
        "([t, a, v]) => { const e = document.querySelector('.tile[data-table=\"' + t + '\"]');"
        " return e && e.getAttribute(a) === v; }",
        arg=[table, attr, value],
        timeout=45_000,  # twelve tables' records through one broker and one collector: 15 s missed once under load
    )


def test_tiles_follow_the_tables(browser: Any, setup: Setup) -> None:
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    try:
        page.goto(setup.base + "/")
        for sim in setup.sims:
            wait_tile(page, sim.table, "data-coup", str(sim.coup))
            wait_tile(page, sim.table, "data-shoe", str(sim.shoe))
            last = sim.coups[-1]
            words = result_text(last["winner"], last["player_total"], last["banker_total"])
            result = tile(page, sim.table).locator(".result")

            def shown(result: Any = result, words: str = words) -> bool:
                return (result.text_content() or "") == words

            # the tile's attributes and its result line are painted in turn: wait for the line too (a loaded
            # machine once read it a frame early)
            until(shown, 10, f"{sim.table}'s last result {words}")
            assert tile(page, sim.table).get_attribute("data-link") == "online"
        assert page.locator(".tile").count() == 12
        # A table deals on: its tile follows; one goes offline, one loses its shoe.
        setup.floor.deal_coups("T03", 2)
        wait_tile(page, "T03", "data-coup", str(setup.sim("T03").coup))
        setup.floor.online("T05", up=False)
        wait_tile(page, "T05", "data-link", "offline")
        setup.sim("T06").alarms.append("link_down")
        setup.floor.publish_state("T06").wait_for_publish(10)
        wait_tile(page, "T06", "data-link", "link down")
        assert tile(page, "T06").locator('[data-testid="link"]').text_content() == "link down"
        big_road = tile(page, "T01").locator(".mini .c")
        assert big_road.count() > 0
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / "pit-12-tables-1920x1080.png"))
    finally:
        page.close()


def test_recall_shows_the_journal_s_cards(browser: Any, setup: Setup) -> None:
    sim = setup.sim("T12")
    chosen = next(c for c in sim.coups if c["shoe"] == 1 and c["coup"] == 41)  # "show me coup 41"
    with Archive(setup.url, create=False) as archive:
        until(lambda: archive.recall("T12", 2, sim.coups[-1]["coup"]) is not None, 30, "T12 archived")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto(setup.base + "/table/T12")
        page.wait_for_function("() => document.body.dataset.loads >= 1")
        assert recall_on_page(page, 1, 41) == (chosen["player"], chosen["banker"])
        # A coup the archive does not hold is named, not shown.
        assert recall_on_page(page, 1, 500) is None
        assert "no coup 500" in page.locator('[data-testid="recall"]').text_content()
        # The coups of the current shoe (every one so far) and of the previous shoe (all of it), newest first.
        current = [c for c in sim.coups if c["shoe"] == 2]
        rows = page.locator('[data-testid="coups-current"] tr[data-coup][data-void="false"]')
        assert rows.count() == len(current) >= 1
        assert rows.first.get_attribute("data-coup") == str(current[-1]["coup"])
        previous = page.locator('[data-testid="coups-previous"] tr[data-coup][data-void="false"]')
        assert previous.count() == len([c for c in sim.coups if c["shoe"] == 1]) >= 10
        row = page.locator('[data-testid="coups-previous"] tr[data-coup="41"]').first
        cards = row.locator('td[data-side="player"] .card').evaluate_all("es => es.map(e => e.dataset.card)")
        assert cards == chosen["player"]
        assert page.locator('[data-testid="road-big_road"] .c').count() > 0
        natural = next(c for c in sim.coups if c["shoe"] == 1 and c["natural"])
        text = page.locator(f'[data-testid="coups-previous"] tr[data-coup="{natural["coup"]}"]').first.text_content()
        assert "natural" in text and "true" not in text  # the flag in words, not the JSON value
        # The edge chart: one line per offered wager, one point per coup of the current shoe.
        lines = page.locator('[data-testid="edges"] svg polyline')
        bets = lines.evaluate_all("es => es.map(e => e.dataset.bet)")
        assert "banker" in bets and "player" in bets and "tie" in bets
        points = lines.first.get_attribute("points") or ""
        assert len(points.split()) == len(current)
        page.screenshot(path=str(OUTPUT / "pit-table-page-1280x800.png"), full_page=True)
    finally:
        page.close()


def settle(archive: Archive, setup: Setup) -> None:
    """Wait until every table's records are archived up to what it sent and the feed is still for a second."""
    for sim in setup.floor.tables.values():
        if sim.sent:
            last = sim.records[sim.sent - 1].seq
            until(lambda sim=sim, last=last: archive.head(sim.table).seq >= last, 30, f"{sim.table} archived")  # type: ignore[misc]
    before: list[int] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        now = [f.id for f in archive.feed(200)]
        if now and now == before:
            return
        before = now
        time.sleep(1.0)
    raise AssertionError("the feed never settled")


def test_an_advantage_and_a_repeated_shoe_appear_in_the_feed(browser: Any, setup: Setup) -> None:
    # The twelve tables deal the same journal: the real collector raises a repeated shoe for every table past
    # its 20th dealt card after the first, and an alert for each of T12's own advantage records (the table's
    # live edge found them while the demo dealt it). The feed on the page is the archive's, newest first.
    t12 = setup.sim("T12")
    sent = t12.records[: t12.sent]
    advantages = [r for r in sent if r.kind == "advantage"]
    assert advantages, "the seeded demo journal holds an advantage record in T12's first 85 coups"
    with Archive(setup.url, create=False) as archive:
        until(
            lambda: any(f.kind == "repeated_shoe" and f.table == "T12" for f in archive.feed(None, "T12")),
            60,
            "T12's repeated shoe in the feed",
        )
        until(
            lambda: any(f.kind == "advantage" and f.seq == advantages[-1].seq for f in archive.feed(None, "T12")),
            60,
            f"T12's last advantage (#{advantages[-1].seq}) in the feed",
        )
        settle(archive, setup)
        real = archive.feed(200)
    repeated = next(f for f in real if f.kind == "repeated_shoe" and f.table == "T12")
    assert repeated.extra["other_table"] != "T12" and repeated.record is not None
    # Then one advantage published by another system on the alert topic (the pit follows the topic): it goes
    # on top, and flags its table's tile.
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    advantage_record = {
        "v": 2, "table": "T02", "seq": 9000, "kind": "advantage", "at": now, "session": 1, "number": None,
        "cause": None, "body": {"shoe": 1, "coup": 40, "bet": "dragon_bonus_player", "ev": 0.0312, "cards_left": 61},
        "prev": "0" * 64, "hash": "1" * 64,
    }  # fmt: skip
    setup.floor.alert("s1", {
        "v": 1, "id": 100_000, "at": now, "site": "s1", "table": "T02", "seq": 9000, "kind": "advantage",
        "detail": "dragon_bonus_player EV +3.12% at coup 40 (61 cards left)", "record": advantage_record, "extra": {},
    })  # fmt: skip
    page = browser.new_page(viewport={"width": 800, "height": 480})
    try:
        page.goto(setup.base + "/")
        page.wait_for_function(
            "() => { const f = document.querySelectorAll('[data-testid=\"feed\"] li');"
            " return f.length >= 2 && f[0].dataset.table === 'T02' && f[0].dataset.kind === 'advantage'; }",
            timeout=15_000,
        )
        items = page.locator('[data-testid="feed"] li')
        shown = items.evaluate_all("es => es.map(e => [e.dataset.kind, e.dataset.table, e.textContent])")
        # below the newest, the archive's feed in its order (newest first), each with the record behind it
        assert [(k, t) for k, t, _ in shown[1 : 1 + len(real[:99])]] == [(f.kind, f.table) for f in real[:99]]
        text = {(k, t): x for k, t, x in reversed(shown)}
        assert repeated.extra["other_table"] in text["repeated_shoe", "T12"]
        assert f"record #{advantages[-1].seq}" in text["advantage", "T12"]
        assert "dragon_bonus_player" in items.nth(0).locator(".record").text_content()
        flag = tile(page, "T02").locator('.flag[data-bet="dragon_bonus_player"]')
        flag.wait_for(timeout=10_000)
        assert "+3.12%" in flag.text_content()
        sizes = page.evaluate(
            "() => [...document.querySelectorAll('body *')].filter(e => e.childNodes.length &&"
            " [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()) && e.getClientRects().length)"
            ".map(e => [e.textContent.trim().slice(0, 20), parseFloat(getComputedStyle(e).fontSize)])"
        )
        small = [s for s in sizes if s[1] < 10]
        assert not small, small
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 800
        page.screenshot(path=str(OUTPUT / "pit-12-tables-800x480.png"))
        page.screenshot(path=str(OUTPUT / "pit-12-tables-800x480-full.png"), full_page=True)
    finally:
        page.close()
    # The same feed is in the API for other tools.
    feed = setup.pit.snapshot()["feed"]
    assert (feed[0]["kind"], feed[0]["table"]) == ("advantage", "T02")
    assert [(f["kind"], f["table"], f["seq"]) for f in feed[1:20]] == [(f.kind, f.table, f.seq) for f in real[:19]]
