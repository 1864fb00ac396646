"""Headless Debian Chromium for the browser tests of the instructor's kit (playwright, no download).

``tests/test_browser_instructor.py`` uses these: one browser per module, and pages that record
every request and refuse (and record) any for another machine.  ``tests/test_browser.py`` keeps
copies of its own of the same ideas; it could import these instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools.slides import is_local, recorded_page

CHROMIUM = os.environ.get("BLOOMEDU_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


def launch(playwright):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: the browser tests need Debian's chromium "
                    "(apt-get install chromium; make test installs it when run as root)")
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


def guarded_page(browser, width: int = 1280, height: int = 900):
    """A page in a fresh context: ``page.requests`` (every URL), ``page.remote`` (refused, for another
    machine) and ``page.errors`` (script errors, console errors, HTTP errors); see
    ``tools.slides.recorded_page``, which the slide builder uses too."""
    page = recorded_page(browser, width, height)
    page.set_default_timeout(60_000)
    return page


def assert_stayed_on_this_machine(page) -> None:
    assert page.requests, "no request was recorded"
    assert page.remote == [] and [u for u in page.requests if not is_local(u)] == []
    assert page.errors == [], page.errors
