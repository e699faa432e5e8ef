"""The software shoe: shoe model, dealer, firmware side of the protocol, faults, transports, record of truth.

See ``docs/simulator.md``. The core (:mod:`hw_sim.core`) is sans-I/O with an injected clock; the command
line (:mod:`hw_sim.cli`, ``shoe-sim``) runs it on a pty or a TCP port.
"""
