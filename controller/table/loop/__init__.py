"""The table loop, one job per module: the only owner of the table's state, in the shell.

* :mod:`~controller.table.loop.inbox`: what other threads hand the loop (the :data:`LoopEvent` types), the bounded
  queue, its wake-up pipe and the drops counted by kind;
* :mod:`~controller.table.loop.commit`: the write-ahead commit (staging, group commit, ACK gating, the PROMPT after
  each commit, the retries while the journal is at fault);
* :mod:`~controller.table.loop.shell_alarms`: the shell's own alarms, JOURNAL FULL / FAULT and PRESS AGAIN;
* :mod:`~controller.table.loop.resume`: the journal read back at start for the pure replay
  (:mod:`controller.game.replay`);
* :mod:`~controller.table.loop.loop`: :class:`TableLoop`, which waits on the shoe's port and the inbox and glues
  the parts.

The state the loop owns is :class:`controller.game.table.TableState` (pure).
"""

from controller.table.loop.commit import MAX_STAGED, WriteAhead
from controller.table.loop.inbox import (
    PUT_WAIT,
    QUEUE_BOUND,
    READ_SIZE,
    FloorAck,
    Inbox,
    LoopEvent,
    PanelPress,
    PortState,
    Stop,
    WireBytes,
)
from controller.table.loop.loop import JournalLike, LoopMetrics, LoopStats, PortReader, Pruner, TableLoop
from controller.table.loop.resume import Resumed, resume
from controller.table.loop.shell_alarms import INPUT_LOST_HOLD

__all__ = [
    "INPUT_LOST_HOLD",
    "MAX_STAGED",
    "PUT_WAIT",
    "QUEUE_BOUND",
    "READ_SIZE",
    "FloorAck",
    "Inbox",
    "JournalLike",
    "LoopEvent",
    "LoopMetrics",
    "LoopStats",
    "PanelPress",
    "PortReader",
    "PortState",
    "Pruner",
    "Resumed",
    "Stop",
    "TableLoop",
    "WireBytes",
    "WriteAhead",
    "resume",
]
