"""A small, bounded Server-Sent Events server: one :class:`Board` of encoded snapshots, served to every page.

Neutral: it knows nothing of a table or a floor. The table's scoreboard (:mod:`controller.board.scoreboard`)
and the floor's pit view (:mod:`floor.pit`) both publish on a :class:`Board` and serve it through
:class:`BoardServer` (standard library only); see :mod:`eventstream.server` for the bounds it keeps.
"""

from eventstream.server import (
    HEADER_TIMEOUT,
    MAX_CONNECTIONS,
    MAX_CONNECTIONS_PER_ADDRESS,
    MAX_STREAMS,
    MAX_STREAMS_PER_ADDRESS,
    Board,
    BoardHandler,
    BoardHost,
    BoardServer,
    load_static,
)

__all__ = [
    "HEADER_TIMEOUT",
    "MAX_CONNECTIONS",
    "MAX_CONNECTIONS_PER_ADDRESS",
    "MAX_STREAMS",
    "MAX_STREAMS_PER_ADDRESS",
    "Board",
    "BoardHandler",
    "BoardHost",
    "BoardServer",
    "load_static",
]
