"""The build puts each line of code in a span of its own, and changes no text (_ext/code_lines.py).

The code is highlighted by Sphinx's own highlighter, as the build highlights it; what a reader
copies is the text of the HTML, which must be the source's, newline for newline.
"""

import html
import importlib.util
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sphinx.highlighting import PygmentsBridge

SPEC = importlib.util.spec_from_file_location(
    "code_lines", Path(__file__).resolve().parents[1] / "_ext" / "code_lines.py"
)
code_lines = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(code_lines)

HIGHLIGHTER = PygmentsBridge("html", "sphinx")


def highlighted(source: str, language: str = "ipython3", **options) -> str:
    """The inner HTML of the <pre> that Sphinx writes for ``source``."""
    block = HIGHLIGHTER.highlight_block(source, language, **options)
    return re.fullmatch(r'<div class="highlight"><pre>(.*)</pre></div>\n', block, re.S)[1]


def text(code: str) -> str:
    """The text of HTML: what a browser shows and copies, in a <pre>."""
    return html.unescape(re.sub(r"<[^>]*>", "", code))


class _Lines(HTMLParser):
    """Each code-line span's text and indent, checking that every tag closes inside its line."""

    LINE = "code-line"  # what stands for a line's span among the open tags

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.lines, self.open = [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "span" and attrs.get("class") == "code-line":
            assert self.LINE not in self.open, "a line inside a line"
            style = attrs.get("style") or ""
            self.lines.append(["", int(style.removeprefix("--indent:")) if style else 0])
            tag = self.LINE
        self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open, f"</{tag}> closes nothing"
        opened = self.open.pop()
        assert opened == tag or (opened == self.LINE and tag == "span"), f"<{opened}> by </{tag}>"
        if opened == self.LINE:
            assert not self.open, "a tag left open around a line"

    def handle_data(self, data):
        if self.LINE in self.open:
            self.lines[-1][0] += data
        else:
            assert set(data) <= {"\n"}, f"text outside every line: {data!r}"


def lines_of(code: str) -> list[tuple[str, int]]:
    """(text, indent) of each line of wrapped code, with the line breaks between them checked."""
    parser = _Lines()
    parser.feed(code)
    parser.close()
    assert parser.open == [], f"tags left open: {parser.open}"
    # a line break between two lines, none inside one (Sphinx ends a block with a line break)
    assert "".join(t + "\n" for t, _ in parser.lines) == text(code), "breaks outside the spans"
    assert all("\n" not in t for t, _ in parser.lines)
    return [(t, i) for t, i in parser.lines]


SOURCE = '''\
def attend(query, keys):
    """The weights of one query over its keys.

    Scores are divided by sqrt(d) & the softmax is <stable>:
        "weights" sum to 1.
    """

    scores = keys @ query / np.sqrt(len(query))  # a line longer than a phone's column
    if scores.max() > 0 and "a < b" != 'c > d':
\t\treturn np.exp(scores - scores.max())  # tabs
                            # a comment far to the right, past MAX_INDENT
    return f"""two
lines"""
'''


def test_each_line_is_its_own_span_with_the_same_text():
    code = highlighted(SOURCE)
    wrapped = code_lines.wrap_lines(code)
    assert text(wrapped) == text(code) == SOURCE
    source_lines = SOURCE.removesuffix("\n").split("\n")
    assert [t for t, _ in lines_of(wrapped)] == source_lines


def test_blank_lines_are_empty_spans_and_indentation_is_kept():
    lines = lines_of(code_lines.wrap_lines(highlighted(SOURCE)))
    blank = [i for i, (t, _) in enumerate(lines) if t == ""]
    assert blank == [2, 6]
    assert [indent for _, indent in lines] == [0, 4, 0, 4, 8, 4, 0, 4, 4, 16, 16, 4, 0]
    # the leading spaces are the line's own text, kept as they are
    assert lines[9][0].startswith("\t\treturn") and lines[4][0].startswith("        ")


def test_a_token_over_several_lines_is_closed_and_opened_again_on_each():
    wrapped = code_lines.wrap_lines(highlighted(SOURCE))
    docstring = [line for line in wrapped.split("\n") if 'weights" sum' in line][0]
    # the docstring's span, opened again inside the line's, and closed before its end
    assert docstring == (
        '<span class="code-line" style="--indent:8">'
        '<span class="sd">        "weights" sum to 1.</span></span>'
    )
    assert (
        wrapped.split("\n")[12] == '<span class="code-line"><span class="s2">lines"""</span></span>'
    )


def test_an_emphasized_lines_span_over_its_line_break_is_cut_at_it():
    # Pygments closes a token's span at each line's end itself, but the span of an emphasized
    # line (emphasize-lines) holds the line's break: each line takes its own part
    code = highlighted(SOURCE, hl_lines=[2, 3, 4])
    assert '\n</span><span class="hll">' in code
    wrapped = code_lines.wrap_lines(code)
    assert text(wrapped) == SOURCE
    lines = lines_of(wrapped)
    assert [t for t, _ in lines] == SOURCE.removesuffix("\n").split("\n")
    assert wrapped.split("\n")[1:3] == [
        '<span class="code-line" style="--indent:4"><span class="hll"><span class="w">    </span>'
        '<span class="sd">"""The weights of one query over its keys.</span></span></span>',
        '<span class="code-line"><span class="hll"></span><span class="hll"></span></span>',
    ]


def test_entities_stay_as_written():
    code = highlighted('x = "<a & b>"\n')
    assert "&lt;a &amp; b&gt;" in code_lines.wrap_lines(code)
    assert text(code_lines.wrap_lines(code)) == 'x = "<a & b>"\n'


@pytest.mark.parametrize("source", ["", "\n", "\n\n", "x", "x\n", "\n\nx\n\n", "  \n  x"])
def test_edge_cases(source):
    code = highlighted(source, "python")
    wrapped = code_lines.wrap_lines(code)
    assert text(wrapped) == text(code)
    lines = lines_of(wrapped)
    assert "\n".join(t for t, _ in lines) == text(code).removesuffix("\n")


def test_a_line_without_a_final_newline_and_a_tag_after_it():
    code = '<span class="s">"""a\nb"""</span>\n<span class="x"></span>'
    wrapped = code_lines.wrap_lines(code)
    assert wrapped == (
        '<span class="code-line"><span class="s">"""a</span></span>\n'
        '<span class="code-line"><span class="s">b"""</span></span>\n'
        '<span class="x"></span>'
    )


# bits of code: names, numbers, indentation, comments, strings of one line and of several
PYTHONISH = st.lists(
    st.sampled_from([*"ab1 \t\n#'\"\\<>&;:()[]{}=+-*/.,é", "def ", "    ", "'''", '"""']),
    max_size=60,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    PYTHONISH,
    st.sampled_from(["ipython3", "python", "bash"]),
    st.lists(st.integers(1, 8), max_size=4),
)
def test_any_code_keeps_its_text_and_lines(source, language, emphasized):
    code = highlighted(source, language, hl_lines=emphasized)
    wrapped = code_lines.wrap_lines(code)
    assert text(wrapped) == text(code)
    lines = lines_of(wrapped)
    assert "\n".join(t for t, _ in lines) == text(code).removesuffix("\n")
    for t, indent in lines:
        lead = t[: len(t) - len(t.lstrip(" \t"))].expandtabs(8)
        expected = min(len(lead), code_lines.MAX_INDENT) if t.strip() else 0
        assert indent == expected, (t, indent)


def test_code_blocks_and_printed_outputs_are_wrapped_a_line_each():
    code = highlighted("for i in range(3):\n    print(i)\n")
    page = (
        '<div class="highlight-ipython3 notranslate"><div class="highlight"><pre>'
        + code
        + "</pre></div>\n</div>\n"
        '<div class="output stream highlight-myst-ansi notranslate"><div class="highlight"><pre>'
        "<span></span>0\n1\n2\n</pre></div>\n</div>\n"
        '<div class="highlight-bash notranslate"><div class="highlight"><pre>'
        '<span></span>make<span class="w"> </span>book\n</pre></div>\n</div>\n'
    )
    wrapped = code_lines.wrap_blocks(page)
    assert text(wrapped) == text(page)
    assert wrapped.count('class="code-line"') == 6
    assert "<pre><span></span>0\n1\n2\n</pre>" not in wrapped
    first_two = '<span class="code-line"><span></span>0</span>\n<span class="code-line">1</span>'
    assert first_two in wrapped
    assert code_lines.wrap_blocks(wrapped) == wrapped  # a second pass changes nothing
