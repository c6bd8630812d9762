"""The published book as a reader meets it: every page in headless Chromium, offline.

Run by `make test-browser` after the strict build.  Every request that leaves
the book's own files is blocked and recorded; a page passes when it made no
such request, logged no console error, loaded every image, drew its math as MathML in the
book's math font, weighs at most 1.5 MB on a cold load, has no accessibility fault that
axe-core rates serious or critical (light theme at 1280 px, dark at 390 px), links only to
files and anchors that exist, fits the column (equations and code included) at 1280 px and
on a 390 px phone, where a long line of code wraps and still copies as written, and when
every static twin changes its figure and its numbers as each slider moves by the keyboard.

Each pytest-xdist worker loads its pages one after another in one tab: a new document each
time, with the empty storage of a fresh profile and nothing cached.

Chromium comes from Debian's `chromium` package (or $CHROMIUM); Playwright
drives it and never downloads a browser of its own.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import math
import os
import re
import sys
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import numpy as np
import pytest

BUILD = Path(__file__).resolve().parents[2] / "_build" / "html"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
PAGE_BUDGET = 1_500_000  # bytes a cold load fetches: the page, its scripts, styles, fonts, images
PAGES = (
    sorted(
        str(p.relative_to(BUILD))
        for p in BUILD.rglob("*.html")
        if "_static" not in p.parts and p.name not in {"genindex.html", "search.html"}
    )
    if BUILD.is_dir()
    else []
)

# the page with the most highlighted code, whose colours axe checks in full
CODE_PAGE = max(PAGES, key=lambda p: (BUILD / p).read_text().count("<span class="), default="")


@pytest.fixture(scope="session")
def server():
    if not (BUILD / "intro.html").is_file():
        pytest.fail(f"no built book in {BUILD}: run `make book` (or `make test-build`) first")
    handler = functools.partial(_QuietHandler, directory=str(BUILD))
    httpd = _QuietServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


# what a twin shows: its picture and its numbers
SHOWN = "t => [t.querySelector('.twin-figure').src, t.querySelector('.twin-numbers').textContent]"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # a page closed while a file was still on its way is no fault of the book
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


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


@pytest.fixture(scope="session")
def tab(browser, server):
    """The worker's one browser tab, in which each test loads its page afresh.

    A new tab costs more than the page it shows (a new profile and a new renderer process), so
    every test loads its page as a new document in this tab, with the empty storage of a fresh
    profile (emptied before any of the page's scripts run).  Every request leaving the book is
    recorded and blocked; routing keeps Chromium's cache off, so each load fetches all it needs,
    as a cold load does."""
    context = browser.new_context()
    context.add_init_script(
        "if (location.protocol === 'http:') { localStorage.clear(); sessionStorage.clear(); }"
    )
    page = context.new_page()
    page.outside = []

    def outside(r):
        page.outside.append(r.request.url)
        r.abort()

    # only what leaves the book comes here; the book's own files go on without a word to Python
    page.route(re.compile(f"^(?!{re.escape(server)}|data:)"), outside)
    yield page
    context.close()


@contextlib.contextmanager
def open_page(tab, server, path, scheme="light", width=1280):
    """Open one page offline in the tab; yields (page, outside_requests, console_errors)."""
    tab.set_viewport_size({"width": width, "height": 900})
    tab.emulate_media(color_scheme=scheme)
    tab.outside, errors = [], []
    on_console = lambda m: errors.append(m.text) if m.type == "error" else None
    on_error = lambda e: errors.append(str(e))
    tab.on("console", on_console)
    tab.on("pageerror", on_error)
    try:
        tab.goto(server + path, wait_until="load")  # every image and script, the book has no XHR
        if 'http-equiv="refresh"' in (BUILD / path).read_text().lower():  # a redirect: follow it
            tab.wait_for_url(lambda url: not url.endswith(path))
            tab.wait_for_load_state("load")
        tab.evaluate("document.fonts.ready.then(() => true)")
        yield tab, tab.outside, errors
    finally:
        # the page is left before the next test listens: what it logs as it goes is its own
        tab.goto("about:blank")
        tab.remove_listener("console", on_console)
        tab.remove_listener("pageerror", on_error)


# every file a page fetched, with its size as served (uncompressed)
FETCHED = """() => performance.getEntries().filter(e => 'decodedBodySize' in e)
  .map(e => [e.name.split('?')[0].split('/').pop(), e.decodedBodySize])"""
# every formula not written as MathML, and whether the book's math font drew the page's math
UNDRAWN_MATH = """() => [...document.querySelectorAll('div.math, span.math')]
  .filter(m => !m.querySelector('math')).map(m => m.textContent.trim().slice(0, 50))"""
# the theme shows the icon of the current colour mode, found by its data-mode attribute
MODE_ICONS = """() => [...document.querySelectorAll('.theme-switch-button .theme-switch')]
  .filter(e => e.getBoundingClientRect().width > 0).length"""
MATH_FONT = "() => document.fonts.check('16px \"Book Math\"', 'x')"


def serious_faults(page, path: str) -> list[str]:
    """What axe-core finds on the page that it rates serious or critical, one line a fault.

    Code is coloured by the same stylesheet on every page, and checking the contrast of its
    thousands of coloured words takes half of axe's time: it is checked on the page with the
    most code, and left out elsewhere."""
    from axe_playwright_python.sync_playwright import Axe

    context = None if path == CODE_PAGE else {"exclude": [[".highlight"]]}
    found = Axe().run(page, context=context).response["violations"]
    return [
        f"{v['id']} ({v['impact']}): {v['help']}: "
        + "; ".join(n["target"][0] if n["target"] else "?" for n in v["nodes"][:3])
        for v in found
        if v["impact"] in ("serious", "critical")
    ]


def test_pages_were_found():
    assert "intro.html" in PAGES and any(p.startswith("chapters/") for p in PAGES), PAGES


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_offline_without_errors(tab, server, path):
    with open_page(tab, server, path) as (page, outside, errors):
        assert outside == [], f"requests outside the book's own files: {outside}"
        assert errors == [], f"console errors: {errors}"
        broken = page.eval_on_selector_all(
            "img",
            "els => els.filter(e => !(e.complete && e.naturalWidth > 0))"
            ".map(e => e.getAttribute('src').slice(0, 60))",
        )
        assert broken == [], f"images that did not load: {broken}"
        assert page.query_selector_all("i.fa-solid, i.fa-regular, i.fa-brands") == [], (
            "icons left undrawn"
        )
        assert page.evaluate(MODE_ICONS) == 1, "the colour-mode button must show one icon"
        if page.query_selector(".math"):
            assert page.evaluate(UNDRAWN_MATH) == [], "formulas not written as MathML"
            assert page.query_selector("div.math math, span.math math").evaluate(
                "m => getComputedStyle(m).fontFamily.includes('Book Math')"
            ), "the formulas are not set in the book's math font"
            assert page.evaluate(MATH_FONT), "the book's math font did not load"
        fetched = page.evaluate(FETCHED)
        size = sum(n for _, n in fetched)
        heaviest = ", ".join(
            f"{name} {n / 1e3:.0f} kB" for name, n in sorted(fetched, key=lambda f: -f[1])[:3]
        )
        assert size <= PAGE_BUDGET, (
            f"{path} fetches {size / 1e6:.2f} MB cold (budget 1.5 MB); heaviest: {heaviest}"
        )
        assert serious_faults(page, path) == [], "accessibility faults (light theme, 1280 px)"


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


# every element of the page's text that scrolls sideways, or reaches past the text column
SIDEWAYS = """() => {
  const article = document.querySelector('article') || document.body;
  const right = article.getBoundingClientRect().right + 1;
  return [...article.querySelectorAll('*')].filter(e => {
    if (e.closest('math')) return false;  // a formula is measured whole, by CLIPPED_MATH
    const style = getComputedStyle(e);
    const scrolls = ['auto', 'scroll'].includes(style.overflowX)
      && e.scrollWidth > e.clientWidth + 1;
    return scrolls || (e.getClientRects().length && e.getBoundingClientRect().right > right);
  }).map(e => `${e.tagName.toLowerCase()}.${e.className}: ${e.textContent.trim().slice(0, 50)}`);
}"""


# every equation wider than its box, displayed or inline (the theme would clip it, unseen)
CLIPPED_MATH = """() => [...document.querySelectorAll('div.math, span.math')]
  .filter(d => d.scrollWidth > d.clientWidth + 1
               || d.querySelector('math').getBoundingClientRect().right
                  > d.getBoundingClientRect().right + 1)
  .map(d => d.textContent.trim().replace(/\\s+/g, ' ').slice(0, 50))"""


# each figure's smallest text on the screen, in CSS px: its height in the drawing the browser
# chose (the phone variant on a narrow screen, _ext/phone_figures.py; a twin's smallest over all
# its frames, widgets.static_twin), scaled as it is shown
FIGURE_TEXT = """() => [...document.querySelectorAll('article img')].map(e => {
  const px = e.currentSrc.includes('-phone.') ? e.dataset.phoneTextPx : e.dataset.textPx;
  return [(e.getAttribute('alt') || e.src).slice(0, 60), px * e.clientWidth / e.naturalWidth];
})"""


# every <picture> has loaded the drawing for this screen: the phone's, or the column's
DRAWN_FOR = """(phone) => [...document.querySelectorAll('picture img')]
  .every(e => e.complete && e.naturalWidth > 0 && e.currentSrc.includes('-phone.') === phone)"""


# a reader opens the dropdown notes and solutions: their text is measured as the page's
OPEN_DROPDOWNS = """() => document.querySelectorAll('button.toggle-button[aria-expanded=false]')
  .forEach(b => b.closest('.admonition-title').click())"""
SETTLED = "() => document.getAnimations().every(a => a.playState != 'running')"


@pytest.mark.parametrize("path", PAGES)
def test_page_fits_a_phone_and_the_column_at_1280px(tab, server, path):
    # the dark theme, opened on a phone: axe-core's faults are those of a fresh page
    with open_page(tab, server, path, scheme="dark", width=390) as (page, _, errors):
        assert errors == [], f"console errors: {errors}"
        page.evaluate(OPEN_DROPDOWNS)
        # axe-core would measure a note's colours half-way through its fade
        page.wait_for_function(SETTLED)
        assert page.query_selector_all(".admonition.toggle-hidden") == [], "dropdowns left shut"
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page is {width} px wide on a 390 px phone"
        assert page.evaluate(CLIPPED_MATH) == [], "equations wider than a 390 px phone"
        # code too: its long lines wrap (_ext/code_lines.py)
        assert page.evaluate(SIDEWAYS) == [], "blocks that scroll on a 390 px phone"
        page.wait_for_function(DRAWN_FOR, arg=True)
        # a phone fetches the phone drawings instead of the column's: its own budget, the same
        size = sum(n for _, n in page.evaluate(FETCHED))
        assert size <= PAGE_BUDGET, f"{path} fetches {size / 1e6:.2f} MB cold on a phone"
        shown = page.evaluate(FIGURE_TEXT)
        small = [(alt, px) for alt, px in shown if not (math.isfinite(px) and px >= 8)]
        assert small == [], f"figures whose text is below 8 px on a 390 px phone: {small}"
        assert serious_faults(page, path) == [], "accessibility faults (dark theme, 390 px)"

        page.set_viewport_size({"width": 1280, "height": 900})  # the same page on a desktop
        # each <picture> swaps its phone drawing for the column's: measure once it has
        page.wait_for_function(DRAWN_FOR, arg=False)
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


# A page whose code has lines of up to 78 characters, twice what a phone's column holds, in
# loops and functions (indented), in docstrings and in calls split over several lines.
WRAPPED_PAGE = "chapters/seq2seq/02-encoder-decoder"
# the tags that keep a cell's code out of sight when its page opens
UNSEEN = {"remove-cell", "remove-input", "hide-cell", "hide-input"}
# each code block in sight: its text as a reader's browser gives it, and whether it scrolls
SHOWN_CODE = """() => [...document.querySelectorAll('div.cell_input pre')]
  .filter(p => p.checkVisibility())
  .map(p => [p.innerText, p.scrollWidth > p.clientWidth + 1])"""
# each line of code in sight (_ext/code_lines.py): its rows on the screen, the left edges of its
# first row and of its others, its hanging indent, and the rows the marks beside it fill
CODE_LINES = """() => [...document.querySelectorAll('div.cell_input pre > span.code-line')]
  .filter(s => s.checkVisibility()).map(s => {
    const range = document.createRange();
    range.selectNodeContents(s);
    const rects = [...range.getClientRects()].filter(r => r.width > 0);
    const tops = [...new Set(rects.map(r => Math.round(r.top)))];
    const left = rows => Math.min(...rects.filter(r => rows(Math.round(r.top))).map(r => r.left));
    const style = getComputedStyle(s), marks = getComputedStyle(s, '::before');
    const line = parseFloat(style.lineHeight);
    const pen = document.createElement('canvas').getContext('2d');
    pen.font = style.font;
    return {
      text: s.textContent, display: style.display, fontSize: style.fontSize, rows: tops.length,
      first: left(t => t === tops[0]), next: left(t => t !== tops[0]),
      hang: parseFloat(style.paddingLeft), ch: pen.measureText('0').width,
      marked: marks.content.includes('↪'),
      markRows: Math.round(parseFloat(marks.height) / line) || 0,
    };
  })"""


def _cell_sources(page: str) -> list[str]:
    """The source of each code cell of the page's notebook that its page shows."""
    notebook = json.loads((BUILD.parents[1] / f"{page}.ipynb").read_text(encoding="utf-8"))
    return [
        "".join(cell["source"])
        for cell in notebook["cells"]
        if cell["cell_type"] == "code" and not UNSEEN & set(cell["metadata"].get("tags", []))
    ]


def _copied(page, pre, how: str) -> str:
    """What the clipboard holds once the reader copies the block ``pre``, by ``how``."""
    page.evaluate("navigator.clipboard.writeText('')")
    if how == "the copy button":
        pre.hover()  # the button shows when the block is hovered
        pre.evaluate_handle("p => p.parentElement.querySelector('button.copybtn')").click()
    else:  # select the block's text, as a drag over it does, and press Ctrl+C
        pre.evaluate(
            """p => { const s = getSelection(), r = document.createRange();
                 r.selectNodeContents(p); s.removeAllRanges(); s.addRange(r); }"""
        )
        page.keyboard.press("Control+C")
    page.wait_for_function("navigator.clipboard.readText().then(t => t !== '')")
    return page.evaluate("navigator.clipboard.readText()")


def test_long_code_lines_wrap_on_a_phone_and_copy_as_written(tab, server):
    sources = _cell_sources(WRAPPED_PAGE)
    longest = max(range(len(sources)), key=lambda i: max(map(len, sources[i].split("\n"))))
    tab.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server[:-1])
    with open_page(tab, server, WRAPPED_PAGE + ".html", width=390) as (page, _, errors):
        shown = page.evaluate(SHOWN_CODE)
        # the text a browser gives (its innerText, which follows the layout) is the source's
        assert [text.removesuffix("\n") for text, _ in shown] == sources
        assert [scrolls for _, scrolls in shown] == [False] * len(sources), (
            "code blocks that scroll sideways on a 390 px phone"
        )
        lines = page.evaluate(CODE_LINES)
        assert "".join(line["text"] + "\n" for line in lines) == "".join(t for t, _ in shown)
        wrapped = [line for line in lines if line["rows"] > 1]
        assert any(len(line["text"]) >= 70 for line in wrapped), "no long line wraps"
        for line in wrapped:
            # each continuation starts where the line's hanging indent puts it, right of the
            # line's own indentation, after a mark
            indent = min(len(line["text"]) - len(line["text"].lstrip(" ")), 16)  # MAX_INDENT
            assert line["hang"] == pytest.approx((indent + 2) * line["ch"], abs=1), line
            assert line["next"] == pytest.approx(line["first"] + line["hang"], abs=1), line
            assert line["marked"] and line["markRows"] == line["rows"] - 1, line
        short = [line for line in lines if len(line["text"]) <= 30 and line["rows"] > 1]
        assert short == [], "short lines that wrap"
        pres = [p for p in page.query_selector_all("div.cell_input pre") if p.is_visible()]
        for how in ("the copy button", "a selection"):
            assert _copied(page, pres[longest], how) == sources[longest], f"copied by {how}"
        assert errors == []

        # on a desktop the code is as it was: 13 px, each line one row, nothing wraps
        page.set_viewport_size({"width": 1280, "height": 900})
        lines = page.evaluate(CODE_LINES)
        assert {
            (line["display"], line["fontSize"], line["rows"]) for line in lines if line["text"]
        } == {("inline", "13px", 1)}
        assert not any(scrolls for _, scrolls in page.evaluate(SHOWN_CODE))


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
        "pick-a-layer-and-head",
        "pick-a-scheme-and-length",
    } <= ids, ids


