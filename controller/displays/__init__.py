"""Displays fed by the table loop as sinks: the terminal (demo), the dealer's LCD and the scoreboard."""
