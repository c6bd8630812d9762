"""Each figure a page shows carries a phone variant with larger text (phone_figures)."""

import base64
import io
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
from IPython.core.pylabtools import print_figure
from matplotlib.patches import Rectangle
from PIL import Image

from attention_measured.book import phone_figures, plots


@pytest.fixture
def fig():
    with plots.style():
        fig, axes = plots.figure(1, 2, height=2.4)
        for ax in axes:
            ax.plot([0, 1, 2], [1, 0, 2], label="a run")
            ax.set_title("a panel")
            ax.legend(fontsize=7)
    yield fig
    plt.close(fig)


def test_the_column_drawing_is_jupyters_own_and_the_phone_one_is_narrower(fig):
    column, meta = phone_figures.drawings(fig, bbox_inches="tight")
    assert column == print_figure(fig, "png", bbox_inches="tight")
    phone = Image.open(io.BytesIO(base64.b64decode(meta["phone"])))
    wide = Image.open(io.BytesIO(column))
    # a tight box pads the figure by 0.1 inch on each side
    assert phone.width <= (phone_figures.PHONE_WIDTH + 0.25) * phone_figures.DPI < wide.width


def test_the_phone_drawing_raises_small_text_and_the_figure_is_restored(fig):
    size = fig.get_size_inches().copy()
    legend = fig.axes[0].get_legend().get_texts()[0]
    _, meta = phone_figures.drawings(fig)
    assert meta["text_px"] == pytest.approx(7 * 100 / 72, abs=0.01)  # the legend, 7 points
    assert meta["phone_text_px"] == pytest.approx(phone_figures.PHONE_TEXT * 100 / 72, abs=0.01)
    assert (fig.get_size_inches() == size).all() and legend.get_fontsize() == 7


def test_a_figure_is_drawn_five_times_for_its_two_drawings_and_laid_out_twice(fig, monkeypatch):
    # twice for each tight PNG (one draw finds the box), once to fit the labels on a phone;
    # every measure of text size reads the drawing just made, and each drawing's overlaps a
    # layout without a picture
    draws, layouts = [], []
    draw = matplotlib.figure.Figure.draw
    lay_out = matplotlib.figure.Figure.draw_without_rendering
    monkeypatch.setattr(
        matplotlib.figure.Figure, "draw", lambda f, r: draws.append(f) or draw(f, r)
    )
    monkeypatch.setattr(
        matplotlib.figure.Figure,
        "draw_without_rendering",
        lambda f: layouts.append(f) or lay_out(f),
    )
    phone_figures.drawings(fig, bbox_inches="tight")
    assert len(layouts) == 2 and len(draws) == 5 + 2


def test_a_figure_without_text_has_no_smallest_text():
    fig = plt.figure(figsize=(2, 1))
    try:
        assert phone_figures.smallest_text_px(fig) == float("inf")
    finally:
        plt.close(fig)


def test_only_a_figure_is_drawn():
    with pytest.raises(TypeError, match="matplotlib Figure"):
        phone_figures.drawings("a figure")
    with pytest.raises(TypeError, match="matplotlib Figure"):
        phone_figures.smallest_text_px(None)


def test_a_widget_draws_for_its_screen_only():
    assert not phone_figures._drawing_for_a_widget
    with plots.style():
        assert phone_figures._drawing_for_a_widget
    assert not phone_figures._drawing_for_a_widget


def test_a_page_may_draw_its_own_phone_variant(fig):
    def narrow():
        phone, ax = plots.figure(width=3.0, height=2.0)
        ax.set_title("stacked", fontsize=11)
        return phone

    phone_figures.drawn_for_a_phone(fig, narrow)
    _, meta = phone_figures.drawings(fig)
    width = Image.open(io.BytesIO(base64.b64decode(meta["phone"]))).width
    assert 290 <= width <= 325 and meta["phone_text_px"] > meta["text_px"]  # a tight box


def test_a_phone_variant_wider_than_a_phone_is_refused(fig):
    phone_figures.drawn_for_a_phone(fig, lambda: plots.figure(width=6.0)[0])
    with pytest.raises(ValueError, match="at most 4.6"):
        phone_figures.drawings(fig)
    with pytest.raises(TypeError, match="draw must make a Figure"):
        phone_figures.drawn_for_a_phone(fig, "narrow")


