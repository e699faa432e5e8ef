"""The wire protocols of the table's devices, sans-I/O: the card-reading shoe's, the bet-spot reader's and the
chip tray's.

Bytes in, typed events out; messages in, bytes out. No serial ports, threads, clocks or logging here:
the controller's serial link and the simulator (``hw_sim``) both drive these same objects. All devices
share one framing and one set of reliability rules (:mod:`.framing`, :mod:`.session`), each over its own
:class:`~firmware_protocol.framing.Dialect`, one module per dialect (the shoe's messages in :mod:`.messages` and
its dialect in :mod:`.binary`; the reader's in :mod:`.spots`; the chip tray's in :mod:`.tray`, its test vectors
in :mod:`.tray_vectors`). A dialect module imports the framing; the framing and the session import no dialect
but the shoe's default, so a new device is one new module.
"""
