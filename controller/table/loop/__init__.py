"""The table loop, one job per module: the only owner of the table's state, in the shell.

* :mod:`~controller.table.loop.inbox`: what other threads hand the loop (the :data:`LoopEvent` types), the bounded
  queue, its wake-up pipe and the drops counted by kind;
* :mod:`~controller.table.loop.commit`: the write-ahead commit (staging, group commit, ACK gating, the PROMPT after
  each commit, the retries while the journal is at fault);
* :mod:`~controller.table.loop.shell_alarms`: the shell's own alarms, JOURNAL FULL / FAULT and PRESS AGAIN;
* :mod:`~controller.table.loop.resume`: the journal read back at start for the pure replay
  (:mod:`controller.game.replay`);
* :mod:`~controller.table.loop.ports`: what a device's port is to the loop (:class:`Port`) and what the loop lends
  it (:class:`TableSide`); :mod:`~controller.table.loop.shoe_port` the shoe's (:class:`ShoePort`),
  :mod:`~controller.table.loop.reader` the bet-spot reader's (:class:`ReaderPort`, and the betting window),
  :mod:`~controller.table.loop.tray` the chip tray's (:class:`TrayPort`, and the settle rule's edge);
* :mod:`~controller.table.loop.loop`: :class:`TableLoop`, which waits on its ports and the inbox, schedules them
  (the shoe first) and glues the parts; :class:`LoopConfig`, everything else it is given.

The state the loop owns is :class:`controller.game.table.TableState` (pure).
"""

from controller.table.loop.commit import MAX_STAGED, WriteAhead
from controller.table.loop.inbox import (
    PUT_WAIT,
    QUEUE_BOUND,
    READ_SIZE,
    BuyInEntry,
    FloorAck,
    Inbox,
    KeyEntry,
    LoopEvent,
    PanelPress,
    PinEntry,
    PinVerdict,
    PortState,
    RateEntry,
    StaffListIn,
    Stop,
    WireBytes,
)
from controller.table.loop.loop import JournalLike, LoopConfig, LoopMetrics, LoopStats, Pruner, TableLoop
from controller.table.loop.ports import Port, PortReader, TableSide
from controller.table.loop.reader import ReaderPort
from controller.table.loop.resume import Resumed, resume
from controller.table.loop.shell_alarms import INPUT_LOST_HOLD
from controller.table.loop.shoe_port import ShoePort
from controller.table.loop.tray import TrayPort

__all__ = [
    "INPUT_LOST_HOLD",
    "MAX_STAGED",
    "PUT_WAIT",
    "QUEUE_BOUND",
    "READ_SIZE",
    "BuyInEntry",
    "FloorAck",
    "Inbox",
    "JournalLike",
    "KeyEntry",
    "LoopConfig",
    "LoopEvent",
    "LoopMetrics",
    "LoopStats",
    "PanelPress",
    "PinEntry",
    "PinVerdict",
    "Port",
    "PortReader",
    "PortState",
    "Pruner",
    "RateEntry",
    "ReaderPort",
    "Resumed",
    "ShoePort",
    "StaffListIn",
    "Stop",
    "TableLoop",
    "TableSide",
    "TrayPort",
    "WireBytes",
    "WriteAhead",
    "resume",
]
