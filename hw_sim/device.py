"""What the simulator's two devices (the shoe and the bet-spot reader) share: the firmware session each runs
once booted, seen from outside (its id, and how many of its events the table has not yet acknowledged)."""

from __future__ import annotations

from firmware_protocol.session import ShoeSession


class SessionDevice:
    """A simulated device with a firmware session (``None`` until it boots, and while it is off)."""

    session: ShoeSession | None

    @property
    def session_id(self) -> int | None:
        return self.session.session_id if self.session is not None else None

    @property
    def unacked(self) -> int:
        return self.session.unacked if self.session is not None else 0
