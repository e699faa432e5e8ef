"""In-memory link to the software shoe: a null modem on a virtual clock, for tests and the demo.

:class:`MemoryLink` owns a :class:`~hw_sim.core.ShoeSimulator` and a virtual clock. ``read()`` moves the
clock to the simulator's next deadline (at most ``step`` seconds ahead) and returns the chunks the shoe
wrote by then, already through the fault stage; ``write()`` hands the controller's bytes to the shoe at
the current virtual time. Nothing sleeps, so a whole 8-deck shoe with faults runs in well under a second.
"""

from __future__ import annotations

from hw_sim.core import ShoeSimulator


class MemoryLink:
    """The shoe's end of an in-memory serial line."""

    def __init__(self, sim: ShoeSimulator, *, start_at: float = 0.0, step: float = 0.05) -> None:
        self.sim = sim
        self.now = start_at
        self.step = step
        sim.start(start_at)

    @property
    def finished(self) -> bool:
        return self.sim.finished

    def read(self) -> list[bytes]:
        """Advance the virtual clock (to the next deadline, at most ``step``) and return what was sent."""
        deadline = self.sim.next_deadline()
        limit = self.now + self.step
        self.now = limit if deadline is None else min(max(deadline, self.now), limit)
        return self.sim.poll(self.now)

    def write(self, data: bytes) -> None:
        """Bytes from the controller, delivered at the current virtual time."""
        self.sim.receive(data, self.now)
