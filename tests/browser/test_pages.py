"""The published book as a reader meets it: every page in headless Chromium, offline.

Run by `make test-browser` after the strict build.  Every request that leaves
the book's own files is blocked and recorded; a page passes when it made no
such request, logged no console error, loaded every image, rendered its math,
links only to files and anchors that exist, fits the column (equations included) at 1280 px
and on a 390 px phone, and when every static twin changes
its figure and its numbers as each slider moves.

Chromium comes from Debian's `chromium` package (or $CHROMIUM); Playwright
drives it and never downloads a browser of its own.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

BUILD = Path(__file__).resolve().parents[2] / "_build" / "html"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
PAGE_BUDGET = 2 * 1024 * 1024  # bytes: a page with its images and frames
PAGES = (
    sorted(
        str(p.relative_to(BUILD))
        for p in BUILD.rglob("*.html")
        if "_static" not in p.parts and p.name not in {"genindex.html", "search.html"}
    )
    if BUILD.is_dir()
    else []
)


@pytest.fixture(scope="session")
def server():
    if not (BUILD / "intro.html").is_file():
        pytest.fail(f"no built book in {BUILD}: run `make book` (or `make test-build`) first")
    handler = functools.partial(_QuietHandler, directory=str(BUILD))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


# what a twin shows: its picture and its numbers
SHOWN = "t => [t.querySelector('.twin-figure').src, t.querySelector('.twin-numbers').textContent]"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).is_file():
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: "
            "install Debian's `chromium` package or set $CHROMIUM"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield chromium
        chromium.close()


def open_page(browser, server, path, scheme="light", width=1280):
    """Open one page offline; returns (page, outside_requests, console_errors)."""
    page = browser.new_page(viewport={"width": width, "height": 900}, color_scheme=scheme)
    outside, errors = [], []

    def route(r):
        url = r.request.url
        if url.startswith(server) or url.startswith("data:"):
            r.continue_()
        else:
            outside.append(url)
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + path, wait_until="load")
    page.wait_for_load_state("networkidle")
    return page, outside, errors


def test_pages_were_found():
    assert "intro.html" in PAGES and any(p.startswith("chapters/") for p in PAGES), PAGES


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_offline_without_errors(browser, server, path):
    page, outside, errors = open_page(browser, server, path)
    try:
        assert outside == [], f"requests outside the book's own files: {outside}"
        assert errors == [], f"console errors: {errors}"
        broken = page.eval_on_selector_all(
            "img",
            "els => els.filter(e => !(e.complete && e.naturalWidth > 0))"
            ".map(e => e.getAttribute('src').slice(0, 60))",
        )
        assert broken == [], f"images that did not load: {broken}"
        if page.query_selector(".math"):
            typeset(page)
            assert page.query_selector("mjx-container"), "MathJax did not typeset the page's math"
    finally:
        page.close()


@pytest.mark.parametrize("path", PAGES)
def test_internal_links_resolve(path):
    html = (BUILD / path).read_text()
    for href in set(re.findall(r'href="([^"]+)"', html)):
        target = urlparse(urljoin("http://book/" + path, href))
        if target.netloc != "book" or href.startswith(("mailto:", "javascript:")):
            continue
        file = BUILD / unquote(target.path.lstrip("/"))
        if file.is_dir():
            file = file / "index.html"
        assert file.is_file(), f"{path}: link {href!r} points to a missing file"
        if target.fragment and file.suffix == ".html":
            anchors = set(re.findall(r'id="([^"]+)"', file.read_text()))
            assert unquote(target.fragment) in anchors, (
                f"{path}: link {href!r} points to a missing anchor"
            )


@pytest.mark.parametrize("path", PAGES)
def test_page_fits_its_budget(path):
    html = (BUILD / path).read_text()
    images = {
        BUILD / unquote(urlparse(urljoin("http://book/" + path, src)).path.lstrip("/"))
        for src in re.findall(r'<img[^>]+src="([^"]+)"', html)
        if not src.startswith("data:")
    }
    size = len(html.encode()) + sum(p.stat().st_size for p in images if p.is_file())
    assert size <= PAGE_BUDGET, (
        f"{path} weighs {size / 1024:.0f} KiB with its images (budget 2 MiB)"
    )


# every element of the page's text that scrolls sideways, or reaches past the text column
SIDEWAYS = """() => {
  const article = document.querySelector('article') || document.body;
  const right = article.getBoundingClientRect().right + 1;
  return [...article.querySelectorAll('*')].filter(e => {
    if (e.closest('mjx-container')) return false;  // MathJax draws its own overflow
    const style = getComputedStyle(e);
    const scrolls = ['auto', 'scroll'].includes(style.overflowX)
      && e.scrollWidth > e.clientWidth + 1;
    return scrolls || (e.getClientRects().length && e.getBoundingClientRect().right > right);
  }).map(e => `${e.tagName.toLowerCase()}.${e.className}: ${e.textContent.trim().slice(0, 50)}`);
}"""


# every display equation wider than its block (MathJax would clip it or scroll it unseen)
CLIPPED_MATH = """() => [...document.querySelectorAll('mjx-container[display="true"]')]
  .filter(m => m.scrollWidth > m.clientWidth + 1
               || m.firstElementChild.getBoundingClientRect().width > m.clientWidth + 1)
  .map(m => m.textContent.trim().slice(0, 50))"""


def typeset(page):
    """Wait until MathJax has typeset the page's math, if it has any."""
    if page.query_selector(".math"):
        page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise")
        page.evaluate("MathJax.startup.promise")


