"""A real headless browser for the tests that open a page, or a skip saying why there is none.

Playwright drives it: its own Chromium (``python -m playwright install chromium``) or, where that
download is blocked, the system's (``apt-get install chromium``), found on PATH."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import pytest

SYSTEM_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium_executable(playwright) -> str | None:
    """Playwright's own Chromium where it is installed, else the system's; None when neither is."""
    own = Path(playwright.chromium.executable_path)
    if own.exists():
        return str(own)
    return next((found for name in SYSTEM_BROWSERS if (found := shutil.which(name))), None)


@contextlib.contextmanager
def browser_page():
    """A new page of a headless Chromium that fails on any JavaScript error the page raises."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="no playwright: pip install playwright")
    with sync_api.sync_playwright() as p:
        executable = chromium_executable(p)
        if executable is None:
            pytest.skip("no headless browser: run `python -m playwright install chromium` or install chromium "
                        f"(one of {', '.join(SYSTEM_BROWSERS)} on PATH)")
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            yield page
        finally:
            browser.close()
        assert errors == [], f"JavaScript errors: {errors}"
