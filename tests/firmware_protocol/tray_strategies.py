"""Hypothesis strategies for every message of the chip tray's dialect, over all field values."""

from __future__ import annotations

from hypothesis import strategies as st

from firmware_protocol.messages import Ack, Resend, Reset
from firmware_protocol.tray import (
    MAX_TEXT,
    MAX_TUBE_CHIPS,
    MAX_TUBES,
    TRAY_PROTOCOL_VERSION,
    CountRequest,
    TrayFlags,
    TrayHeartbeat,
    TrayHello,
    TraySnapshotBegin,
    TraySnapshotEnd,
    TrayStatus,
    TrayWire,
    TubeReport,
)

u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFFFFFF)
uids = st.integers(0, (1 << 64) - 1)
tubes = st.integers(1, MAX_TUBES)
short_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=MAX_TEXT)

hellos = st.builds(
    TrayHello,
    short_text,
    short_text,
    st.integers(0, 0xFF) | st.just(TRAY_PROTOCOL_VERSION),
    u32,
    tubes,
)
reports = st.builds(TubeReport, tubes, st.lists(uids, max_size=MAX_TUBE_CHIPS, unique=True).map(tuple))
reliable_messages: st.SearchStrategy[TrayWire] = st.one_of(
    hellos,
    reports,
    st.builds(TraySnapshotBegin, u16),
    st.builds(TraySnapshotEnd, u16, u16),
    st.builds(TrayStatus, st.integers(0, 0xFF).map(TrayFlags)),
)
messages: st.SearchStrategy[TrayWire] = st.one_of(
    reliable_messages,
    st.builds(TrayHeartbeat, u32),
    st.builds(Ack, u16),
    st.builds(Resend, u16),
    st.just(CountRequest()),
    st.just(Reset()),
)
