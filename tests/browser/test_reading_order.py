"""The learner's path, measured on the built book: how much prose a reader meets, in reading
order, before self-attention and before the Transformer, and that every source keeps its pages.

Run by `make test-browser` after the strict build; it reads the HTML files and needs no browser.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "_build" / "html"

# (the page a learner reaches, the most words of prose before it)
BUDGETS = [
    ("chapters/taxonomy/05-self-attention", 8_000),
    ("chapters/seq2seq/04-transformer", 16_000),
]
# the pages of each source, which a new order may move but never drop
SOURCES = {"lesson": 5, "udhr": 4, "taxonomy": 8}

# what a reader does not read as prose: code, its printed output, formulas, scripts
NOT_PROSE = "div.cell_input, div.cell_output, div.highlight, .math, math, script, style"
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")


def reading_order(toc: dict) -> list[str]:
    """The pages of a Jupyter Book table of contents in the order a reader meets them."""
    return [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]


def prose_words(html: str) -> int:
    """Words of prose in a page's article: its text, captions and tables, without code, printed
    output or formulas."""
    article = BeautifulSoup(html, "html.parser").find("article")
    if article is None:
        raise ValueError("the page has no <article>")
    for element in article.select(NOT_PROSE):
        element.decompose()
    for link in article.select("a.headerlink"):
        link.decompose()
    return len(WORD.findall(article.get_text(" ")))


def test_prose_words_counts_text_and_skips_code_output_and_math():
    html = (
        "<article><h1>Two words<a class='headerlink'>#</a></h1><p>It's a cat, and "
        "<span class='math'>q k</span> no-more.</p><div class='cell_input'><pre>x = 1</pre>"
        "</div><div class='cell_output'><pre>loss 0.5</pre></div><figcaption>One caption"
        "</figcaption></article>"
    )
    assert prose_words(html) == 2 + 5 + 2
    with pytest.raises(ValueError, match="no <article>"):
        prose_words("<p>text</p>")


def test_reading_order_follows_the_parts():
    toc = {"root": "intro", "parts": [{"chapters": [{"file": "a"}, {"file": "b"}]}]}
    assert reading_order(toc) == ["intro", "a", "b"]


@pytest.fixture(scope="module")
def words_before():
    if not (BUILD / "intro.html").is_file():
        pytest.fail(f"no built book in {BUILD}: run `make book` (or `make test-build`) first")
    order = reading_order(yaml.safe_load((ROOT / "_toc.yml").read_text()))
    total, before = 0, {}
    for page in order:
        before[page] = total
        total += prose_words((BUILD / f"{page}.html").read_text())
    return before


@pytest.mark.parametrize("page, budget", BUDGETS, ids=[b[0].split("/")[-1] for b in BUDGETS])
def test_a_learner_reaches_the_page_within_its_budget(words_before, page, budget):
    assert page in words_before, f"{page} is not in the table of contents"
    assert words_before[page] <= budget, (
        f"{words_before[page]} words of prose come before {page}; at most {budget} may"
    )


def test_self_attention_comes_before_the_transformer(words_before):
    first, second = (page for page, _ in BUDGETS)
    assert words_before[first] < words_before[second]


def test_every_source_keeps_its_pages():
    order = reading_order(yaml.safe_load((ROOT / "_toc.yml").read_text()))
    for source, count in SOURCES.items():
        pages = [p for p in order if p.startswith(f"chapters/{source}/")]
        on_disk = sorted(p.stem for p in (ROOT / "chapters" / source).glob("*.ipynb"))
        assert len(pages) == count == len(on_disk), (source, pages, on_disk)
