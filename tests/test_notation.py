"""The notation page and the pages agree: each symbol it defines is used in that meaning only."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTATION = (ROOT / "notation.md").read_text()


def prose(part: str) -> str:
    """The markdown of every page of a Part (its formulas included), and the code comments."""
    text = []
    for path in sorted((ROOT / "chapters" / part).glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            text.append("".join(cell["source"]))
    return "\n".join(text)


# (what, the form the notation page defines, where it is used, forms that must not appear there)
RULES = [
    ("Part I's scores", r"e_t = q \cdot k_t", ("lesson",), [r"\bs_t\b", r"s_u\b"]),
    (
        "the encoder of Part III",
        r"h_t = W_E x_t + b_E",
        ("taxonomy",),
        [r"c_0", r"\bE x_t", r"x_t E\b"],
    ),
    ("local-p's half-width", r"$\Delta$", ("taxonomy",), [r"half-width \$D\$"]),
    ("REINFORCE's baseline", r"$\mu$", ("taxonomy",), [r"baseline \$b\$"]),
    ("positional encodings", r"\mathrm{PE}_t", ("taxonomy",), [r"\$P_t\$", r"P_\{t,", r"P_j\$"]),
]


@pytest.mark.parametrize("what, defined, parts, banned", RULES, ids=[r[0] for r in RULES])
def test_each_symbol_has_one_meaning(what, defined, parts, banned):
    assert defined in NOTATION, f"the notation page does not define {what} as {defined}"
    for part in parts:
        text = prose(part)
        symbol = re.sub(r"[$\\{}]", "", defined.split("=")[0]).strip()
        assert symbol.replace(" ", "") in re.sub(r"[$\\{}\s]", "", text), (
            f"{part} never uses {what}"
        )
        for pattern in banned:
            found = re.search(pattern, text)
            assert not found, (
                f"{part} writes {found.group(0)!r} for {what}; the notation page says {defined}"
            )


def test_vectors_are_described_as_the_pages_use_them():
    # both conventions are stated, and each example the notation page gives is on its pages
    assert "the vector is a column" in NOTATION and "the positions are the rows" in NOTATION
    assert "Vectors are rows" not in NOTATION
    assert r"k_t = W_K x_t" in NOTATION and r"W_K x_t" in prose("lesson")
    assert r"Z W_O" in NOTATION and r"Z W_O" in prose("udhr")
    assert r"x_t W_K" not in prose("lesson")  # one vector: matrix on the left