def test_a_legend_outside_the_axes_is_narrowed_into_a_phone(fig):
    fig.axes[1].legend(["a run with a long name"], loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _, meta = phone_figures.drawings(fig)
    width = Image.open(io.BytesIO(base64.b64decode(meta["phone"]))).width
    assert width <= (phone_figures.PHONE_WIDTH + 0.2) * phone_figures.DPI


def test_a_long_axis_label_is_wrapped_on_a_phone_and_restored(fig):
    label = "share of examples whose true cause is ranked first by the method"
    fig.axes[0].set_xlabel(label)
    with phone_figures._for_a_phone(fig):
        assert "\n" in fig.axes[0].get_xlabel()
    assert fig.axes[0].get_xlabel() == label


@pytest.mark.filterwarnings("ignore:constrained_layout not applied:UserWarning")
def test_a_layout_that_collapses_on_a_phone_serves_the_column_drawing():
    with plots.style():
        fig, ax = plots.figure(width=6.0, height=1.0)
        ax.set_yticks([0, 1], ["a label far too long for a phone's narrow figure " * 3] * 2)
    try:
        column, meta = phone_figures.drawings(fig)
        assert base64.b64decode(meta["phone"]) == column
    finally:
        plt.close(fig)


def test_small_matrices_are_two_to_a_row_on_a_phone():
    named = {name: np.eye(3) for name in "QKVSAZ"}
    fig, axes = plots.matrices(named, ["a", "b", "c"])
    try:
        assert axes.shape == (2, 3)
        _, meta = phone_figures.drawings(fig)
        phone = Image.open(io.BytesIO(base64.b64decode(meta["phone"])))
        assert phone.height > phone.width  # three rows of two
    finally:
        plt.close(fig)


def a_drawing(text="a label much wider than its box", width=6.0):
    """A drawing like a diagram's: coordinates in inches, one box holding a label."""
    fig = phone_figures.scaled_as_a_drawing(plt.figure(figsize=(width, 1.0)))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, 1)
    ax.axis("off")
    box = ax.add_patch(Rectangle((0.5, 0.3), 1.4, 0.4, fill=False))
    label = ax.text(1.2, 0.5, text, ha="center", va="center", fontsize=10.5)
    phone_figures.kept_inside(label, box)
    return fig, label, box


def test_a_drawing_scales_whole_and_its_boxed_label_is_rewrapped_to_fit():
    fig, label, box = a_drawing()
    try:
        with phone_figures._for_a_phone(fig):
            scale = phone_figures.PHONE_WIDTH / 6.0
            assert fig.get_figwidth() == pytest.approx(phone_figures.PHONE_WIDTH)
            # the text shrinks with the drawing, but never below PHONE_TEXT
            assert label.get_fontsize() == max(10.5 * scale, phone_figures.PHONE_TEXT)
            fig.canvas.draw()
            renderer = fig.canvas.get_renderer()
            inner, outer = label.get_window_extent(renderer), box.get_window_extent(renderer)
            assert "\n" in label.get_text() and inner.width <= outer.width
            assert inner.height <= outer.height  # the drawing was stretched upright to hold it
            assert fig.get_figheight() > 1.0 * scale
        assert label.get_text() == "a label much wider than its box"
        assert label.get_fontsize() == 10.5 and fig.get_figwidth() == 6.0
    finally:
        plt.close(fig)


def test_a_no_break_space_keeps_words_together_in_a_box():
    fig, label, _ = a_drawing("tanh(W\u00a0s\u00a0+\u00a0U\u00a0h) of both")
    try:
        with phone_figures._for_a_phone(fig):
            assert label.get_text().split("\n")[0] == "tanh(W\u00a0s\u00a0+\u00a0U\u00a0h)"
    finally:
        plt.close(fig)


def test_a_label_that_fits_its_box_is_left_alone():
    fig, label, _ = a_drawing("fits", width=4.0)
    try:
        with phone_figures._for_a_phone(fig):
            assert label.get_text() == "fits" and fig.get_figheight() == 1.0
    finally:
        plt.close(fig)


def test_only_a_text_in_a_box_of_its_own_figure_is_kept_inside():
    fig, label, box = a_drawing()
    other = plt.figure()
    try:
        with pytest.raises(TypeError, match="matplotlib Text"):
            phone_figures.kept_inside("label", box)
        with pytest.raises(ValueError, match="same figure"):
            phone_figures.kept_inside(other.text(0, 0, "x"), box)
        with pytest.raises(TypeError, match="matplotlib Figure"):
            phone_figures.scaled_as_a_drawing(None)
        with pytest.raises(ValueError, match="dpi"):
            phone_figures.smallest_text_px(fig, dpi=0)
    finally:
        plt.close(fig)
        plt.close(other)