@pytest.mark.parametrize("path", TWIN_PAGES)
def test_static_twins_change_with_their_sliders(tab, server, path):
    with open_page(tab, server, path) as (page, outside, errors):
        twins = page.query_selector_all(".static-twin")
        assert twins
        for twin in twins:
            for slider in twin.query_selector_all("input[type=range]"):
                assert slider.get_attribute("aria-label"), "a slider without a label"
                before = twin.evaluate(SHOWN)
                # a reader on a keyboard: the arrow keys move a focused slider
                at_end = slider.evaluate("s => s.value === s.max")
                slider.focus()
                page.keyboard.press("ArrowLeft" if at_end else "ArrowRight")
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


# Part I's seed explorer computed in the page (attention_measured.book.live): the reader's seed
LIVE_SEED_PAGE = "chapters/lesson/05-what-two-runs-hide.html"
LIVE_SEED = "#live-change-the-seed"
TRAINED = "([root, seed]) => document.querySelector(root).dataset.seed === seed"


def _type_seed(page, text: str) -> None:
    page.fill(f"{LIVE_SEED} input", text)
    page.click(f"{LIVE_SEED} button")


@pytest.mark.parametrize("seed", [12345, 20260219, 2**64 - 1])
def test_a_typed_seed_trains_in_the_page_and_prints_what_the_library_prints(tab, server, seed):
    """Any seed, one of the hundred (run 1, compared by its value in the sweep) and the
    largest: the page's network, trained in JavaScript, describes itself digit for digit as
    the library's describe_seed does."""
    from attention_measured.book import marked_step_explorers

    with open_page(tab, server, LIVE_SEED_PAGE) as (page, outside, errors):
        assert page.is_visible(LIVE_SEED), "the live explorer stayed hidden"
        _type_seed(page, str(seed))
        page.wait_for_function(TRAINED, arg=[LIVE_SEED, str(seed)], timeout=10_000)
        shown = page.inner_text(f"{LIVE_SEED} .live-description")
        assert shown == marked_step_explorers.describe_seed(seed)
        # the weights, the removal effects and the hundred seeds' histogram
        assert page.locator(f"{LIVE_SEED} svg rect").count() == 12 + 12 + 20
        assert not errors and not outside


