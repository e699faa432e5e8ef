"""The demos: a table, or a small casino floor, on one machine, every part the real process a casino runs.

``shoe-controller demo`` (:mod:`controller.commands.demo`, the command's options) hands over to
:mod:`demo.table` (one table on the software shoe, shown in the terminal) or, with ``--tables N``, to
:mod:`demo.floor` (N tables, a private Mosquitto and ``shoe-floor serve``). They only start, watch and stop
processes; they are the one place on the table's side of the house that may call into the floor's package
(to enroll the demo tables' keys in the demo's archive): nothing under ``controller/`` imports ``floor/``.
"""
