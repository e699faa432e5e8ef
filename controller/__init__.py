"""shoe-controller: the table controller for a Punto Banco baccarat table.

The pure rules live in :mod:`controller.game`; everything else in this package is the thin shell
(serial link, GPIO panel, journal, displays, command line) around it.
"""

__version__ = "0.1.0"
