"""Fixtures for the browser tests: Debian's headless Chromium driven by Playwright, and the full table.

Chromium is the system's ``/usr/bin/chromium`` (``scripts/install-system-deps`` installs it); Playwright's
own browser downloads are never used. Without Chromium (or the ``playwright`` package) the tests skip,
except under ``CI=true`` where they fail.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Harness

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
OUTPUT = Path(__file__).resolve().parents[2] / "test-output"


def _missing(what: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} (required under CI=true; see scripts/install-system-deps)")
    pytest.skip(what)


@pytest.fixture
def browser() -> Iterator[Any]:
    """A fresh Chromium per test: everything it starts (driver, browser, threads) is gone after the test."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed (.venv/bin/pip install playwright)")
    if not CHROMIUM.exists():
        _missing(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def write_config(tmp: Path, port: int, reveal: str, decks: int = 1, name: str = "Browser Table") -> Path:
    path = tmp / "config.toml"
    path.write_text(
        f'[table]\nname = "{name}"\ndecks = {decks}\n\n[scoreboard]\nbind = "127.0.0.1:{port}"\nreveal = "{reveal}"\n'
    )
    return path


def start_scoreboard_daemon(harness: Harness, config: Path) -> None:
    """The table and its board (the scoreboard from the config's ``[scoreboard]``), each a real process."""
    harness.start_daemon("--config", str(config), board=True)


def wait_state(port: int, timeout: float = 20.0) -> dict[str, Any]:
    """Wait until the scoreboard answers; return its snapshot."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=2) as resp:
                return dict(json.loads(resp.read()))
        except (urllib.error.URLError, ConnectionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def inside(inner: dict[str, float], outer: dict[str, float], slack: float = 0.5) -> bool:
    """Box ``inner`` lies within ``outer`` (boxes as {x, y, r, b} in CSS pixels), give or take ``slack``."""
    return (
        inner["x"] >= outer["x"] - slack
        and inner["y"] >= outer["y"] - slack
        and inner["r"] <= outer["r"] + slack
        and inner["b"] <= outer["b"] + slack
    )


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    """Boxes ``a`` and ``b`` overlap by more than half a pixel."""
    return a["x"] < b["r"] - 0.5 and b["x"] < a["r"] - 0.5 and a["y"] < b["b"] - 0.5 and b["y"] < a["b"] - 0.5


def recall_on_page(page: Any, shoe: int, coup: int) -> tuple[list[str], list[str]] | None:
    """Ask a pit table page's *Game recall* form for a coup; the Player's and Banker's cards it shows, or None
    when the page says the archive holds no such coup."""
    page.fill('[data-testid="recall-shoe"]', str(shoe))
    page.fill('[data-testid="recall-coup"]', str(coup))
    page.evaluate("() => { document.querySelector('[data-testid=\"recall\"]').dataset.found = ''; }")  # not stale
    page.click(".recall-form button")
    page.wait_for_function(
        "() => ['0', '1'].includes(document.querySelector('[data-testid=\"recall\"]').dataset.found)"
    )
    if page.locator('[data-testid="recall"]').get_attribute("data-found") == "0":
        return None
    cards = "es => es.map(e => e.dataset.card)"
    player = page.locator('[data-testid="recall-player"] .card').evaluate_all(cards)
    banker = page.locator('[data-testid="recall-banker"] .card').evaluate_all(cards)
    return player, banker