def test_a_bad_seed_gets_a_message_and_the_last_result_stays(tab, server):
    with open_page(tab, server, LIVE_SEED_PAGE) as (page, outside, errors):
        page.wait_for_function(TRAINED, arg=[LIVE_SEED, "42"], timeout=10_000)
        before = page.inner_text(f"{LIVE_SEED} .live-description")
        for text, says in [
            ("", "Type a seed"),
            ("-3", "is not a seed"),
            ("1.5", "is not a seed"),
            ("seven", "is not a seed"),
            (str(2**64), "too large"),
        ]:
            _type_seed(page, text)
            assert says in page.inner_text(f"{LIVE_SEED} .live-status"), text
            assert page.get_attribute(f"{LIVE_SEED} input", "aria-invalid") == "true"
            assert page.inner_text(f"{LIVE_SEED} .live-description") == before
        assert not errors


def test_the_live_explorer_computes_on_the_books_own_files(browser):
    """Opened as a file, where a page may not import other files, the explorer still trains:
    its modules travel in the page (data: URLs)."""
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto((BUILD / LIVE_SEED_PAGE).as_uri())
        page.wait_for_function(TRAINED, arg=[LIVE_SEED, "42"], timeout=10_000)
        assert page.inner_text(f"{LIVE_SEED} .live-description").startswith("init seed 42:")
        assert not errors
    finally:
        page.close()


# Part II's self-attention worked example computed in the page (attention_measured.book.live)
WORKED_PAGE = "chapters/taxonomy/05-self-attention.html"
WORKED = "#live-worked-example"
COMPUTED = "root => Number(document.querySelector(root).dataset.computed) > 0"
SHOWN_NUMBERS = "els => els.map(e => [e.textContent, Number(e.dataset.value)])"


def _worked_start(page) -> dict:
    """The page's own numbers, as the explorer started from them."""
    start = json.loads(page.get_attribute(WORKED, "data-start"))
    return {k: v if k == "tokens" else np.array(v, dtype=float) for k, v in start.items()}


def _library(start, scale=True, mask=None) -> dict:
    """Q, K, V, the scores, the weights (n, n) and the outputs (n, dv) that numpy and the
    library give for the explorer's numbers."""
    from attention_measured.core import attention

    X, W_Q, W_K, W_V = (start[k] for k in ("X", "W_Q", "W_K", "W_V"))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q @ K.T / np.sqrt(Q.shape[1]) if scale else Q @ K.T
    if scale:  # the page's own computation, one head and no output projection
        out, weights = attention.multi_head_attention(
            X[None], X[None], W_Q, W_K, W_V, np.eye(W_V.shape[1]), heads=1, mask=mask
        )
        weights, out = weights[0, 0], out[0]
    else:
        weights = attention.softmax(scores, mask)
        out = weights @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "weights": weights, "output": out}


def _printed(x: float, digits: int) -> str:
    """What the page prints for x (formatNumber): `digits` decimals, 4 significant digits from
    1e5 on, halves rounded away from zero as JavaScript's toFixed does, and never "-0"."""
    from decimal import ROUND_HALF_UP, Decimal, localcontext

    with localcontext() as context:
        context.rounding = ROUND_HALF_UP
        text = f"{Decimal(x):.3e}" if abs(x) >= 1e5 else f"{Decimal(x):.{digits}f}"
    return text[1:] if re.fullmatch(r"-[0.]+", text) else text


WORKED_DIGITS = {"Q": 2, "K": 2, "V": 2, "scores": 2, "weights": 3, "output": 2}


def _assert_shows(page, start, scale=True, mask=None) -> None:
    """The printed Q, K, V, scores, weights and outputs are numpy's and the library's, to their
    digits and to 1e-12; a score the mask removes is printed as "–"."""
    want = _library(start, scale, mask)
    keep = np.ones(want["scores"].shape, bool) if mask is None else np.asarray(mask, bool)
    for name, digits in WORKED_DIGITS.items():
        shown = page.eval_on_selector_all(f"{WORKED} .live-{name}", SHOWN_NUMBERS)
        texts = [_printed(w, digits) for w in want[name].ravel()]
        if name == "scores":
            texts = [t if k else "–" for t, k in zip(texts, keep.ravel(), strict=True)]
        assert [text for text, _ in shown] == texts, name
        scale_of = np.maximum(1, np.abs(want[name].ravel()))
        assert np.all(np.abs([v for _, v in shown] - want[name].ravel()) <= 1e-12 * scale_of)
    masked = page.eval_on_selector_all(
        f"{WORKED} .live-scores", "els => els.map(e => e.dataset.masked === 'true')"
    )
    assert masked == (~keep).ravel().tolist()


