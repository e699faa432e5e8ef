"""The simulated bet-spot reader fed with what the players and the dealer put on the spots.

:class:`ReaderFeed` joins the money table's reads (:class:`hw_sim.money.SpotRead`, the spots as the
antennas see them, the reader's faults included) to helper proto's :class:`hw_sim.spot_reader.SpotReader`
(the reader's firmware and wire): a plain read sets the reader's truth and reports the spot; a faulty read
is a report that leaves the truth alone (a chip missing, a ghost chip from the neighbouring spot), and the
read that puts it right follows. A card read (:class:`hw_sim.money.CardRead`) puts a player's card in a
seat's card reader or takes it out. Sans-I/O like both: ``start``, ``receive``, ``poll`` with the time
injected; the command line (``--spots-link``/``--spots-tcp``) runs it against a second pty or socket.
"""

from __future__ import annotations

from controller.game.wagers import Spot
from firmware_protocol.spots import SpotCode
from hw_sim.money import CardRead, MoneyTable, ReadKind, SpotRead
from hw_sim.spot_reader import SpotReader

__all__ = ["ReaderFeed"]


def _code(spot: Spot) -> SpotCode:
    return SpotCode[spot.name]


class ReaderFeed:
    """The reader under the layout: the money table's reads in, the reader's bytes out."""

    def __init__(self, money: MoneyTable, reader: SpotReader) -> None:
        money.keep_reads = True
        self.money = money
        self.reader = reader
        self.reads = 0
        self._said: dict[tuple[int, SpotCode], frozenset[int]] = {}  # what the reader last reported of a spot

    @property
    def started(self) -> bool:
        return self.reader.session is not None

    @property
    def pending(self) -> bool:
        """Reads are still to be carried out."""
        return self.money.next_read_at() is not None

    @property
    def settled(self) -> bool:
        """Everything the reader has to tell the table has been told and acknowledged."""
        return self.started and not self.pending and self.reader.unacked == 0 and not self.reader.owed

    def start(self, now: float) -> None:
        self.reader.start(now)

    def receive(self, data: bytes, now: float) -> None:
        self.reader.receive(data, now)

    def poll(self, now: float) -> bytes:
        """Carry out the reads due by ``now``, then the reader's bytes due now."""
        if not self.started:
            return b""
        for read in self.money.due_reads(now):
            self._apply(read, now)
        return self.reader.poll(now)

    def next_deadline(self) -> float | None:
        times = [t for t in (self.reader.next_deadline(), self.money.next_read_at()) if t is not None]
        return min(times) if times else None

    def _apply(self, read: SpotRead | CardRead, now: float) -> None:
        self.reads += 1
        if isinstance(read, CardRead):
            self.reader.card(read.seat, read.uid, now)
            return
        key = (read.seat, _code(read.spot))
        mine = self.reader.truth.get(key, frozenset())
        if read.kind is ReadKind.PLACE:
            self._place(key, frozenset(read.uids), now)
        elif read.kind is ReadKind.SYNC:
            self._place(key, frozenset(self.money.spots.get((read.seat, read.spot), ())), now)
        elif read.kind is ReadKind.REPORT:
            self._report(key, frozenset(read.uids), now)
        elif read.kind is ReadKind.GHOST:
            self._report(key, mine | set(read.uids), now)
        else:
            self._report(key, mine, now)

    def _place(self, key: tuple[int, SpotCode], uids: frozenset[int], now: float) -> None:
        """The reader's truth becomes ``uids``; reported when it changed, or when the last report of the spot
        (a faulty one) said otherwise."""
        if not self.reader.place(key[0], key[1], uids, now) and self._said.get(key, frozenset()) != uids:
            self.reader.report(key[0], key[1], uids, now)
        self._said[key] = uids

    def _report(self, key: tuple[int, SpotCode], uids: frozenset[int], now: float) -> None:
        self.reader.report(key[0], key[1], uids, now)
        self._said[key] = uids
