"""notation.js (every page's notation) says what controller/game/notation.py says, in a real Chromium."""

from __future__ import annotations

from typing import Any

import pytest

from controller.game.notation import WAGER_WORDS
from eventstream.server import SHARED_STATIC_DIR
from tests.game.test_notation import CARD_CASES, COUP_CASE, MONEY_CASES, RESULT_CASES, SCORE_CASES

pytestmark = pytest.mark.browser


def test_notation_js_agrees_with_python(browser: Any) -> None:
    page = browser.new_page()
    page.set_content("<html><body></body></html>")
    page.add_script_tag(content=(SHARED_STATIC_DIR / "notation.js").read_text(encoding="utf-8"))
    n = "window.notation"
    for token, text in CARD_CASES.items():
        assert page.evaluate(f"{n}.cardText({token!r})") == text, token
    for (p, b), text in SCORE_CASES:
        assert page.evaluate(f"([p, b]) => {n}.scoreText(p, b)", [p, b]) == text
    for (w, p, b), text in RESULT_CASES:
        assert page.evaluate(f"([w, p, b]) => {n}.resultText(w, p, b)", [w, p, b]) == text
    assert page.evaluate(f"(c) => {n}.coupText(c)", COUP_CASE[0]) == COUP_CASE[1]
    # The wagers in words and money: the same as the Python the table and the floor write them with.
    assert page.evaluate(f"{n}.WAGER_WORDS") == dict(WAGER_WORDS)
    for bet, words in WAGER_WORDS.items():
        assert page.evaluate(f"{n}.wagerWord({bet!r})") == words
    for cents, text in MONEY_CASES:
        assert page.evaluate(f"{n}.moneyText({cents})") == text, cents
    # A local time names its zone (the records' UTC ``at`` is never shown bare).
    shown = page.evaluate(f"{n}.localTime('2026-12-01T17:04:05.123Z')")
    assert shown.startswith("2026-12-01 ") and len(shown.split(" ")) == 3, shown
