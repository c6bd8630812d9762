"""The schematic pictures: one column wide, text big enough to read, and one alt text everywhere."""

import json
import re
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from attention_measured import diagrams, plots

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("draw", diagrams.ALL, ids=lambda f: f.__name__)
def test_each_picture_fits_the_column_with_readable_text_and_an_alt(draw):
    fig, alt = draw()
    try:
        width, _ = fig.get_size_inches()
        assert width <= plots.COLUMN + 1e-9
        sizes = [t.get_fontsize() for t in fig.findobj(plt.Text) if t.get_text().strip()]
        assert sizes and min(sizes) >= 9, f"text of {min(sizes)} pt"
        assert len(alt) > 80 and alt.endswith(".")
    finally:
        plt.close(fig)


def uses_of_pictures():
    """(page, cell) for every notebook cell that draws a picture of diagrams."""
    for path in [ROOT / "intro.ipynb", *sorted((ROOT / "chapters").glob("*/*.ipynb"))]:
        for cell in json.loads(path.read_text())["cells"]:
            found = re.search(r"diagrams\.(\w+)\(", "".join(cell["source"]))
            if cell["cell_type"] == "code" and found:
                yield path.name, found.group(1), cell["metadata"]


def test_every_picture_on_a_page_carries_the_alt_text_its_function_gives():
    alts = {f.__name__: f()[1] for f in diagrams.ALL}
    plt.close("all")
    uses = list(uses_of_pictures())
    assert {name for _, name, _ in uses} == set(alts), "every picture is drawn on some page"
    for page, name, metadata in uses:
        assert metadata["mystnb"]["image"]["alt"] == alts[name], (
            f"{page}: the alt of {name} drifted"
        )
        assert "remove-input" in metadata.get("tags", []), f"{page}: {name}'s drawing code shows"


def test_figures_wider_than_the_column_are_refused():
    with pytest.raises(ValueError, match="stack the panels"):
        plots.figure(width=plots.COLUMN + 1)
