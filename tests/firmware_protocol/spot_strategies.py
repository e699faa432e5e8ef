"""Hypothesis strategies for every message of the bet-spot reader's dialect, over all field values."""

from __future__ import annotations

from hypothesis import strategies as st

from firmware_protocol.messages import Ack, Resend, Reset
from firmware_protocol.spots import (
    MAX_CHIPS,
    MAX_SEAT,
    READER_PROTOCOL_VERSION,
    CardIn,
    CardOut,
    ReaderFlags,
    ReaderHeartbeat,
    ReaderHello,
    ReaderStatus,
    SnapshotBegin,
    SnapshotEnd,
    SpotCode,
    SpotReport,
    SpotsMessage,
    Window,
    WindowState,
)

u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFFFFFF)
uids = st.integers(0, (1 << 64) - 1)
seats = st.integers(1, MAX_SEAT)
short_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=32)

hellos = st.builds(
    ReaderHello,
    short_text,
    short_text,
    st.integers(0, 0xFF) | st.just(READER_PROTOCOL_VERSION),
    u32,
    st.sets(seats).map(lambda s: tuple(sorted(s))),
    st.sets(st.sampled_from(SpotCode)).map(lambda s: tuple(sorted(s))),
)
reports = st.builds(
    SpotReport,
    seats,
    st.sampled_from(SpotCode),
    st.lists(uids, max_size=MAX_CHIPS, unique=True).map(tuple),
)
reliable_messages: st.SearchStrategy[SpotsMessage] = st.one_of(
    hellos,
    reports,
    st.builds(SnapshotBegin, u16),
    st.builds(SnapshotEnd, u16, u16),
    st.builds(ReaderStatus, st.integers(0, 0xFF).map(ReaderFlags)),
    st.builds(CardIn, st.integers(0, MAX_SEAT), uids),
    st.builds(CardOut, st.integers(0, MAX_SEAT), uids),
)
messages: st.SearchStrategy[SpotsMessage] = st.one_of(
    reliable_messages,
    st.builds(ReaderHeartbeat, u32),
    st.builds(Ack, u16),
    st.builds(Resend, u16),
    st.builds(Window, st.sampled_from(WindowState)),
    st.just(Reset()),
)
