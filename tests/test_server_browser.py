"""The pages in a real headless browser (Debian's chromium, driven by Playwright).

Skipped, saying why, only where no chromium is installed; .ci/run installs it.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from playwright.sync_api import Browser, Page, Route

    from conftest import Server

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on the PATH: apt-get install chromium (as .ci/run does)"
)
# Chromium on a closed network: no background connections, no first-run work.
ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(java_script_enabled=False)
    # The redirect targets are example.org: answer them here instead of the network.
    for pattern, title in (
        ("https://example.org/**", "target"),
        ("https://www.doi.org/**", "handbook"),
    ):
        context.route(pattern, _answer(f"<title>{title}</title>"))
    try:
        yield context.new_page()
    finally:
        context.close()


def _answer(body: str) -> Callable[[Route], None]:
    """A route handler that answers every request with *body*, instead of the network."""

    def handler(route: Route) -> None:
        route.fulfill(body=body, content_type="text/html")

    return handler


def test_resolve_form_without_javascript(page: Page, server: Server) -> None:
    page.goto(server.url + "/")
    assert page.title() == "doikit DOI resolver"
    page.fill("#hdl", "doi:10.1000/456#789")
    page.click("button[type=submit]")
    page.wait_for_url("https://example.org/seed-000/hash")
    assert page.title() == "target"


def test_form_reports_an_invalid_name(page: Page, server: Server) -> None:
    page.goto(server.url + "/")
    page.fill("#hdl", "10.10O0/x")
    page.click("button[type=submit]")
    assert "not a valid DOI name" in page.inner_text("#error")
    assert page.input_value("#hdl") == "10.10O0/x"


def test_record_page_shows_values(page: Page, server: Server) -> None:
    response = page.goto(server.url + "/10.1000/182?noredirect")
    assert response is not None
    assert response.status == 200
    assert page.inner_text("#name") == "10.1000/182"
    cells = page.locator("#values tbody tr").all_inner_texts()
    assert any("https://www.doi.org/the-identifier/resources/handbook" in c for c in cells)
    assert any("HS_ADMIN" in c for c in cells)


def test_html_in_a_doi_stays_text(page: Page, server: Server) -> None:
    page.goto(server.url + "/10.1000/%3Cscript%3Ealert(1)%3C%2Fscript%3E?noredirect")
    assert page.inner_text("#name") == "10.1000/<script>alert(1)</script>"
    assert page.locator("script").count() == 0


def test_not_found_page_and_its_slash_hint(page: Page, server: Server) -> None:
    response = page.goto(server.url + "/10.1000/182/")
    assert response is not None
    assert response.status == 404
    assert "DOI Not Found" in page.title()
    page.click("#without-slash")
    page.wait_for_url("https://www.doi.org/**")


def test_record_page_at_phone_width(browser: Browser, server: Server, tmp_path: Path) -> None:
    context = browser.new_context(
        java_script_enabled=True, viewport={"width": 375, "height": 740}, device_scale_factor=1
    )
    try:
        page = context.new_page()
        page.goto(server.url + "/10.1000/1?noredirect")
        admin = page.inner_text("#values .admin")
        assert "200:0.NA/10.1000" in admin
        assert "add handle" in admin
        assert "{" not in admin  # not a Python dict
        page.screenshot(path=str(tmp_path / "record-375.png"), full_page=True)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 375, f"the page is {width} px wide at a 375 px viewport"
        page.goto(server.url + "/10.1000/182/")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
    finally:
        context.close()
