"""The table loop, one job per module: the only owner of the table's state, in the shell.

* :mod:`~controller.loop.inbox`: what other threads hand the loop (the :data:`LoopEvent` types), the bounded
  queue, its wake-up pipe and the drops counted by kind;
* :mod:`~controller.loop.commit`: the write-ahead commit (staging, group commit, ACK gating, the PROMPT after
  each commit, the retries while the journal is at fault);
* :mod:`~controller.loop.shell_alarms`: the shell's own alarms, JOURNAL FULL / FAULT and PRESS AGAIN;
* :mod:`~controller.loop.resume`: the journal read back at start for the pure replay
  (:mod:`controller.game.replay`);
* :mod:`~controller.loop.loop`: :class:`TableLoop`, which waits on the shoe's port and the inbox and glues
  the parts.

The state the loop owns is :class:`controller.game.table.TableState` (pure).
"""

from controller.loop.commit import MAX_STAGED, WriteAhead
from controller.loop.inbox import (
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
from controller.loop.loop import JournalLike, LoopMetrics, LoopStats, PortReader, Pruner, TableLoop
from controller.loop.resume import Resumed, resume
from controller.loop.shell_alarms import INPUT_LOST_HOLD

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