def test_on_a_phone_titles_fit_their_axes_and_crowded_numbers_are_thinned_but_not_words():
    with plots.style():
        fig, axes = plots.figure(1, 2, height=2.4)
    title = "a rather long title for one panel of two"
    for ax, labels in zip(axes, (range(12), [f"word{i}" for i in range(12)])):
        ax.bar(range(12), np.arange(12))
        ax.set_xticks(range(12), labels)
        ax.set_title(title, loc="left")
    try:
        with phone_figures._for_a_phone(fig):
            renderer = fig.canvas.get_renderer()
            for ax in axes:
                assert "\n" in ax._left_title.get_text()
                width = ax._left_title.get_window_extent(renderer).width
                assert width <= ax.get_window_extent(renderer).width
            # matplotlib lists the labels it shows: every second number, every word
            numbers, words = (ax.get_xticklabels() for ax in axes)
            assert [t.get_text() for t in numbers] == [str(i) for i in range(0, 12, 2)]
            assert len(words) == 12
        assert axes[0]._left_title.get_text() == title
        assert len(axes[0].get_xticklabels()) == 12
    finally:
        plt.close(fig)


def test_on_a_phone_x_labels_fit_their_axes_and_no_texts_run_together():
    with plots.style():
        fig, axes = plots.figure(1, 2, height=2.4, sharey=True)
    label = "a long label under one of two panels"
    for ax in axes:
        ax.plot([0, 1], [0, 1])
        ax.set_xlabel(label)
    try:
        # drawn side by side at a phone's width without wrapping, the two labels meet
        fig.set_size_inches(phone_figures.PHONE_WIDTH, 2.4)
        for ax in axes:
            ax.xaxis.label.set_fontsize(phone_figures.PHONE_TEXT)
        assert (label, label) in phone_figures.overlapping_texts(fig)
        fig.set_size_inches(plots.COLUMN, 2.4)
        with phone_figures._for_a_phone(fig):
            renderer = fig.canvas.get_renderer()
            for ax in axes:
                assert "\n" in ax.xaxis.label.get_text()
                width = ax.xaxis.label.get_window_extent(renderer).width
                assert width <= ax.get_window_extent(renderer).width
            assert phone_figures.overlapping_texts(fig) == []
        assert axes[0].xaxis.label.get_text() == label
        _, meta = phone_figures.drawings(fig, bbox_inches="tight")
        assert meta["overlaps"] == [] and meta["phone_overlaps"] == []
    finally:
        plt.close(fig)


def test_texts_count_only_the_tick_labels_drawn_inside_the_limits():
    with plots.style():
        fig, ax = plots.figure(height=2.4)
    ax.plot([0, 1], [0, 1])
    ax.set_xticks([-5, 0, 1, 5], ["far left", "0", "1", "far right"])
    ax.set_xlim(-0.1, 1.1)
    try:
        texts = [t.get_text() for t in phone_figures._texts(fig)]
        assert "0" in texts and "1" in texts
        assert "far left" not in texts and "far right" not in texts
    finally:
        plt.close(fig)


def test_turned_labels_count_as_overlapping_only_where_their_slanted_boxes_meet():
    with plots.style():
        fig, ax = plots.figure(height=2.4)
    words = ["the", "and", "of", "everyone", "has", "right", "in", "one", "shall", "be"]
    ax.bar(range(len(words)), np.arange(len(words)))
    # upright boxes around labels at 60 degrees overlap; the labels themselves do not
    ax.set_xticks(range(len(words)), words, rotation=60)
    try:
        assert phone_figures.overlapping_texts(fig) == []
        ax.text(0.5, 0.5, "one slanted note", rotation=30, transform=ax.transAxes)
        ax.text(0.5, 0.5, "another on it", rotation=30, transform=ax.transAxes)
        assert phone_figures.overlapping_texts(fig) == [("one slanted note", "another on it")]
    finally:
        plt.close(fig)


def test_on_a_phone_words_under_ticks_wrap_into_the_room_between_them():
    with plots.style():
        fig, ax = plots.figure(height=2.8)
    words = ["attention", "gradient", "attention ×\ngradient", "gradient × input", "leave one out"]
    ax.scatter(range(5), range(5))
    ax.set_xticks(range(5), words)
    try:
        with phone_figures._for_a_phone(fig):
            fig.canvas.draw()
            shown = [t.get_text() for t in ax.get_xticklabels()]
            assert "\n" in shown[3] and "\n" in shown[4]  # the two that ran together
            assert phone_figures.overlapping_texts(fig) == []
        assert [t.get_text() for t in ax.get_xticklabels()] == words
    finally:
        plt.close(fig)


