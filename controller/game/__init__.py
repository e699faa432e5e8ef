"""The pure game core: cards, the third-card tableau, the coup machine, the shoe, payouts and odds.

Nothing in this package does I/O, reads a clock, logs or touches GPIO. The daemon, the simulator,
the command line and the tests all share it.
"""
