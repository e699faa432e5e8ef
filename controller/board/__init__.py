"""The board process (``shoe-controller board``): the scoreboard the players watch and the dealer screen the
dealer reads, each on its own listener, fed by the table process's feed. It holds no device and never opens
the journal: it may die, stall or be attacked without costing the table a card."""
