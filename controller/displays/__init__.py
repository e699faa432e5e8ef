"""What the table's displays share across processes: the scoreboard (its pure snapshot and its server), the
dealer screen (its pure model and its server) and the one wording of money and odds. The table process's own
displays, the dealer's LCD and the demo's terminal, are in :mod:`controller.table`."""
