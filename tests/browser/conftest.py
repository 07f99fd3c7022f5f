"""Browser fixtures: the app served by a real threaded server, and Debian's Chromium driven by
Playwright.
"""

from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.local_servers import serving
from tests.services import unavailable

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
# Ignored by git: `make screenshots` copies them into docs/screenshots/ when they should change
# there.
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 2,
    "is_mobile": True,
    "has_touch": True,
}


@pytest.fixture(scope="session")
def live_server(app):
    """The session's app behind a threaded werkzeug server on a free 127.0.0.1 port; yields its
    origin.
    """
    with serving(app) as server:
        yield server.origin


@pytest.fixture
def live_url(app, live_server, monkeypatch):
    """The live origin, also as BASE_URL so that checkout_url and the SMS simulator point at it."""
    monkeypatch.setitem(app.config, "BASE_URL", live_server)
    return live_server


@contextmanager
def chromium(*extra_args):
    """Headless Chromium from Debian (Playwright never downloads its own), with any further
    command-line switches."""
    if not Path(CHROMIUM).exists():
        unavailable("Chromium", FileNotFoundError(f"{CHROMIUM}: run `make browser`"))
    from playwright.sync_api import expect, sync_playwright

    # Long enough for the waiting page's 3 s polling and 5 s meta refresh.
    expect.set_options(timeout=15_000)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *extra_args]
        )
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for the module's tests."""
    with chromium() as launched:
        yield launched


@pytest.fixture
def new_page(browser):
    """Open pages in fresh phone-sized browser contexts (own cookies), closed after the test."""
    contexts = []

    def open_page(locale="en-US", javascript=True):
        context = browser.new_context(locale=locale, java_script_enabled=javascript, **PHONE)
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture
def screenshot():
    """Keep a full-page screenshot as build/screenshots/checkout-<name>.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page, name):
        path = SCREENSHOTS / f"checkout-{name}.png"
        page.screenshot(path=str(path), full_page=True, animations="disabled", caret="hide")
        return path

    return take
