"""The card-reading shoe's wire protocols, sans-I/O.

Bytes in, typed events out; messages in, bytes out. No serial ports, threads, clocks or logging here:
the controller's serial link and the software shoe (``hw_sim``) both drive these same objects.
"""
