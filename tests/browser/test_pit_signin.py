"""The pit's sign-in page in headless Chromium (floor/pit_auth.py): the pit page sends a visitor to it, a wrong
password is said on it, the right one lands on the pit page with its tiles; a viewer is refused a table page;
an expired session is sent back to it. Screenshot in test-output/."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from floor.archive import Archive
from floor.pit import Pit
from tests.browser.conftest import OUTPUT
from tests.pitload import demo_journal, journal_records

pytestmark = pytest.mark.browser


@pytest.fixture
def pit(tmp_path: Path) -> Iterator[Pit]:
    url = f"sqlite:///{tmp_path}/archive.db"
    with Archive(url) as archive:
        archive.store(journal_records(demo_journal(tmp_path / "journal.db"), "T1"))
        archive.people.add_user("pam", "pit_manager", "pit manager's password", actor="test")
        archive.people.add_user("vic", "viewer", "viewer's password", actor="test")
    pit = Pit(url, heartbeat=0.5)
    pit.start(("127.0.0.1", 0), None)
    try:
        yield pit
    finally:
        pit.close()


def sign_in(page: Any, name: str, password: str) -> None:
    page.get_by_test_id("signin-name").fill(name)
    page.get_by_test_id("signin-password").fill(password)
    page.get_by_test_id("signin-submit").click()
    page.wait_for_load_state()


def test_signing_in_to_the_pit(browser: Any, pit: Pit) -> None:
    host, port = pit.address
    base = f"http://{host}:{port}"
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(base + "/table/T1")
    assert page.url == base + "/signin?next=%2Ftable%2FT1"
    assert page.get_by_test_id("signin-form").is_visible()
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / "pit-signin-1280x800.png"))
    sign_in(page, "pam", "not it at all")
    assert page.get_by_test_id("signin-message").inner_text() == "wrong user name or password"
    sign_in(page, "pam", "pit manager's password")
    assert page.url == base + "/table/T1"  # where it was going
    page.goto(base + "/")
    page.wait_for_selector('[data-testid="tiles"] .tile')
    assert "T1" in page.get_by_test_id("tiles").inner_text()
    # A day later the session has expired: the open page's event stream ends and the page goes to sign-in.
    pit.gate.clock = lambda: time.monotonic() + 24 * 3600
    page.wait_for_url(base + "/signin?next=%2F", timeout=20_000)
    assert page.get_by_test_id("signin-form").is_visible()
    pit.gate.clock = time.monotonic
    # A viewer: the tiles, and a table page refused.
    viewer = browser.new_page(viewport={"width": 800, "height": 480})
    viewer.goto(base + "/")
    sign_in(viewer, "vic", "viewer's password")
    assert viewer.url == base + "/"
    viewer.wait_for_selector('[data-testid="tiles"] .tile')
    response = viewer.goto(base + "/table/T1")
    assert response is not None and response.status == 403
