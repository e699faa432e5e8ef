"""The link contract: what a controller can rely on from a shoe, on every backend (see conftest.py).

Binary dialect: under 1 % byte corruption, 1 % byte drops, duplicated frames and frames cut into chunks,
every card dealt reaches the controller exactly once and in order (numbers 1, 2, 3 ... of one session),
and equals the record of truth.

ASCII dialect (no checksum): every damaged line is either reported (LineRejected) or counted as damage the
dialect cannot see; a card that is accepted but is not the truth card at that position comes only from a
line the truth log marks as corrupted (or a line whose line end that corruption destroyed).
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest

from firmware_protocol.ascii import AsciiCard, AsciiDecoder, AsciiEvent, LineRejected, encode_card
from firmware_protocol.messages import CardRead
from firmware_protocol.session import ControllerSession, ShoeEvent
from tests.contract.conftest import Link, LinkFactory

#: Wall-clock limit for one conversation (a hang fails instead of blocking the run).
DEADLINE = 120.0

BINARY_FAULTS = {"corrupt": 0.01, "drop": 0.01, "duplicate": 0.05, "split": 0.2}
ASCII_FAULTS = {"corrupt": 0.02, "split": 0.2}


def play_controller(link: Link) -> list[ShoeEvent]:
    """Be the controller: feed every chunk to a ControllerSession, ACK each event at once, send what
    poll() owes. Returns the events delivered."""
    ctrl = ControllerSession()
    delivered: list[ShoeEvent] = []
    started = time.monotonic()
    while not link.finished:
        assert time.monotonic() - started < DEADLINE, f"{link.name}: no end of the shoe within {DEADLINE} s"
        for chunk in link.read():
            for event in ctrl.receive(chunk, link.now()):
                if isinstance(event, ShoeEvent):
                    delivered.append(event)
                    link.write(ctrl.acknowledge(event.number, event.key))
        _, out = ctrl.poll(link.now())
        if out:
            link.write(out)
    return delivered


def test_binary_every_card_exactly_once_in_order(open_link: LinkFactory, record_property: Any) -> None:
    link = open_link("binary", BINARY_FAULTS)
    delivered = play_controller(link)

    numbers = [e.number for e in delivered]
    assert numbers == list(range(1, len(numbers) + 1)), "events not delivered once each, in order"
    assert len({e.session_id for e in delivered}) == 1
    truth = link.truth()
    if truth is None:  # a real shoe: only the invariants above can be checked
        return
    cards = [(e.seq, e.message.token) for e in delivered if isinstance(e.message, CardRead)]
    expected = [(t["seq"], t["card"]) for t in truth if t["event"] == "card"]
    assert cards == expected
    shoe_cards = sum(t["cards"] for t in truth if t["event"] == "shoe_start")
    assert len(expected) > shoe_cards // 2, "the shoes were not really dealt"
    faults = Counter(t["kind"] for t in truth if t["event"] == "fault")
    record_property("faults", dict(faults))
    for kind in BINARY_FAULTS:
        assert faults[kind] > 0, f"no {kind} fault was injected: the test proves nothing about it"


def _sent_lines(truth: list[dict[str, Any]]) -> tuple[list[bytes], list[str], set[int]]:
    """Per line (in order): the bytes the shoe really sent, the truth card, and which lines were damaged."""
    lines: dict[int, bytes] = {}
    cards: dict[int, str] = {}
    damaged: set[int] = set()
    for t in truth:
        if t["event"] == "card":
            token = t["card"]
            rank = "A23456789TJQK".index(token[0]) + 1
            lines[t["seq"]] = encode_card(CardRead(rank, token[1]))
            cards[t["seq"]] = token
        elif t["event"] == "fault" and t["kind"] in ("corrupt", "drop"):
            lines[t["seq"]] = bytes.fromhex(t["sent"])
            damaged.add(t["seq"])
    order = sorted(lines)
    assert order == list(range(1, len(order) + 1)), "line numbers in the truth log are not 1, 2, 3 ..."
    return [lines[k] for k in order], [cards[k] for k in order], {k - 1 for k in damaged}


def test_ascii_damage_is_reported_or_counted_never_silent(open_link: LinkFactory, record_property: Any) -> None:
    link = open_link("ascii", ASCII_FAULTS)
    received: list[bytes] = []
    live: list[AsciiEvent] = []
    decoder = AsciiDecoder()
    started = time.monotonic()
    while not link.finished:
        assert time.monotonic() - started < DEADLINE
        for chunk in link.read():
            received.append(chunk)
            live.extend(decoder.feed(chunk))
    truth = link.truth()
    if truth is None:  # a real shoe: every line is a card or reported, nothing else
        assert all(isinstance(e, AsciiCard | LineRejected) for e in live)
        return

    sent, cards, damaged = _sent_lines(truth)
    assert b"".join(received) == b"".join(sent), "the line is not transparent: bytes differ from what was sent"
    # attribute every event to the line whose bytes completed it
    replay = AsciiDecoder()
    per_line = [replay.feed(line) for line in sent]
    assert [e for evs in per_line for e in evs] == live

    counts: Counter[str] = Counter()
    for k, events in enumerate(per_line):
        # an event can carry bytes of line k-1 only if k-1 lost its line end to the damage
        tainted = k in damaged or (k - 1 in damaged and not sent[k - 1].endswith(b"\n"))
        accepted = [e.card.token for e in events if isinstance(e, AsciiCard)]
        if not tainted:
            assert events and all(isinstance(e, AsciiCard) for e in events), f"line {k + 1}: {events}"
            assert accepted == [cards[k]], f"line {k + 1}: wrong card from an undamaged line"
            counts["clean"] += 1
            continue
        wrong = [c for c in accepted if c != cards[k]]
        counts["undetected_wrong_card"] += len(wrong)
    for k in sorted(damaged):
        nearby = per_line[k] + (per_line[k + 1] if k + 1 < len(per_line) else [])
        if any(isinstance(e, LineRejected) for e in nearby):
            counts["reported"] += 1
        elif any(isinstance(e, AsciiCard) and e.card.token != cards[k] for e in per_line[k]):
            counts["became_another_card"] += 1
        else:
            # the damage did not change the card (case of a letter, a blank before the line end ...)
            assert [e.card.token for e in per_line[k] if isinstance(e, AsciiCard)] == [cards[k]], k
            counts["harmless"] += 1
    record_property("ascii_damage", dict(counts))
    assert damaged, "no line was damaged: the test proves nothing"
    assert counts["reported"] > 0
    assert counts["reported"] + counts["became_another_card"] + counts["harmless"] == len(damaged)


@pytest.mark.parametrize("seed", [1, 2])
def test_binary_clean_link_delivers_every_event(open_link: LinkFactory, seed: int) -> None:
    """With no faults at all: every reliable event the shoe sent (HELLO, buttons, cut card, cards) arrives."""
    link = open_link("binary", {}, seed=seed)
    delivered = play_controller(link)
    truth = link.truth()
    if truth is None:
        return
    sent = sorted(t["number"] for t in truth if t.get("number") is not None and t["event"] != "lost")
    assert [e.number for e in delivered] == sent
