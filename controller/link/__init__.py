"""The link process (``shoe-controller link``): the table's floor link (every journal record, read read-only
and signed, to the floor's broker; the floor's ack back to the table) and the table's Prometheus metrics,
fed by the table process's link socket. It holds no device and never writes the journal."""
