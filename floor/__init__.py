"""The casino floor's side of the floor link (``shoe-floor``): archive every table's records, check their
chains, publish each table's ack. Imports only the shared, pure vocabulary (:mod:`floor_protocol`, the core's
:mod:`controller.game`) and the neutral :mod:`eventstream` and :mod:`commandline`, never the table's shell
(tests/test_architecture.py)."""