def test_on_a_phone_slanted_words_that_meet_stand_upright():
    words = "the and to of everyone has right in one shall be or are no all equal with as law"
    words = [*words.split(), "freedom"]
    with plots.style():
        fig, ax = plots.figure(height=2.8)
    ax.bar(range(len(words)), np.arange(len(words)))
    ax.set_xticks(range(len(words)), words, rotation=60, fontsize=9)
    try:
        assert phone_figures.overlapping_texts(fig) == []  # the column has room
        with phone_figures._for_a_phone(fig):
            assert {t.get_rotation() for t in ax.get_xticklabels()} == {90}
            assert phone_figures.overlapping_texts(fig) == []
        assert {t.get_rotation() for t in ax.get_xticklabels()} == {60}
    finally:
        plt.close(fig)


def test_a_heat_maps_cells_are_found_in_both_drawings_where_their_colours_are():
    """Each cell's centre, placed by the boxes of heatmap_cells, has its value's colour in the
    PNG of the column and of the phone: the published page shows that number on hover."""
    values = np.random.default_rng(0).random((5, 7))
    with plots.style():
        fig, axes = plots.figure(1, 2, height=3)
        plots.heatmap(axes[0], values, list("abcde"), list("ABCDEFG"), "weights")
        axes[1].plot([1, 2, 3])  # a second axes, without a heat map
        column, meta = phone_figures.drawings(fig, bbox_inches="tight")
    for name, png in (("cells", column), ("phone_cells", base64.b64decode(meta["phone"]))):
        image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(float)
        height, width = image.shape[:2]
        (cells,) = json.loads(meta[name])
        assert cells["rows"] == list("abcde") and cells["cols"] == list("ABCDEFG")
        assert (cells["row_axis"], cells["col_axis"]) == ("query", "key")  # glosses dropped
        np.testing.assert_array_equal(phone_figures.cell_values(cells), np.round(values, 3))
        left, top, w, h = cells["box"]
        for i in range(5):
            for j in range(7):
                x = int((left + (j + 0.5) * w / 7) * width)
                y = int((top + (i + 0.5) * h / 5) * height)
                colour = np.array(matplotlib.colormaps["Blues"](values[i, j])[:3]) * 255
                assert np.abs(image[y, x] - colour).max() <= 2, (name, i, j)
        # just outside the box, left of the first column: the axes' frame or the page, not a cell
        outside = image[int((top + h / 2) * height), int((left - 0.01) * width)]
        assert (
            np.abs(outside - np.array(matplotlib.colormaps["Blues"](values[2, 0])[:3]) * 255).max()
            > 2
        )


def test_a_figure_without_heat_maps_carries_no_cells():
    with plots.style():
        fig, ax = plots.figure(height=2)
        ax.plot([1, 2, 3])
        _, meta = phone_figures.drawings(fig, bbox_inches="tight")
    assert "cells" not in meta and "phone_cells" not in meta
    assert phone_figures.heatmap_cells(fig) == []
    with pytest.raises(TypeError, match="fig must be a matplotlib Figure"):
        phone_figures.heatmap_cells("figure")


@pytest.mark.parametrize(
    "values",
    [
        [[0.0, 1.0], [0.5, 0.0005]],  # weights: two digits a cell
        [[-3.2567, 12.0], [0.0, -0.0004]],  # scores of either sign
        [[7.0]],  # one cell, one value: one digit
        [[1e9, -1e9]],  # far apart: seven digits a cell
        [[0.25, float("nan")], [float("inf"), 0.75]],  # cells without a number
        [[float("nan")]],
    ],
)
def test_a_heat_maps_packed_numbers_read_back_as_thousandths(values):
    values = np.array(values)
    packed = phone_figures.packed_cells(values)
    assert set(packed["codes"]) <= set(phone_figures.DIGITS)
    assert len(packed["codes"]) == values.size * packed["digits"]
    read = phone_figures.cell_values(packed)
    finite = np.isfinite(values)
    np.testing.assert_array_equal(np.isnan(read), ~finite)
    np.testing.assert_allclose(read[finite], np.round(values[finite], 3), rtol=0, atol=1e-12)