def _box(name: str, row, column: int) -> str:
    return f'{WORKED} input[aria-label="{name}, row {row}, column {column}"]'


# the text of every heading of a table: its column headings, then its row headings
HEADINGS = """t => [[...t.querySelectorAll('th[scope=col]')].map(h => h.textContent),
  [...t.querySelectorAll('th[scope=row]')].map(h => h.textContent)]"""
WEIGHTS_CAPTION = "weights (each row sums to 1, or is all 0 where the mask leaves no key)"
# where every table of the frame is, within the frame, and every box's width
LAYOUT = """root => { const o = document.querySelector(root).getBoundingClientRect();
  return [[...document.querySelectorAll(root + ' table')].map(t => {
    const r = t.getBoundingClientRect(); return [r.x - o.x, r.y - o.y, r.width, r.height]; }),
  [...document.querySelectorAll(root + ' input:not([type])')].map(b => b.clientWidth)] }"""
# the middle of each element, across the page
CENTRES = "els => els.map(e => { const r = e.getBoundingClientRect(); return r.x + r.width / 2 })"


def test_the_worked_example_is_shown_at_the_pages_numbers(tab, server):
    with open_page(tab, server, WORKED_PAGE) as (page, outside, errors):
        assert page.is_visible(WORKED), "the worked example's frame stayed hidden"
        page.wait_for_function(COMPUTED, arg=WORKED)
        text = page.inner_text(WORKED)
        assert text.startswith("The worked example, editable\n")
        # the page's paragraph just above says what to do: the frame does not say it again
        assert "Change any number" not in text
        assert text.count("from −1,000,000 to 1,000,000") == 1
        assert page.inner_text(f"{WORKED}-range") == "entries: numbers from −1,000,000 to 1,000,000"
        start = _worked_start(page)
        assert start["tokens"] == ["the", "cat", "sat"]
        _assert_shows(page, start)
        # the page's argument: the query of "the" is (2, 0), the keys of "the" and "cat" are
        # (0, 2) and (2, 0), that of "sat" is (1, 1)
        q = page.eval_on_selector_all(f"{WORKED} .live-Q", SHOWN_NUMBERS)
        k = page.eval_on_selector_all(f"{WORKED} .live-K", SHOWN_NUMBERS)
        assert [t for t, _ in q[:2]] == ["2.00", "0.00"]
        assert [t for t, _ in k] == ["0.00", "2.00", "2.00", "0.00", "1.00", "1.00"]
        # the first row as the page's prose reads it, and "sat"'s third each
        texts = page.eval_on_selector_all(f"{WORKED} .live-weights", SHOWN_NUMBERS)
        first, cat, sat = ["0.045", "0.768", "0.187"], ["0.768", "0.045", "0.187"], ["0.333"] * 3
        assert [t for t, _ in texts] == first + cat + sat
        title = page.get_attribute(f"{WORKED} .live-weights-table td:has(span)", "title")
        assert title == "“the” gives “the” the weight 0.045388"
        assert page.inner_text(f"{WORKED} .live-weights-table caption") == WEIGHTS_CAPTION
        assert page.locator(f"{WORKED} input[aria-label]").count() == 12 + 3 * 8 + 9
        # every table's columns and rows are named: tokens, or the numbers of the columns
        tokens = ["the", "cat", "sat"]
        for name, columns in [
            ("Q", ["1", "2"]),
            ("K", ["1", "2"]),
            ("V", ["1", "2"]),
            ("scores", tokens),
            ("weights", tokens),
            ("output", ["1", "2"]),
            ("mask", tokens),
        ]:
            headings = page.eval_on_selector(f"{WORKED} .live-{name}-table", HEADINGS)
            assert headings == [columns, tokens], name
        # Q, K and V sit between the boxes and the scores
        order = page.eval_on_selector_all(
            f"{WORKED} table", "ts => ts.map(t => t.caption.textContent.split(' ')[0])"
        )
        projections, results = ["Q", "K", "V"], ["scores", "weights", "output"]
        assert order == ["X", "WQ", "WK", "WV", *projections, "mask:", *results]
        # the mask's headings are centred over their checkboxes
        mask = f"{WORKED} .live-mask-table"
        centres = page.eval_on_selector_all(
            f"{mask} tr:nth-of-type(1) th, {mask} tr:nth-of-type(2) input", CENTRES
        )
        assert len(centres) == 6
        assert np.allclose(centres[:3], centres[3:], atol=1), centres
        assert not errors and not outside


def test_editing_x_in_the_worked_example_gives_the_weights_the_library_computes(tab, server):
    with open_page(tab, server, WORKED_PAGE) as (page, outside, errors):
        page.wait_for_function(COMPUTED, arg=WORKED)
        start = _worked_start(page)
        before = page.eval_on_selector_all(f"{WORKED} .live-weights", SHOWN_NUMBERS)
        for row, column, text, value in (("“cat”", 1, "2.5", 2.5), ("“the”", 4, "−0.75", -0.75)):
            page.fill(_box("X", row, column), text)
            start["X"][start["tokens"].index(row[1:-1]), column - 1] = value
            _assert_shows(page, start)
        assert page.eval_on_selector_all(f"{WORKED} .live-weights", SHOWN_NUMBERS) != before
        page.fill(_box("W_V", 2, 2), "1e3")  # a projection: V and the outputs change, not weights
        start["W_V"][1, 1] = 1000.0
        _assert_shows(page, start)
        page.fill(_box("W_K", 1, 1), "-123456.75")  # K and the scores, in four digits from 1e5
        start["W_K"][0, 0] = -123456.75
        _assert_shows(page, start)
        # a box is wide enough for what was typed
        assert page.eval_on_selector(_box("W_K", 1, 1), "b => b.scrollWidth <= b.clientWidth")
        page.click(f'{WORKED} button:text-is("the page\'s numbers")')
        _assert_shows(page, _worked_start(page))
        assert page.input_value(_box("X", "“cat”", 1)) == "0"
        assert not errors and not outside


def test_root_d_and_the_mask_of_the_worked_example_change_the_weights_as_the_library_does(
    tab, server
):
    with open_page(tab, server, WORKED_PAGE) as (page, outside, errors):
        page.wait_for_function(COMPUTED, arg=WORKED)
        start = _worked_start(page)
        page.uncheck(f"{WORKED}-scale")
        _assert_shows(page, start, scale=False)
        assert "scores Q Kᵀ" == page.inner_text(f"{WORKED} .live-scores-table caption")
        page.check(f"{WORKED}-scale")
        mask = np.ones((3, 3), dtype=bool)
        page.uncheck(f'{WORKED} input[aria-label="“the” may attend to “cat”"]')
        mask[0, 1] = False
        _assert_shows(page, start, mask=mask)
        # the score the mask removed is a dash, and says why
        cell = f"{WORKED} .live-scores-table tr:nth-of-type(2) td:nth-of-type(2)"
        assert page.inner_text(cell) == "–"
        title = "the mask removed this score: “the” may not attend to “cat”"
        assert page.get_attribute(cell, "title") == title
        assert page.get_attribute(f"{WORKED} .live-scores-table td:has(span)", "title") is None
        assert page.inner_text(f"{WORKED} .live-notes") == ""
        page.click(f"{WORKED} button:text-is('causal')")
        causal = np.tril(np.ones((3, 3), dtype=bool))
        _assert_shows(page, start, mask=causal)
        # "the" may attend to nothing: zeros, as the library's softmax gives, and said
        page.uncheck(f'{WORKED} input[aria-label="“the” may attend to “the”"]')
        causal[0, 0] = False
        _assert_shows(page, start, mask=causal)
        assert _library(start, mask=causal)["weights"][0].tolist() == [0, 0, 0]
        # the caption is still true: the row of "the" is all 0
        assert page.inner_text(f"{WORKED} .live-weights-table caption") == WEIGHTS_CAPTION
        notes = page.inner_text(f"{WORKED} .live-notes")
        assert "leaves “the” no key to attend to" in notes and "weights of zero" in notes
        page.uncheck(f"{WORKED}-scale")
        _assert_shows(page, start, scale=False, mask=causal)
        page.click(f"{WORKED} button:text-is('all on')")
        _assert_shows(page, start, scale=False)
        assert page.inner_text(f"{WORKED} .live-notes") == ""
        assert not errors and not outside


