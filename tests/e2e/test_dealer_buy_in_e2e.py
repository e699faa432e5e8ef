"""Buy-ins entered on the dealer screen, end to end: the real table (``shoe-controller run`` on the simulated
shoe with carded players and the bet-spot reader) and its real board process with the dealer screen; buy-ins
posted to the screen as its page posts them reach the table over ``money.sock`` and are journaled once each,
with the player carded at the seat; what the screen refuses (another site's page, not JSON, too big, a seat
not on the table) is refused in one line, costs the screen nothing, and never reaches the journal."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from controller.journal import Journal
from tests.e2e.harness import Harness
from tests.e2e.test_reader_e2e import money_table
from tests.servers import free_port
from tests.waiting import until

pytestmark = pytest.mark.e2e


def post(port: int, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        sent = {"Content-Type": "application/json", **(headers or {})}
        conn.request("POST", "/api/buy-in", body=body, headers=sent)
        resp = conn.getresponse()
        return resp.status, dict(json.loads(resp.read()))
    finally:
        conn.close()


def state(port: int) -> dict[str, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", "/api/state")
        return dict(json.loads(conn.getresponse().read()))
    finally:
        conn.close()


def line(seat: int, cents: int, tender: str) -> bytes:
    return json.dumps({"t": "buy_in", "seat": seat, "cents": cents, "tender": tender, "player_ref": None}).encode()


def test_buy_ins_entered_on_the_dealer_screen_are_journaled_once_for_the_seats_player(harness: Harness) -> None:
    options = money_table(harness, decks=1, commission="payout")
    harness.start_sim(
        "--decks", "1", "--spots-link", str(harness.tmp / "spots"), "--players", "5", "--shoes", "1",
        pace="0.06", seed=41,
    )  # fmt: skip
    dealer = free_port()
    harness.start_daemon(*options)
    harness.start_board(*options[:2], "--scoreboard", f"127.0.0.1:{free_port()}", "--dealer", f"127.0.0.1:{dealer}")
    harness.wait_daemon_log("ready in")

    def money_shown() -> bool:
        try:
            return state(dealer).get("state") == "money"
        except OSError:
            return False

    until(money_shown, 30, "the dealer screen showing the table's money")
    until(lambda: any(r.kind == "player_in" for r in harness.journal_records()), 30, "a carded player seated")
    status, said = post(dealer, line(2, 500_000, "cash"))
    assert (status, said) == (202, {"ok": "seat 2: buy-in $5,000 cash sent to the table"})
    refused = [
        (post(dealer, line(3, 10_000, "cash"), {"Origin": "http://evil.example"}), 403, "another site's page"),
        (post(dealer, line(3, 10_000, "cash"), {"Content-Type": "text/plain"}), 415, "send it as JSON"),
        (post(dealer, b" " * 600), 413, "600 bytes (at most 512)"),
        (post(dealer, line(15, 10_000, "cash")), 400, "seat"),
        (post(dealer, line(10, 10_000, "cash")), 400, "seat 10 is not on this table (seats 1-9)"),
        (post(dealer, line(3, 0, "cash")), 400, "cents"),
    ]
    for (got_status, body), status, why in refused:
        assert got_status == status and why in body["error"] and "\n" not in body["error"], body
    status, said = post(dealer, line(3, 25_000, "chips"))
    assert status == 202, said
    assert harness.wait_sim(timeout=180) == 0
    until(lambda: sum(r.kind == "buy_in" for r in harness.journal_records()) >= 2, 10, "the two buy-ins journaled")
    assert harness.stop_daemon() == 0
    with Journal.open(harness.journal, read_only=True) as journal:
        records = list(journal.records())
    seated: dict[int, str | None] = {}
    taken = []
    for r in records:
        body = json.loads(r.body)
        if r.kind == "player_in":
            seated[body["seat"]] = body["player_ref"]
        elif r.kind == "player_out":
            seated[body["seat"]] = None
        elif r.kind == "buy_in":
            taken.append((body["seat"], body["cents"], body["tender"], body["player_ref"], seated.get(body["seat"])))
    assert [t[:3] for t in taken] == [(2, 500_000, "cash"), (3, 25_000, "chips")]  # once each, nothing refused
    for seat, _cents, _tender, ref, carded in taken:
        assert ref == carded, f"seat {seat}: the buy-in's player {ref} is not the one carded there ({carded})"
    assert any(ref is not None for *_, ref, _c in taken), "no buy-in came for a carded player"
    board_log = harness.companion_logs[-1].read_text()
    assert "Traceback" not in board_log and board_log.count("buy-in refused") == 6, board_log