def test_weights_pack_in_two_characters_a_cell():
    weights = np.random.default_rng(1).dirichlet(np.ones(48), size=48)
    packed = phone_figures.packed_cells(weights)
    assert packed["digits"] == 2 and len(json.dumps(packed)) < 2.05 * weights.size


def test_packing_refuses_what_is_not_a_map_of_numbers():
    with pytest.raises(ValueError, match="values must be an"):
        phone_figures.packed_cells(np.zeros(3))
    with pytest.raises(ValueError, match="values must be an"):
        phone_figures.packed_cells(np.zeros((0, 2)))
    with pytest.raises(ValueError, match="values must lie within"):
        phone_figures.packed_cells([[1e13]])
    with pytest.raises(ValueError, match="packed must be"):
        phone_figures.cell_values({"shape": [1, 1]})
    packed = phone_figures.packed_cells([[0.5, 0.25]])
    with pytest.raises(ValueError, match="packed codes"):
        phone_figures.cell_values(packed | {"codes": packed["codes"][:-1]})
    with pytest.raises(ValueError, match="packed codes"):
        phone_figures.cell_values(packed | {"codes": "!" * len(packed["codes"])})


def test_a_panel_without_an_axis_name_takes_the_other_panels():
    """Stacked panels name their shared axis once: each map's cells are named by it."""
    with plots.style():
        fig, axes = plots.figure(2, 1, height=4)
        for ax in axes:
            plots.heatmap(ax, np.eye(2), ["a", "b"], ["x", "y"], colorbar=False)
        axes[0].set_xlabel("")
        axes[1].set_xlabel("source word")
        axes[1].set_ylabel("")
        fig.canvas.draw()
        cells = phone_figures.heatmap_cells(fig)
    assert [c["col_axis"] for c in cells] == ["source word", "source word"]
    assert [c["row_axis"] for c in cells] == ["query", "query"]  # the top panel's own
    with plots.style():
        fig, ax = plots.figure(height=2)
        plots.heatmap(ax, np.eye(2), ["a", "b"], ["x", "y"], colorbar=False)
        ax.set_xlabel("")
        ax.set_ylabel("")
        fig.canvas.draw()
        (alone,) = phone_figures.heatmap_cells(fig)
    assert (alone["row_axis"], alone["col_axis"]) == ("query", "key")


def test_any_image_can_carry_its_numbers_named_as_the_page_names_them():
    """A map drawn from the bottom up (positional encodings) gives its rows top first; an axis
    named "" leaves the labels to say it; a map whose rows do not read its columns says so."""
    table = np.arange(6.0).reshape(2, 3)
    with plots.style():
        fig, ax = plots.figure(height=2)
        ax.imshow(table, origin="lower")
        plots.readable_cells(
            ax, table[::-1], ["1", "0"], range(3), "dimension", "position", between=", "
        )
        plots.heatmap(
            axes := fig.add_subplot(2, 1, 2),
            np.eye(2),
            ["s 0", "s 1"],
            ["0", "1"],
            colorbar=False,
            row_axis="",
        )
        fig.canvas.draw()
        first, second = phone_figures.heatmap_cells(fig)
    assert (first["row_axis"], first["col_axis"], first["between"]) == (
        "dimension",
        "position",
        ", ",
    )
    np.testing.assert_array_equal(phone_figures.cell_values(first), table[::-1])
    assert first["rows"] == ["1", "0"] and first["cols"] == ["0", "1", "2"]
    assert second["row_axis"] == "" and "between" not in second
    assert axes.attention_cells["row_axis"] == ""


def test_readable_cells_refuses_what_does_not_label_its_values():
    with plots.style():
        fig, ax = plots.figure(height=2)
    with pytest.raises(TypeError, match="ax must be"):
        plots.readable_cells("axes", np.eye(2), "ab", "ab")
    with pytest.raises(TypeError, match="rows must be a list"):
        plots.readable_cells(ax, np.eye(2), "ab", ["a", "b"])
    with pytest.raises(ValueError, match="rows and cols must label"):
        plots.readable_cells(ax, np.eye(2), ["a"], ["a", "b"])
    with pytest.raises(ValueError, match="values must have 2 axes"):
        plots.readable_cells(ax, np.ones(2), ["a", "b"], ["a"])
    with pytest.raises(TypeError, match="row_axis must be"):
        plots.readable_cells(ax, np.eye(2), ["a", "b"], ["a", "b"], row_axis=3)
    with pytest.raises(TypeError, match="between must be"):
        plots.readable_cells(ax, np.eye(2), ["a", "b"], ["a", "b"], between="")
    plt.close(fig)
