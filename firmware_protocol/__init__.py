"""The wire protocols of the table's devices, sans-I/O: the card-reading shoe's and the bet-spot reader's.

Bytes in, typed events out; messages in, bytes out. No serial ports, threads, clocks or logging here:
the controller's serial link and the simulator (``hw_sim``) both drive these same objects. Both devices
share one framing and one set of reliability rules (:mod:`.binary`, :mod:`.session`), each over its own
:class:`~firmware_protocol.binary.Dialect` (the shoe's in :mod:`.messages`, the reader's in :mod:`.spots`).
"""
