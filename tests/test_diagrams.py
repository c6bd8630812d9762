"""The schematic pictures: one column wide, text big enough to read, and one alt text everywhere."""

import itertools
import json
import re
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from matplotlib.transforms import Bbox

from attention_measured.book import diagrams, phone_figures, plots

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


def faults_of_layout(fig):
    """Texts that run into each other (rotated ones aside: their boxes are not their glyphs)
    and labels that spill out of the boxes they are kept inside."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    undrawn = {  # the labels of ticks outside the axes, which matplotlib does not draw
        id(label)
        for ax in fig.axes
        for axis, (low, high) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim()))
        for tick in axis.get_major_ticks()
        if not min(low, high) <= tick.get_loc() <= max(low, high)
        for label in (tick.label1, tick.label2)
    }
    texts = [
        (t, t.get_window_extent(renderer))
        for t in fig.findobj(plt.Text)
        if t.get_visible()
        and t.get_text().strip()
        and not t.get_rotation()
        and id(t) not in undrawn
    ]
    faults = []
    for (a, one), (b, other) in itertools.combinations(texts, 2):
        both = Bbox.intersection(one, other)
        if both is not None and both.width > 1 and both.height > 1:
            faults.append(f"{a.get_text()!r} runs into {b.get_text()!r}")
    for text, box in getattr(fig, "_phone_boxed", []):
        inner, outer = text.get_window_extent(renderer), box.get_window_extent(renderer)
        if not outer.padded(0.5).contains(inner.x0, inner.y0) or not outer.padded(0.5).contains(
            inner.x1, inner.y1
        ):
            faults.append(f"{text.get_text()!r} spills out of its box")
    return faults


@pytest.mark.parametrize("draw", diagrams.ALL, ids=lambda f: f.__name__)
def test_no_text_runs_into_another_or_out_of_its_box_in_the_column_or_on_a_phone(draw):
    fig, _ = draw()
    try:
        assert faults_of_layout(fig) == [], "in the column"
        with phone_figures._for_a_phone(fig):
            assert faults_of_layout(fig) == [], "on a phone"
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


def test_figure_takes_rows_then_columns_as_plt_subplots_does():
    fig, axes = plots.figure(2, 1)
    try:
        fig.canvas.draw()
        top, bottom = (ax.get_position() for ax in axes)
        assert top.y0 > bottom.y1 - 1e-9 and top.x0 == pytest.approx(bottom.x0)
    finally:
        plt.close(fig)


def test_figures_wider_than_the_column_are_refused():
    with pytest.raises(ValueError, match="stack the panels"):
        plots.figure(width=plots.COLUMN + 1)


def test_several_heads_numbers_its_heads_from_zero_as_the_code_does():
    fig, _ = diagrams.several_heads()
    try:
        texts = " ".join(t.get_text() for t in fig.findobj(plt.Text))
        assert "head 0:" in texts and "head 1:" in texts and "head 2" not in texts
    finally:
        plt.close(fig)


def test_each_hop_label_sits_beside_its_own_arc():
    import numpy as np
    from matplotlib.colors import to_rgb
    from matplotlib.patches import FancyArrowPatch

    fig, _ = diagrams.memory_hops()
    try:
        fig.canvas.draw()
        ax = fig.axes[0]

        def points(arrow):
            """Points along the drawn arrow, in the drawing's inches."""
            t = np.linspace(0, 1, 30)
            return np.vstack([curve(t) for curve, _ in arrow.get_path().iter_bezier()])

        arcs = [
            points(p)
            for p in ax.patches
            if isinstance(p, FancyArrowPatch) and p.get_edgecolor()[:3] == to_rgb(diagrams.WEIGHT)
        ]
        arcs.sort(key=lambda a: a[:, 0].max())  # hop 1 leaves u0, the leftmost
        assert len(arcs) == 2
        for k in (1, 2):
            (label,) = [t for t in fig.findobj(plt.Text) if t.get_text() == f"hop {k}"]
            box = label.get_window_extent()
            centre = ax.transData.inverted().transform(
                [(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2]
            )
            gaps = [np.linalg.norm(a - centre, axis=1).min() for a in arcs]
            assert int(np.argmin(gaps)) == k - 1, f"hop {k} is nearer the other arc: {gaps}"
            assert min(gaps) < 0.35, f"hop {k} floats {min(gaps):.2f} in from its arc"
    finally:
        plt.close(fig)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: diagrams.fixed_context("the red fox"), TypeError, "words must be a list"),
        (lambda: diagrams.fixed_context([]), ValueError, "words must hold 2 to 8"),
        (lambda: diagrams.self_attention_head(None), TypeError, "tokens must be a list"),
        (lambda: diagrams.self_attention_head(["a", 2]), TypeError, "tokens must hold words"),
    ],
)
def test_diagrams_refuse_words_they_cannot_draw(call, error, message):
    with pytest.raises(error, match=message):
        call()
