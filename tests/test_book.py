"""The pages' bookkeeping: glued numbers at the prose's precision, tables that fit the column."""

import numpy as np
import pytest

from attention_measured.book import pages as book_pages


def test_glued_values_are_plain_and_rounded_to_the_prose_precision():
    assert (
        book_pages._plain(np.float64(0.123456), 3) == 0.123
        and type(book_pages._plain(np.float64(1), 3)) is float
    )
    assert book_pages._plain(np.int64(7), 2) == 7 and type(book_pages._plain(np.int64(7), 2)) is int
    assert book_pages._plain(np.bool_(True), None) is True
    assert np.isnan(book_pages._plain(np.nan, 2))
    with pytest.raises(TypeError, match="glue takes a number or a string"):
        book_pages._plain([1, 2], None)
    with pytest.raises(ValueError, match="digits must be a non-negative integer"):
        book_pages.glue("x", 1.0, digits=-1)
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        book_pages.glue("", 1.0)


def test_a_table_aligns_its_columns_and_formats_each_kind(capsys):
    book_pages.table(
        ["", "accuracy", "count", "note"],
        [["run 1", 0.87654, 3, "-"], ["run 22", np.nan, 12, None]],
    )
    assert capsys.readouterr().out.splitlines() == [
        "        accuracy  count  note",
        "run 1     0.8765      3     -",
        "run 22         -     12",
    ]
    book_pages.table(["seed", "w"], [[1, 0.5]], digits=[0, 2])
    assert capsys.readouterr().out.splitlines() == ["seed     w", "1     0.50"]


@pytest.mark.parametrize(
    "header, rows, digits, message",
    [
        (["a", "b"], [[1]], 4, "row 0 has 1 entries for 2 columns"),
        (["a"], [], 4, "needs a header and rows"),
        (["a", "b"], [[1, 2]], [1], "digits has 1 entries for 2 columns"),
        (["a", "x" * 90], [[1, 2]], 4, "the table is 93 characters wide; 80 fit"),
        (["a"], [[object()]], 4, "a table entry must be a number"),
    ],
)
def test_a_table_refuses_what_would_not_read(header, rows, digits, message):
    with pytest.raises((ValueError, TypeError), match=message):
        book_pages.table(header, rows, digits)


def test_a_table_has_an_html_twin_with_a_header_and_right_aligned_numbers():
    html = book_pages._html(["model", "exact <22"], [["a & b", "0.5000"]])
    assert html.startswith('<table class="am-table"><thead><tr><th class="am-label">model')
    assert '<th class="am-number">exact &lt;22</th>' in html
    assert '<td class="am-label">a &amp; b</td><td class="am-number">0.5000</td>' in html


def test_an_empty_corner_is_not_a_header_cell():
    html = book_pages._html(["", "loss"], [["run 1", "0.5"]])
    assert '<thead><tr><td class="am-label"></td><th class="am-number">loss</th>' in html
