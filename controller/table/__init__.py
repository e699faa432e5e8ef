"""The table process: the one process at the table that holds the devices and the journal, and no network.

It reads the card-reading shoe and the bet-spot reader on their serial lines (``shoe_link``, ``wire``,
``spot_wire``), the dealer's panel on GPIO (``panel``), runs the one table loop that owns the table's state
(``loop/``), writes the journal, shows the dealer's LCD (``lcd``; ``terminal`` in the demo) and serves the
table's feed to its two companions, the board and the link. ``daemon`` assembles it and runs it under systemd.
"""
