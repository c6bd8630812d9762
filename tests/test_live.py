"""The explorers that compute in the page (attention_measured.book.live): each JavaScript module
reaches the page whole, as a data: URL with its sibling imports made data: URLs too, and the
seed explorer refuses what it cannot show.  The Node tests (tests/js) hold the JavaScript equal
to the library; the browser tests type into the built page."""

import base64
import re

import numpy as np
import pytest

from attention_measured.book import live


def _source(url: str) -> str:
    prefix = "data:text/javascript;base64,"
    assert url.startswith(prefix)
    return base64.b64decode(url[len(prefix) :]).decode()


def test_a_module_travels_whole_with_its_imports_made_data_urls():
    page = _source(live.module_url("lesson_page"))
    on_disk = (live.FOLDER / "lesson_page.mjs").read_text()
    # every line but the imports is the file's own
    assert [x for x in page.splitlines() if "import" not in x] == [
        x for x in on_disk.splitlines() if "import" not in x
    ]
    assert 'from "./' not in page  # a data: URL cannot import by a relative path
    (lesson,) = re.findall(r'from "(data:[^"]+)"', page)
    assert "export function seed_report" in _source(lesson)
    (core,) = re.findall(r'from "(data:[^"]+)"', _source(lesson))
    assert "export function softmax" in _source(core)


def test_module_url_refuses_what_is_not_a_module_of_the_folder():
    for bad in ["lessons", "../live", "", 3]:
        with pytest.raises(ValueError, match="name"):
            live.module_url(bad)


def test_the_seed_explorer_ships_the_hundred_seeds_and_hides_until_its_script_runs():
    out = live.seed_explorer([5, 6], [0.25, 0.75]).data
    assert 'id="live-change-the-seed" hidden' in out
    assert "&quot;seeds&quot;: [5, 6]" in out and "0.75" in out
    assert live.module_url("lesson_page") in out
    with pytest.raises(ValueError, match="one length"):
        live.seed_explorer([5, 6], [0.25])
    with pytest.raises(TypeError, match="hundred_seeds"):
        live.seed_explorer([0.5], [0.25])
    with pytest.raises(ValueError, match="hundred_weights"):
        live.seed_explorer([5], np.array([[0.25]]))
