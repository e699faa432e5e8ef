"""The table-floor protocol, pure: what a table and the casino floor say to each other over MQTT.

As :mod:`firmware_protocol` is the shoe-table protocol, this is the table-floor one, shared by the table's
floor link (:mod:`controller.link.floor_link`) and the floor's server (:mod:`floor`): :mod:`~floor_protocol.topics`
(the one statement of the topics, their filters and their parsing), :mod:`~floor_protocol.addresses` (broker
URLs and ``host:port``), :mod:`~floor_protocol.ack` (the floor's ack payload) and :mod:`~floor_protocol.state`
(the retained ``state`` message: a typed model, its validating parser and its JSON Schema) and
:mod:`~floor_protocol.admission` (the bounds every record message is checked against first). The records
themselves are the pure core's (:mod:`controller.game.records`).

No sockets, threads, clocks, logging or files: values in, values out, errors that name the problem.
"""
