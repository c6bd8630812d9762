"""A Sphinx extension that writes the book's math as MathML when the book is built.

Every browser a reader may use draws MathML itself, so a page needs no script for its
formulas: this replaces MathJax (1.16 MB of JavaScript and its fonts on every page) with
Docutils' own LaTeX-to-MathML converter, which Sphinx already installs.  A formula the
converter cannot read is a warning naming its page and its text, which the strict build
(``make test``) turns into a failure.

Docutils 0.21 reads some things the pages write otherwise than TeX, and they are rewritten:
``\\dots`` as ``\\ldots``; ``\\big`` and its kin, which only enlarge a bracket, dropped;
``x'`` (an apostrophe to Docutils) as ``x\\prime``, beside the letter, where the font draws a
prime at its height; ``\\frac12`` (12 over nothing) as ``\\frac{1}{2}``.  Its MathML is
mended in two places: a subscripted accent (``\\hat y_i``) is set as TeX sets it, and ``\\|``
does not stretch.

A browser draws MathML best with a font that carries OpenType math tables, and a phone may
have none.  After the build, the characters of every formula are cut from DejaVu Math TeX
Gyre (``fonts/``, with its license) into ``_static/math.woff``, a few tens of kilobytes,
which ``_static/mathml.css`` names and a browser fetches only on a page with a formula.
"""

import html
import re
from pathlib import Path

from docutils import nodes
from docutils.utils.math import MathError, latex2mathml
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)
ENLARGED = re.compile(r"\\[Bb]igg?[lr]?(?![A-Za-z])")
FONT = Path(__file__).parent / "fonts" / "DejaVuMathTeXGyre.ttf"
FORMULA = re.compile(r"<math\b.*?</math>", re.S)
TAG = re.compile(r"<[^>]*>")
# a one-letter <mi> is drawn in italic, from Unicode's mathematical italic letters, and a
# square root draws its radical sign: glyphs no formula's text holds
IMPLIED = {*range(0x1D434, 0x1D468), 0x210E, *range(0x1D6A4, 0x1D6A6), *range(0x1D6E2, 0x1D71C)}
IMPLIED.add(ord("\N{SQUARE ROOT}"))
# Docutils' munderover for an accented letter with a subscript: base, subscript, accent
ACCENTED = re.compile(
    r"<munderover>\s*(?P<base><mi>[^<]*</mi>)"
    r"\s*(?P<under><m[ino]>[^<]*</m[ino]>|<mrow>.*?</mrow>)"
    r'\s*(?P<accent><mo (?:stretchy="false"|accent="true")[^>]*>[ˆ~ˉ˙¨→←]</mo>)\s*</munderover>',
    re.S,
)
PRIMES = re.compile(r"'+")
# \frac12: TeX takes one digit for each argument, Docutils the number 12 for the first
DIGITS = re.compile(r"\\([dt]?frac)\s*(\d)\s*(\d)")
# \log p: TeX sets a thin space between a function's name and a bare argument
NAMED = re.compile(
    r"(\\(?:log|ln|exp|tanh|sin|cos|max|min|det))\s*(?=[A-Za-z0-9\\{])(?!\\left|\\[Bb]ig)"
)


def _mathml(translator, node, tex: str, block: bool) -> str:
    tex = ENLARGED.sub("", tex.replace(r"\dots", r"\ldots"))
    # Docutils writes x' with an apostrophe, where TeX means a prime
    tex = DIGITS.sub(r"\\\1{\2}{\3}", tex)
    tex = NAMED.sub(r"\1\\,", tex)
    tex = PRIMES.sub(lambda primes: r"\prime" * len(primes.group()) + " ", tex)
    try:
        written = latex2mathml.tex2mathml(tex, as_block=block)
    except MathError as error:
        logger.warning("cannot write as MathML: %s: %s", error, tex.strip(), location=node)
        return translator.encode(tex)
    # TeX's \| is a fixed bar; a browser would stretch it to the tallest thing beside it
    written = written.replace("<mo>‖</mo>", '<mo stretchy="false">‖</mo>')
    written = written.replace('<mo class="mathopen">‖</mo>', '<mo stretchy="false">‖</mo>')
    return ACCENTED.sub(_subscript_accented, written)


def _subscript_accented(m: re.Match) -> str:
    """``\\hat y_i``: Docutils sets i under the y and the hat over it; TeX subscripts ŷ."""
    base, under, accent = m["base"], m["under"], m["accent"]
    return f'<msub>\n<mover accent="true">{base}{accent}</mover>{under}</msub>'


def _visit_math(self, node):
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(_mathml(self, node, node.astext(), block=False) + "</span>")
    raise nodes.SkipNode


def _visit_displaymath(self, node):
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node["number"]:
        self.body.append(f'<span class="eqno">({get_node_equation_number(self, node)})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    # equations separated by a blank line are stacked, as Sphinx's MathJax writer does
    parts = [part.strip() for part in node.astext().split("\n\n") if part.strip()]
    lines = [
        rf"\begin{{aligned}}{part}\end{{aligned}}"
        if r"\\" in part and not part.startswith(r"\begin")
        else part
        for part in parts
    ]
    tex = lines[0] if len(lines) == 1 else r"\begin{aligned}" + r"\\".join(lines) + r"\end{aligned}"
    self.body.append(_mathml(self, node, tex, block=True) + "</div>\n")
    raise nodes.SkipNode


def _cut_font(app, exception):
    """Write _static/math.woff with the glyphs of every formula the build wrote."""
    if exception or app.builder.format != "html":
        return
    from woff import cut_to_woff

    text = set()
    for page in Path(app.outdir).rglob("*.html"):
        for formula in FORMULA.findall(page.read_text(encoding="utf-8")):
            text.update(html.unescape(TAG.sub("", formula)))
    target = Path(app.outdir) / "_static" / "math.woff"
    cut_to_woff(FONT, target, {ord(c) for c in text} | IMPLIED, math=True)


def setup(app):
    app.connect("build-finished", _cut_font)
    app.add_html_math_renderer(
        "mathml", inline_renderers=(_visit_math, None), block_renderers=(_visit_displaymath, None)
    )
    return {"parallel_read_safe": True, "parallel_write_safe": True}
