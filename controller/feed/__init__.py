"""The table's feed: what the table process may show, on local Unix sockets, for the processes facing a network.

:mod:`controller.feed.messages` is the wire (one validated JSON line per message), :mod:`controller.feed.server`
the table's side (a sink of the table loop that never waits for a reader), :mod:`controller.feed.client` the
readers' side (the board and the floor link: reconnecting, bounded, validating).
"""
