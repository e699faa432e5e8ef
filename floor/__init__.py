"""The casino floor's side of the floor link (``shoe-floor``): archive every table's records, check their
chains, publish each table's ack. Imports the pure core and its record vocabulary, never the table's shell."""
