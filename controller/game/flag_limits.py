"""The advantage flags' default limits: when a wager's live edge is flagged, cleared, and raised again.

They are :mod:`controller.game.edges`'s (which says what each means and prices the shoe with the odds engine);
they live here, apart, so that the table's configuration reads its defaults without loading that engine (numpy)
in every process that parses a configuration file: the board's, the link's. Pure: numbers only.
"""

from __future__ import annotations

#: A wager is flagged when its player EV per unit staked reaches this (+1 %) ...
DEFAULT_THRESHOLD = 0.01
#: ... cleared when it falls this far below it (EV under 0) ...
DEFAULT_MARGIN = 0.01
#: ... and raised again in the same shoe only when it has grown this much (10 % of the stake) past the edge it
#: was last raised at.
DEFAULT_STEP = 0.10