def test_a_bad_entry_in_the_worked_example_gets_a_message_and_the_last_result_stays_dimmed(
    tab, server
):
    with open_page(tab, server, WORKED_PAGE) as (page, outside, errors):
        page.wait_for_function(COMPUTED, arg=WORKED)
        start = _worked_start(page)
        layout = page.evaluate(LAYOUT, WORKED)
        box = _box("W_Q", 2, 1)
        page.fill(box, "3")
        start["W_Q"][1, 0] = 3.0
        _assert_shows(page, start)
        message = f"{WORKED}-message"
        for text, says in [
            ("", "type a number here."),
            ("three", "“three” is not a number."),
            ("1,5", "“1,5” is not a number."),
            ("Infinity", "“Infinity” is not a finite number."),
            ("1e400", "“1e400” is not a finite number."),
            ("2000000", "“2000000” is out of range."),
            ("y" * 60, f"“{'y' * 20}…” is not a number."),
        ]:
            page.fill(box, text)
            assert page.inner_text(message) == f"W_Q, row 2, column 1: {says}"
            assert page.get_attribute(box, "aria-invalid") == "true"
            described = "live-worked-example-message live-worked-example-range"
            assert page.get_attribute(box, "aria-describedby") == described
            for part in ("results", "projections"):
                style = page.eval_on_selector(f"{WORKED} .live-{part}", "e => e.style.opacity")
                assert style == "0.4", part
            _assert_shows(page, start)  # the last good result
            # nothing moved while the reader typed
            assert page.evaluate(LAYOUT, WORKED) == layout, text
        page.fill(_box("W_Q", 4, 2), "x")  # a second bad box: counted, not repeated
        assert page.inner_text(message).endswith("is not a number. And one more box.")
        page.fill(_box("X", "“sat”", 2), "")  # a third, in another matrix; the first comes first
        assert page.inner_text(message) == "X, row “sat”, column 2: type a number here. " + (
            "And 2 more boxes."
        )
        assert page.evaluate(LAYOUT, WORKED) == layout
        page.fill(_box("X", "“sat”", 2), "1")
        page.fill(_box("W_Q", 4, 2), str(start["W_Q"][3, 1]))
        page.fill(box, "-1000000")
        start["W_Q"][1, 0] = -1e6
        _assert_shows(page, start)
        assert page.inner_text(message) == ""
        assert page.get_attribute(box, "aria-invalid") is None
        assert page.eval_on_selector(f"{WORKED} .live-results", "e => e.style.opacity") == ""
        assert page.eval_on_selector(f"{WORKED} .live-projections", "e => e.style.opacity") == ""
        assert not errors and not outside


@pytest.mark.parametrize("width", [390, 1280])
def test_the_worked_example_fits_its_column_and_its_boxes_their_numbers(tab, server, width):
    with open_page(tab, server, WORKED_PAGE, width=width) as (page, outside, errors):
        page.wait_for_function(COMPUTED, arg=WORKED)
        inside = page.eval_on_selector(WORKED, "e => e.scrollWidth <= e.clientWidth")
        assert inside, f"the frame scrolls sideways at {width} px"
        box = _box("X", "“the”", 1)
        page.fill(box, "-123456.75")
        if width == 1280:  # room for the number in full
            assert page.eval_on_selector(box, "b => b.scrollWidth <= b.clientWidth")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert not errors and not outside


def test_the_worked_example_computes_on_the_books_own_files(browser):
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto((BUILD / WORKED_PAGE).as_uri())
        page.wait_for_function(COMPUTED, arg=WORKED, timeout=10_000)
        assert page.inner_text(f"{WORKED} .live-weights") == "0.045"
        assert not errors
    finally:
        page.close()


# Part I's drop-a-step explorer computed in the page: any held-out example, any step
LIVE_DROP_PAGE = "chapters/lesson/04-weight-is-not-cause.html"
LIVE_DROP = "#live-drop-a-step"
# a live frame records what it shows last in data-shown
FRAME_SHOWS = "([root, shown]) => document.querySelector(root).dataset.shown === shown"


def _drop(page, example: str, step: str) -> None:
    page.fill(f"{LIVE_DROP} #live-example", example)
    page.fill(f"{LIVE_DROP} #live-step", step)


@pytest.mark.parametrize("example, step", [(0, 11), (7, 3), (179, 0)])
def test_dropping_a_typed_step_prints_what_the_library_prints(tab, server, example, step):
    """Examples past the static twin's six, and its first: the page's forward pass in JavaScript
    describes the drop digit for digit as the library's describe_drop does."""
    from attention_measured.book import marked_step_explorers

    with open_page(tab, server, LIVE_DROP_PAGE) as (page, outside, errors):
        page.wait_for_function(FRAME_SHOWS, arg=[LIVE_DROP, "0 11"], timeout=10_000)
        _drop(page, str(example), str(step))
        page.wait_for_function(FRAME_SHOWS, arg=[LIVE_DROP, f"{example} {step}"])
        shown = page.inner_text(f"{LIVE_DROP} .live-description")
        assert shown == marked_step_explorers.describe_drop(example, step)
        assert page.locator(f"{LIVE_DROP} svg g[data-step]").count() == 2 * 12
        assert not errors and not outside


def test_clicking_a_step_drops_it(tab, server):
    from attention_measured.book import marked_step_explorers

    with open_page(tab, server, LIVE_DROP_PAGE) as (page, outside, errors):
        page.wait_for_function(FRAME_SHOWS, arg=[LIVE_DROP, "0 11"], timeout=10_000)
        page.locator(f'{LIVE_DROP} svg g[data-step="4"]').first.click()
        page.wait_for_function(FRAME_SHOWS, arg=[LIVE_DROP, "0 4"])
        assert page.input_value(f"{LIVE_DROP} #live-step") == "4"
        shown = page.inner_text(f"{LIVE_DROP} .live-description")
        assert shown == marked_step_explorers.describe_drop(0, 4)
        assert not errors


def test_a_bad_example_or_step_gets_a_message_and_the_last_result_stays(tab, server):
    with open_page(tab, server, LIVE_DROP_PAGE) as (page, outside, errors):
        page.wait_for_function(FRAME_SHOWS, arg=[LIVE_DROP, "0 11"], timeout=10_000)
        before = page.inner_text(f"{LIVE_DROP} .live-description")
        for example, step, says in [
            ("", "11", "Type a held-out example"),
            ("180", "11", "180 is too large"),
            ("-1", "11", "is not a held-out example"),
            ("0", "12", "12 is too large"),
            ("0", "two", "“two” is not a step"),
        ]:
            _drop(page, example, step)
            assert says in page.inner_text(f"{LIVE_DROP} .live-status"), (example, step)
            assert page.inner_text(f"{LIVE_DROP} .live-description") == before
            opacity = page.eval_on_selector(f"{LIVE_DROP} svg", "e => e.style.opacity")
            assert opacity == "0.4"
        assert not errors


# the online softmax stepped block by block on the page on costs
LIVE_ONLINE_PAGE = "chapters/seq2seq/05-what-attention-costs.html"
LIVE_ONLINE = "#live-online-softmax"


def _table(page) -> list[list[str]]:
    return page.eval_on_selector_all(
        f"{LIVE_ONLINE} tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText))"
    )


