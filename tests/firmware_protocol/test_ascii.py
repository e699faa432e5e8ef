"""The ASCII dialect: every card form accepted, every other line reported, never a wrong card."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_protocol.ascii import (
    AsciiCard,
    AsciiDecoder,
    AsciiEvent,
    LineRejected,
    LineRejectReason,
    encode_card,
    encode_line,
)
from firmware_protocol.messages import CardRead

from .strategies import cards

# The reference table, written out independently of the decoder: every accepted token (upper case).
RANK_FORMS = {
    1: ["A"], 2: ["2"], 3: ["3"], 4: ["4"], 5: ["5"], 6: ["6"], 7: ["7"], 8: ["8"], 9: ["9"],
    10: ["T", "10"], 11: ["J"], 12: ["Q"], 13: ["K"],
}  # fmt: skip
TOKENS: dict[bytes, CardRead] = {
    f"{suit}{form}".encode(): CardRead(rank, suit)
    for suit in "SHDC"
    for rank, forms in RANK_FORMS.items()
    for form in forms
}
ENDINGS = [b"\r\n", b"\n", b"\r"]


def feed_all(decoder: AsciiDecoder, chunks: list[bytes]) -> list[AsciiEvent]:
    return [event for chunk in chunks for event in decoder.feed(chunk)]


def case_variants(token: bytes) -> list[bytes]:
    letters = [(chr(c).upper(), chr(c).lower()) for c in token]
    return ["".join(v).encode() for v in itertools.product(*letters)]


@pytest.mark.parametrize("ending", ENDINGS, ids=["CRLF", "LF", "CR"])
def test_every_card_form_in_every_case_is_accepted(ending: bytes) -> None:
    for token, card in TOKENS.items():
        for variant in case_variants(token):
            for padded in (variant, b" " + variant + b"\t"):
                assert AsciiDecoder().feed(padded + ending) == [AsciiCard(card, padded)], padded


@given(cards)
def test_encode_card_round_trips(card: CardRead) -> None:
    line = encode_card(card)
    assert line.endswith(b"\r\n")
    assert AsciiDecoder().feed(line) == [AsciiCard(card, line[:-2])]


def test_encode_card_spells_ten_as_10() -> None:
    assert encode_card(CardRead(10, "H")) == b"H10\r\n"
    assert encode_card(CardRead(1, "S")) == b"SA\r\n"


@given(st.binary(max_size=12).filter(lambda b: b"\r" not in b and b"\n" not in b))
def test_no_wrong_card_from_a_line_that_is_not_a_card_token(line: bytes) -> None:
    events = AsciiDecoder().feed(line + b"\r\n")
    token = line.strip(b" \t").upper()
    if token in TOKENS:
        assert events == [AsciiCard(TOKENS[token], line)]
    elif not token:
        assert events == []  # blank line: idle
    else:
        assert len(events) == 1
        assert isinstance(events[0], LineRejected)
        assert events[0].raw == line


@given(
    token=st.sampled_from(sorted(TOKENS)),
    position=st.integers(0, 3),
    byte=st.integers(0, 255).filter(lambda b: b not in b"\r\n"),
    replace=st.booleans(),
)
def test_damaged_card_lines_are_reported_with_their_bytes(
    token: bytes, position: int, byte: int, replace: bool
) -> None:
    damaged = bytearray(token)
    position = min(position, len(damaged) - (1 if replace else 0))
    if replace:
        damaged[position] = byte
    else:
        damaged.insert(position, byte)
    line = bytes(damaged)
    [event] = AsciiDecoder().feed(line + b"\r\n")
    if line.strip(b" \t").upper() in TOKENS:
        assert isinstance(event, AsciiCard)
    else:
        assert isinstance(event, LineRejected)
        assert event.raw == line


def test_reject_reasons() -> None:
    events = AsciiDecoder().feed(b"X1\r\nH11\r\nH1\r\n\x01\xffH5\r\n")
    assert [(e.reason, e.raw) for e in events if isinstance(e, LineRejected)] == [
        (LineRejectReason.NOT_A_CARD, b"X1"),
        (LineRejectReason.NOT_A_CARD, b"H11"),
        (LineRejectReason.NOT_A_CARD, b"H1"),
        (LineRejectReason.BAD_BYTES, b"\x01\xffH5"),
    ]


def test_blank_lines_are_idle() -> None:
    assert AsciiDecoder().feed(b"\r\n\r\n  \t\r\n\n\r") == []


def test_crlf_split_between_chunks_gives_one_card() -> None:
    assert feed_all(AsciiDecoder(), [b"DQ\r", b"\n"]) == [AsciiCard(CardRead(12, "D"), b"DQ")]


def test_over_long_line_is_cut_reported_and_its_tail_never_read_as_a_card() -> None:
    decoder = AsciiDecoder(max_line=8)
    events = feed_all(decoder, [b"xxxxxx", b"xxxxxx", b"xxH10", b"\r\nS9\r\n"])
    assert [(type(e).__name__, getattr(e, "reason", None)) for e in events] == [
        ("LineRejected", LineRejectReason.TOO_LONG),
        ("LineRejected", LineRejectReason.TOO_LONG_TAIL),
        ("AsciiCard", None),
    ]
    assert b"".join(e.raw for e in events[:2]) == b"x" * 14 + b"H10"
    assert events[2] == AsciiCard(CardRead(9, "S"), b"S9")


def test_one_bit_can_turn_a_card_into_another_card() -> None:
    """The cost of the ASCII dialect, stated as a fact: 'S' (0x53) and 'C' (0x43) differ in one bit, so
    a flipped bit turns the king of spades into the king of clubs and nothing can tell."""
    damaged = bytes([ord("S") ^ 0x10]) + b"K\r\n"
    assert AsciiDecoder().feed(damaged) == [AsciiCard(CardRead(13, "C"), b"CK")]


@settings(max_examples=300)
@given(chunks=st.lists(st.binary(max_size=100), max_size=10), cap=st.integers(3, 40))
def test_arbitrary_bytes_never_raise_and_the_buffer_stays_capped(chunks: list[bytes], cap: int) -> None:
    decoder = AsciiDecoder(max_line=cap)
    for chunk in chunks:
        for event in decoder.feed(chunk):
            if isinstance(event, AsciiCard):
                assert event.raw.strip(b" \t").upper() in TOKENS
            else:
                assert event.raw
        assert decoder.buffered <= cap


no_line_end = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=10)


@given(st.lists(st.one_of(cards, no_line_end), max_size=20), st.integers(1, 7))
def test_stream_of_cards_and_faults_in_any_chunking(items: list[CardRead | str], step: int) -> None:
    """The simulator's mix of good cards and junk lines, cut into any chunk size: exactly the cards come
    out, in order (a junk line that happens to spell a card token counts as that card)."""
    data = b"".join(encode_card(i) if isinstance(i, CardRead) else encode_line(i) for i in items)
    chunks = [data[k : k + step] for k in range(0, len(data), step)]
    expected = []
    for item in items:
        if isinstance(item, CardRead):
            expected.append(item)
        elif (token := item.encode().strip(b" \t").upper()) in TOKENS:
            expected.append(TOKENS[token])
    got = [e.card for e in feed_all(AsciiDecoder(), chunks) if isinstance(e, AsciiCard)]
    assert got == expected


def test_a_one_mebibyte_line_is_capped_and_reported_once() -> None:
    """A flood without a line end, read 4 KiB at a time as the table loop does: the decoder never holds
    more than ``max_line`` bytes, reports the line once (TOO_LONG; the rest comes back as TOO_LONG_TAIL,
    never parsed) and the next line after the line end decodes normally."""
    decoder = AsciiDecoder()
    flood = bytes(random_printable(1 << 20))
    events: list[AsciiEvent] = []
    held = 0
    for at in range(0, len(flood), 4096):
        events += decoder.feed(flood[at : at + 4096])
        held = max(held, decoder.buffered)
    events += decoder.feed(b"\r\nHK\r\n")
    assert held <= decoder.max_line
    reasons = [e.reason for e in events if isinstance(e, LineRejected)]
    assert reasons.count(LineRejectReason.TOO_LONG) == 1
    assert set(reasons) == {LineRejectReason.TOO_LONG, LineRejectReason.TOO_LONG_TAIL}
    assert max(len(e.raw) for e in events) <= 4096 + decoder.max_line
    assert events[-1] == AsciiCard(CardRead(13, "H"), b"HK")


def random_printable(size: int) -> bytes:
    import random

    rng = random.Random(8)
    return bytes(rng.choice(b"ABCDEFGHJKSXYZ0123456789 ") for _ in range(size))