@pytest.mark.parametrize("path", PAGES)
def test_page_fits_the_column_at_1280px_and_a_phone(browser, server, path):
    page, _, _ = open_page(browser, server, path)
    try:
        typeset(page)
        assert page.evaluate(SIDEWAYS) == [], "blocks wider than the text column at 1280 px"
        assert page.evaluate(CLIPPED_MATH) == [], "equations wider than the column at 1280 px"
        # drawn at 100 dpi, 9-point text is 12.5 px tall; shown at 0.96 of that or more it stays
        # at least 12 px, which is 9 points on the screen
        shrunk = page.eval_on_selector_all(
            "article img:not(.twin-figure)",
            "els => els.filter(e => e.naturalWidth && e.clientWidth < 0.96 * e.naturalWidth)"
            ".map(e => e.getAttribute('alt'))",
        )
        assert shrunk == [], f"figures shrunk so far that their text is below 9 points: {shrunk}"

        page.set_viewport_size({"width": 390, "height": 900})  # the same page on a phone
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page is {width} px wide on a 390 px phone"
        assert page.evaluate(CLIPPED_MATH) == [], "equations wider than a 390 px phone"
        # a twin's frames are drawn for a phone: shrunk no further than 0.6, their 9-point
        # text stays about 8 px tall
        scales = page.eval_on_selector_all(
            ".twin-figure", "els => els.map(e => e.clientWidth / e.naturalWidth)"
        )
        assert all(scale >= 0.6 for scale in scales), scales
    finally:
        page.close()


TWIN_PAGES = [p for p in PAGES if 'class="static-twin"' in (BUILD / p).read_text()]


def test_every_twin_is_present():
    ids = {
        i
        for p in TWIN_PAGES
        for i in re.findall(r'id="twin-([a-z0-9-]+)"', (BUILD / p).read_text())
    }
    assert {
        "drop-a-step",
        "change-the-seed",
        "pick-an-example",
        "pick-a-sentence",
        "udhr-seed",
        "query-variant",
        "pick-a-flavour",
        "pick-a-head",
        "shuffle-the-steps",
        "step-through-hops",
    } <= ids, ids


@pytest.mark.parametrize("path", TWIN_PAGES)
def test_static_twins_change_with_their_sliders(browser, server, path):
    page, outside, errors = open_page(browser, server, path)
    try:
        twins = page.query_selector_all(".static-twin")
        assert twins
        for twin in twins:
            for slider in twin.query_selector_all("input[type=range]"):
                before = twin.evaluate(SHOWN)
                slider.evaluate(
                    "s => { s.value = String((Number(s.value) + 1) % (Number(s.max) + 1)); "
                    "s.dispatchEvent(new Event('input')); }"
                )
                after = twin.evaluate(SHOWN)
                name = twin.get_attribute("id")
                assert after[0] != before[0], (
                    f"{name}: the figure did not change when a slider moved"
                )
                assert after[1] != before[1], (
                    f"{name}: the numbers did not change when a slider moved"
                )
                assert twin.evaluate("t => t.querySelector('.twin-figure').naturalWidth > 0")
        assert outside == [] and errors == []
    finally:
        page.close()