def test_the_online_softmax_steps_through_the_pages_table(tab, server):
    """Stepping block by block shows the running states of the page's printed table (the
    library's attention.online_softmax), and the last block the softmax at once."""
    import numpy as np

    from attention_measured.core import attention

    with open_page(tab, server, LIVE_ONLINE_PAGE) as (page, outside, errors):
        page.wait_for_function(FRAME_SHOWS, arg=[LIVE_ONLINE, "0"], timeout=10_000)
        scores = [float(x) for x in page.input_value("#live-online-scores").split()]
        values = [float(x) for x in page.input_value("#live-online-values").split()]
        steps = attention.online_softmax(np.array(scores), np.array(values)[:, None], 4)
        fixed = lambda x: f"{x:.3f}".replace("-", "−")  # noqa: E731  (as the table shows it)
        for shown in (1, 2, 3):
            page.click(f'{LIVE_ONLINE} button[data-step="next"]')
            page.wait_for_function(FRAME_SHOWS, arg=[LIVE_ONLINE, str(shown)])
            s, before = steps[shown - 1], steps[shown - 2]
            rescale = "–" if shown == 1 else fixed(np.exp(before.top[0] - s.top[0]))
            ratio = s.acc[0] / s.total[0]
            expected = [fixed(s.top[0]), rescale, fixed(s.total[0]), fixed(s.acc[0]), fixed(ratio)]
            assert _table(page)[-1][1:] == expected
        assert len(_table(page)) == 3
        text = page.inner_text(f"{LIVE_ONLINE} .live-description")
        at_once = float(np.array(values) @ attention.softmax(np.array(scores)))
        assert f"o / l = {at_once:.4f}".replace("-", "−") in text
        page.click(f'{LIVE_ONLINE} button[data-step="back"]')
        page.wait_for_function(FRAME_SHOWS, arg=[LIVE_ONLINE, "2"])
        assert len(_table(page)) == 2 and page.inner_text(f"{LIVE_ONLINE} .live-description") == ""
        assert not errors and not outside


def test_typed_scores_a_masked_key_and_another_block_step_as_the_library_does(tab, server):
    import numpy as np

    from attention_measured.core import attention

    with open_page(tab, server, LIVE_ONLINE_PAGE) as (page, outside, errors):
        page.wait_for_function(FRAME_SHOWS, arg=[LIVE_ONLINE, "0"], timeout=10_000)
        page.fill("#live-online-scores", "3 -inf 0.5 7 -2")
        page.fill("#live-online-values", "1 2 3 4 5")
        page.fill("#live-online-block", "2")
        page.click(f'{LIVE_ONLINE} button[data-step="all"]')
        page.wait_for_function(FRAME_SHOWS, arg=[LIVE_ONLINE, "3"])
        scores = np.array([3, -np.inf, 0.5, 7, -2])
        steps = attention.online_softmax(scores, np.arange(1.0, 6.0)[:, None], 2)
        rows = _table(page)
        assert [r[0] for r in rows] == ["0–1", "2–3", "4"]
        assert [r[3] for r in rows] == [f"{s.total[0]:.3f}" for s in steps]
        assert rows[1][2] == f"{np.exp(3 - 7):.3f}"  # the second block raised the maximum to 7
        for box, text, says in [
            ("#live-online-scores", "1 2 x", "“x” is not a number"),
            ("#live-online-values", "1 2", "5 scores and 2 values"),
            ("#live-online-block", "17", "from 1 to 16"),
        ]:
            page.fill(box, text)
            assert says in page.inner_text(f"{LIVE_ONLINE} .live-status"), text
            page.fill(
                box,
                {
                    "#live-online-scores": "3 -inf 0.5 7 -2",
                    "#live-online-values": "1 2 3 4 5",
                    "#live-online-block": "2",
                }[box],
            )
        assert not errors


# Part II's heads reading a typed sentence, on the page of what the memory remembers
LIVE_TYPED_PAGE = "chapters/udhr/04-what-it-remembers.html"
LIVE_TYPED = "#live-typed-sentence"


def _carried_heads(page) -> dict:
    """The heads the page carries (its data-start), as the library's Params."""
    import base64
    import json

    import numpy as np

    from attention_measured.book import live
    from attention_measured.core.params import Params
    from attention_measured.models.cloze_head import NAMES, WIDTH

    start = json.loads(page.get_attribute(LIVE_TYPED, "data-start"))
    V, d = len(start["vocabulary"]), WIDTH
    shapes = {"E": (V, d), "W_Q": (d, d), "W_K": (d, d), "W_V": (d, d), "W_O": (d, V)}
    extra = {
        "token": {},
        "blank": {"mask_embedding": (d,)},
        "position": {"positions": (start["longest"], d)},
    }
    heads = {}
    for name, text in start["heads"].items():
        flat = np.frombuffer(base64.b64decode(text), dtype="<f4").astype(float)
        params, at = {}, 0
        for array, shape in ({k: shapes[k] for k in NAMES} | extra[name]).items():
            size = int(np.prod(shape))
            params[array] = flat[at : at + size].reshape(shape)
            at += size
        heads[name] = Params(params)
        assert live.TYPED_QUERIES[name] in ("token", "mask", "position")
    return heads


@pytest.mark.parametrize("query", ["token", "blank", "position"])
def test_a_typed_sentence_is_read_by_each_head_as_the_library_reads_it(tab, server, query):
    import numpy as np

    from attention_measured.models import cloze_head
    from attention_measured.tasks import cloze

    sentence = "Everyone has the right to life, liberty and security of person."
    tokens = cloze.tokenize(sentence)
    with open_page(tab, server, LIVE_TYPED_PAGE) as (page, outside, errors):
        page.wait_for_selector(LIVE_TYPED, state="visible", timeout=10_000)
        page.fill("#live-sentence", sentence)
        page.check(f"{LIVE_TYPED} input[value={query}]")
        page.wait_for_function(FRAME_SHOWS, arg=[LIVE_TYPED, f"{query}: {' '.join(tokens)}"])
        params = _carried_heads(page)[query]
        probs = cloze_head.predict(params, tokens)
        weights = cloze_head.attention_weights(params, tokens)
        predicted = [cloze.VOCAB[i] for i in probs.argmax(axis=1)]
        summary = page.inner_text(f"{LIVE_TYPED} .live-description")
        right = sum(p == t for p, t in zip(predicted, tokens))
        assert summary == f"{query} query: {right} of {len(tokens)} tokens predicted correctly"
        rows = page.eval_on_selector_all(
            f"{LIVE_TYPED} tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.textContent))"
        )
        assert rows == [
            [
                token,
                predicted[i],
                f"{probs[i, cloze.TOKEN_ID[token]]:.3f}",
                f"{tokens[int(weights[i].argmax())]} ({weights[i].max():.2f})",
            ]
            for i, token in enumerate(tokens)
        ]
        # each cell's weight, as the hover shows it
        shown = page.eval_on_selector_all(
            f"{LIVE_TYPED} svg rect", "rs => rs.map(r => Number(r.dataset.weight))"
        )
        np.testing.assert_allclose(np.reshape(shown, weights.shape), weights, atol=1e-12)
        assert not errors and not outside


def test_a_sentence_the_heads_cannot_read_gets_a_message_naming_why(tab, server):
    with open_page(tab, server, LIVE_TYPED_PAGE) as (page, outside, errors):
        page.wait_for_selector(LIVE_TYPED, state="visible", timeout=10_000)
        before = page.inner_text(f"{LIVE_TYPED} .live-description")
        for text, says in [
            ("Everyone has the right to pizza and to sleep", "“pizza”, “sleep”"),
            ("free", "at least two words"),
            ("", "at least two words"),
            (" ".join(["the"] * 20), "20 words are too many"),
        ]:
            page.fill("#live-sentence", text)
            assert says in page.inner_text(f"{LIVE_TYPED} .live-status"), text
            assert page.get_attribute("#live-sentence", "aria-invalid") is not None
            assert page.inner_text(f"{LIVE_TYPED} .live-description") == before
        assert not errors


# Part IV's translators translating a typed sentence, on the page of the Transformer
LIVE_TRANSLATOR_PAGE = "chapters/seq2seq/04-transformer.html"
LIVE_TRANSLATOR = "#live-translator"


