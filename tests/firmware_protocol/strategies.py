"""Hypothesis strategies for every message of the binary dialect, over all field values."""

from __future__ import annotations

from hypothesis import strategies as st

from firmware_protocol.messages import (
    PROTOCOL_VERSION,
    SUITS,
    Ack,
    Button,
    ButtonPressed,
    CardRead,
    CutCard,
    Due,
    Heartbeat,
    Hello,
    Message,
    Prompt,
    Resend,
    Reset,
    Status,
    StatusFlags,
    Unreadable,
)

u32 = st.integers(0, 0xFFFFFFFF)
u16 = st.integers(0, 0xFFFF)
#: A HELLO string: printable ASCII (0x20-0x7E), at most 32 bytes (docs/protocol.md, table 2.3).
short_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=32)

hellos = st.builds(Hello, short_text, short_text, st.integers(0, 0xFF) | st.just(PROTOCOL_VERSION), u32)
cards = st.builds(CardRead, st.integers(1, 13), st.sampled_from(SUITS))
reliable_messages: st.SearchStrategy[Message] = st.one_of(
    hellos,
    cards,
    st.just(Unreadable()),
    st.just(CutCard()),
    st.builds(ButtonPressed, st.sampled_from(Button)),
    st.builds(Status, st.integers(0, 0xFF).map(StatusFlags)),
)
messages: st.SearchStrategy[Message] = st.one_of(
    reliable_messages,
    st.builds(Heartbeat, u32),
    st.builds(Ack, u16),
    st.builds(Resend, u16),
    st.builds(Prompt, st.sampled_from(Due)),
    st.just(Reset()),
)