def _carried_translators(page) -> dict:
    """The translators the page carries (its data-start), as the library's (model, Params)."""
    import base64
    import json

    import numpy as np

    from attention_measured.book import live
    from attention_measured.core.params import Params
    from attention_measured.experiments import translation_runs

    start = json.loads(page.get_attribute(LIVE_TRANSLATOR, "data-start"))
    out = {}
    for name, carried in start["models"].items():
        model = translation_runs.book_model(name)
        assert live.translator_config(model) == carried["config"]
        flat = np.frombuffer(base64.b64decode(carried["weights"]), dtype="<f4").astype(float)
        params, at = {}, 0
        for array, shape in carried["names"]:
            size = int(np.prod(shape))
            params[array] = flat[at : at + size].reshape(shape)
            at += size
        out[name] = model, Params(params)
    return out


@pytest.mark.parametrize(
    "decoding, beam",
    [("greedy", None), ("beam", 3), ("forced", None)],
)
def test_a_typed_sentence_is_translated_by_both_models_as_the_library_does(
    tab, server, decoding, beam
):
    import numpy as np

    from attention_measured.experiments import translation_runs

    sentence = "The old farmer sees a quick fox beside the river and the child paints a boat."
    words = sentence.lower().replace(".", "").split()
    with open_page(tab, server, LIVE_TRANSLATOR_PAGE) as (page, outside, errors):
        page.wait_for_selector(LIVE_TRANSLATOR, state="visible", timeout=10_000)
        page.fill("#live-source", sentence)
        if beam is not None:
            page.fill("#live-beam", str(beam))  # typing a width chooses beam search
        else:
            page.check(f"{LIVE_TRANSLATOR} input[value={decoding}]")
        label = f"beam {beam}" if beam else decoding
        page.wait_for_function(FRAME_SHOWS, arg=[LIVE_TRANSLATOR, f"{label}: {' '.join(words)}"])
        reference = page.inner_text(f"{LIVE_TRANSLATOR} .live-reference")
        panels = page.query_selector_all(f"{LIVE_TRANSLATOR} .live-model")
        assert [p.get_attribute("data-model") for p in panels] == ["Transformer", "Bahdanau"]
        for panel, (name, (model, params)) in zip(panels, _carried_translators(page).items()):
            r = translation_runs.translation_of(model, params, words, beam or 1)
            assert reference == f"The grammar's translation: {' '.join(r['reference'])}"
            line = panel.query_selector(".live-output").inner_text()
            said = line.split(": ", 1)[1].split()
            if decoding == "forced":
                assert said == list(r["forced_words"]), name
                weights = r["forced"]
            else:
                assert said == list(r["output"]), name
                weights = r["weights"][: len(r["output"]) + 1]
                score = translation_runs.translation_measures(r)
                summary = panel.query_selector(".live-summary").inner_text()
                assert summary.startswith(
                    f"exact: {'yes' if score['exact'] else 'no'}; {score['right']} of "
                    f"{score['words']} words right, position by position"
                ), summary
                assert f"log-probability {r['log_prob']:.2f};" in summary
                circled = f"{score['on_truth']} of the {score['still']} circled rows"
                assert summary.endswith(circled), summary
            bold = [b.inner_text() for b in panel.query_selector_all(".live-output .live-wrong")]
            truth = list(r["reference"]) + ["</s>"]
            assert bold == [w for i, w in enumerate(said) if i >= len(truth) or w != truth[i]]
            shown = panel.eval_on_selector_all("svg rect", "rs => rs.map(r => +r.dataset.weight)")
            np.testing.assert_allclose(np.reshape(shown, weights.shape), weights, atol=1e-12)
            rings = panel.query_selector_all("svg circle.ring")
            # the grammar's words ringed: all given the true words, else up to the first wrong one
            still = translation_runs.still_right(r["output"], r["reference"])
            expected = len(r["alignment"]) if decoding == "forced" else still
            assert len(rings) == expected, name
        assert not errors and not outside


def test_a_sentence_the_translators_cannot_read_gets_a_message_naming_why(tab, server):
    with open_page(tab, server, LIVE_TRANSLATOR_PAGE) as (page, outside, errors):
        page.wait_for_selector(LIVE_TRANSLATOR, state="visible", timeout=10_000)
        before = page.inner_text(f"{LIVE_TRANSLATOR} .live-model")
        for box, text, says in [
            ("#live-source", "the cat sees a unicorn", "“cat”, “unicorn”"),
            ("#live-source", "the dog a bird", "word 3 (“a”): here the clause's verb"),
            ("#live-source", "the dog sees", "The sentence ends where a noun phrase"),
            ("#live-source", "", "Type a sentence"),
            ("#live-source", " and ".join(["the dog sees a bird"] * 10), "59 words are too many"),
            ("#live-beam", "0", "a whole number from 1 to 16"),
            ("#live-beam", "17", "a whole number from 1 to 16"),
            ("#live-beam", "", "a whole number from 1 to 16"),
        ]:
            if box == "#live-beam":
                page.fill("#live-source", "the dog sees a bird")
            page.fill(box, text)
            assert says in page.inner_text(f"{LIVE_TRANSLATOR} .live-status"), text
            assert page.get_attribute(box, "aria-invalid") is not None
            page.fill("#live-beam", "4")
        page.fill("#live-source", "the dog sees a bird")
        page.wait_for_function(FRAME_SHOWS, arg=[LIVE_TRANSLATOR, "beam 4: the dog sees a bird"])
        assert page.inner_text(f"{LIVE_TRANSLATOR} .live-model") != before
        assert not errors


LABELS_INSIDE = """svg => {
  const box = svg.getBoundingClientRect();
  return [...svg.querySelectorAll("text")].filter((t) => {
    const r = t.getBoundingClientRect();
    return r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5;
  }).map((t) => t.textContent);
}"""


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize(
    "page_name, root, box, text",
    [
        (LIVE_TYPED_PAGE, LIVE_TYPED, "#live-sentence", "freedom of movement and discrimination"),
        (LIVE_TYPED_PAGE, LIVE_TYPED, "#live-sentence", "human a"),
        (
            LIVE_TRANSLATOR_PAGE,
            LIVE_TRANSLATOR,
            "#live-source",
            "every quiet farmer watches the quick fox beside a river",
        ),
    ],
)
def test_a_live_heat_maps_labels_are_never_cut_at_its_edges(
    tab, server, width, page_name, root, box, text
):
    with open_page(tab, server, page_name, width=width) as (page, outside, errors):
        page.wait_for_selector(root, state="visible", timeout=10_000)
        page.fill(box, text)
        page.wait_for_function(
            "([root, text]) => document.querySelector(root).dataset.shown.endsWith(text)",
            arg=[root, text],
        )
        for svg in page.query_selector_all(f"{root} svg"):
            assert svg.evaluate(LABELS_INSIDE) == []
        assert not errors and not outside


# every live frame added with the drop-a-step explorer, at both widths and from the book's files
LIVE_FRAMES = [
    (LIVE_DROP_PAGE, LIVE_DROP),
    (LIVE_ONLINE_PAGE, LIVE_ONLINE),
    (LIVE_TYPED_PAGE, LIVE_TYPED),
    (LIVE_TRANSLATOR_PAGE, LIVE_TRANSLATOR),
]


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("page_name, root", LIVE_FRAMES)
def test_the_new_live_frames_fit_the_column(tab, server, width, page_name, root):
    with open_page(tab, server, page_name, width=width) as (page, outside, errors):
        page.wait_for_selector(root, state="visible", timeout=10_000)
        inside = page.eval_on_selector(root, "e => e.scrollWidth <= e.clientWidth")
        assert inside, f"{root} scrolls sideways at {width} px"
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert not errors and not outside


@pytest.mark.parametrize("page_name, root", LIVE_FRAMES)
def test_the_new_live_frames_compute_on_the_books_own_files(browser, page_name, root):
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto((BUILD / page_name).as_uri())
        page.wait_for_function(
            "root => document.querySelector(root).dataset.shown !== undefined",
            arg=root,
            timeout=10_000,
        )
        assert page.inner_text(f"{root} .live-status") != ""
        assert not errors
    finally:
        page.close()


# every static heat map (plots.heatmap) shows a cell's number on hover (_ext/cells.js)
HEATMAP_PAGES = [
    "chapters/udhr/03-training.html",
    "chapters/taxonomy/05-self-attention.html",
    "chapters/language/02-induction-heads.html",
    "chapters/seq2seq/03-alignments-and-input-feeding.html",
]


def _named(labels, k):
    """A row's or column's name as the tip gives it (_ext/cells.js): its label, with its
    position where the label is repeated, or its position where it has none."""
    if not labels[k]:
        return str(k)
    return labels[k] if labels.count(labels[k]) == 1 else f"{labels[k]} (position {k})"


def _hover_cells(page, img, cells, width):
    """Hover three cells of ``cells`` (heatmap_cells' first map, as the image carries it) on
    ``img``, each time reading back the tip's label and number; then a cell of the bottom row
    at the window's bottom edge, whose tip must stay in the window; then move off the cells."""
    from attention_measured.book.phone_figures import cell_values

    left, top, w, h = cells["box"]
    values = cell_values(cells)
    n, m = values.shape
    tip = page.locator(".am-cell-tip")

    def centre(i, j):
        box = img.bounding_box()
        x = box["x"] + (left + (j + 0.5) * w / m) * box["width"]
        return x, box["y"] + (top + (i + 0.5) * h / n) * box["height"]

    for i, j in [(0, 0), (n - 1, m - 1), (n // 2, m // 3)]:
        page.mouse.move(*centre(i, j))
        names = f"{cells['row_axis']} {_named(cells['rows'], i)} → "
        names += f"{cells['col_axis']} {_named(cells['cols'], j)}"
        assert tip.inner_text() == f"{names}: {values[i, j]:.3f}"
        assert tip.is_visible()
        edges = tip.evaluate(
            "t => [t.getBoundingClientRect().left, t.getBoundingClientRect().right]"
        )
        assert 0 <= edges[0] and edges[1] <= width, f"the number runs off the screen: {edges}"
    # the bottom row's cell 5 px above the window's bottom edge: its tip goes above the pointer
    x, y = centre(n - 1, 0)
    page.evaluate("d => window.scrollBy(0, d)", y - (page.viewport_size["height"] - 5))
    x, y = centre(n - 1, 0)
    page.mouse.move(x, y)
    assert tip.is_visible()
    spans = tip.evaluate("t => [t.getBoundingClientRect().top, t.getBoundingClientRect().bottom]")
    assert 0 <= spans[0] and spans[1] <= page.viewport_size["height"], f"tip off the window {spans}"
    box = img.bounding_box()
    page.mouse.move(box["x"] + box["width"] * (left / 2), box["y"] + 2)  # off the cells
    assert not tip.is_visible()


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("path", HEATMAP_PAGES)
def test_hovering_a_heat_maps_cell_shows_its_number(tab, server, path, width):
    with open_page(tab, server, path, width=width) as (page, outside, errors):
        img = page.locator("img[data-cells]:not(.twin-figure)").first
        img.scroll_into_view_if_needed()
        page.wait_for_function("i => i.complete && i.naturalWidth > 0", arg=img.element_handle())
        phone = "-phone." in img.evaluate("i => i.currentSrc")
        assert phone == (width < 700), "the drawing served is the screen's"
        cells = json.loads(img.get_attribute("data-phone-cells" if phone else "data-cells"))[0]
        _hover_cells(page, img, cells, width)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert not errors and not outside


def _centre_of(img, cells_box):
    """The point of the page at the middle of a heat map whose box in ``img`` is ``cells_box``
    (fractions of the image, as heatmap_cells gives it)."""
    left, top, w, h = cells_box
    box = img.bounding_box()
    return box["x"] + (left + w / 2) * box["width"], box["y"] + (top + h / 2) * box["height"]


# every static twin whose frames hold heat maps: a cell's number on hover, the present frame's
TWIN_HEATMAP_PAGES = [p for p in TWIN_PAGES if 'data-cells="[]"' in (BUILD / p).read_text()]


def test_the_twins_with_heat_maps_are_found():
    assert {
        "chapters/udhr/04-what-it-remembers.html",
        "chapters/language/03-positions.html",
        "chapters/seq2seq/03-alignments-and-input-feeding.html",
    } <= set(TWIN_HEATMAP_PAGES), TWIN_HEATMAP_PAGES


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("path", TWIN_HEATMAP_PAGES)
def test_hovering_a_twins_heat_map_shows_the_present_frames_number(tab, server, path, width):
    with open_page(tab, server, path, width=width) as (page, outside, errors):
        for twin in page.locator(".static-twin:has(img[data-cells])").all():
            img = twin.locator(".twin-figure")
            data = json.loads(twin.locator(".twin-data").text_content())
            slider = twin.locator("input[type=range]").first
            slider.focus()
            page.keyboard.press("End")  # the last frame along the first slider
            index = twin.evaluate(
                """(t, sizes) => [...t.querySelectorAll('input[type=range]')]
                  .reduce((k, s, i) => k * sizes[i] + Number(s.value), 0)""",
                data["sizes"],
            )
            assert index > 0
            maps = data["cells"][index]
            assert json.loads(img.get_attribute("data-cells")) == maps, "not the frame's cells"
            if not maps:
                continue
            # what a twin leaves out, cells.js assumes (widgets._shortened)
            maps[0].setdefault("rows", [""] * maps[0]["shape"][0])
            maps[0] = {"cols": maps[0]["rows"], "row_axis": "query", "col_axis": "key"} | maps[0]
            img.scroll_into_view_if_needed()
            page.wait_for_function(
                "i => i.complete && i.naturalWidth > 0", arg=img.element_handle()
            )
            _hover_cells(page, img, maps[0], width)
            # a number shown in the middle of the window (clear of the theme's floating button),
            # then a slider moves
            x, y = _centre_of(img, maps[0]["box"])
            page.evaluate("d => window.scrollBy(0, d)", y - page.viewport_size["height"] / 2)
            page.mouse.move(*_centre_of(img, maps[0]["box"]))
            assert page.locator(".am-cell-tip").is_visible()
            slider.focus()
            page.keyboard.press("Home")
            assert not page.locator(".am-cell-tip").is_visible(), "a stale number stays shown"
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert not errors and not outside


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize(
    "page_name, root", [(LIVE_TYPED_PAGE, LIVE_TYPED), (LIVE_TRANSLATOR_PAGE, LIVE_TRANSLATOR)]
)
def test_tapping_a_live_heat_maps_cell_shows_its_number(tab, server, page_name, root, width):
    """A live map's cell (book/js/heatmap.mjs) shows the text it carries in the page's one tip,
    on a tap as on hover; typing hides it, since the map it described is redrawn."""
    with open_page(tab, server, page_name, width=width) as (page, outside, errors):
        page.wait_for_function(
            "root => document.querySelector(root).dataset.shown !== undefined", arg=root
        )
        cell = page.locator(f"{root} svg rect").nth(1)
        cell.scroll_into_view_if_needed()
        page.evaluate("() => window.scrollBy(0, -200)")  # room above the cell for the tip
        box = cell.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.click(x, y)
        tip = page.locator(".am-cell-tip")
        assert tip.is_visible()
        assert tip.evaluate("t => t.getBoundingClientRect().bottom") < y, "under the finger"
        said = cell.get_attribute("data-tip")
        assert tip.inner_text() == said and re.search(r"\d\.\d{3}", said), said
        assert page.locator(f"{root} svg title").count() == 0, "a second, native tip"
        page.locator(f"{root} textarea, {root} #live-sentence").first.press("End")
        page.keyboard.type(" ")
        assert not tip.is_visible()
        assert not errors and not outside
