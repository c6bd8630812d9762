"""The twin mechanism: static HTML with every combination; a live widget tidies only its own."""

import json
import re

import matplotlib.pyplot as plt
import pytest

from attention_measured.book import plots, widgets


def tiny_render(a, b):
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.bar([0, 1], [a, b])
    return fig


def twin_data(html):
    """The twin's data, its first frame put back from the image among the others."""
    found = re.search(
        r'<script type="application/json" class="twin-data">(.*?)</script>', html, re.S
    )
    data = json.loads(found.group(1))
    assert data["frames"][data["first"]] is None, "the first frame is in the page twice"
    data["frames"][data["first"]] = re.search(r'class="twin-figure"[^>]* src="([^"]+)"', html)[1]
    return data


def test_static_twin_renders_every_combination_in_slider_order():
    controls = {"a": widgets.Control("first", [1, 2, 3], 2), "b": widgets.Control("second", [5, 6])}
    html = widgets.static_twin(
        "tiny", controls, tiny_render, lambda a, b: f"a={a} b={b}", alt="tiny bars"
    ).data
    data = twin_data(html)
    assert data["sizes"] == [3, 2]
    assert len(data["frames"]) == 6 and len(set(data["frames"])) == 6  # every picture differs
    assert data["texts"] == [f"a={a} b={b}" for a in (1, 2, 3) for b in (5, 6)]
    assert all(f.startswith("data:image/png;base64,") for f in data["frames"])
    assert 'id="twin-tiny"' in html and 'alt="tiny bars"' in html
    assert "a=2 b=5" in html.split("twin-numbers")[1]  # starts at the defaults
    assert "http" not in html  # nothing fetched from elsewhere


def test_static_twin_frames_are_sized_for_a_phone():
    import base64
    import io

    from PIL import Image

    html = widgets.static_twin(
        "tiny",
        {"a": widgets.Control("a", [1])},
        lambda a: tiny_render(a, 2),
        lambda a: "",
        alt="bars",
    ).data
    frame = twin_data(html)["frames"][0].split(",", 1)[1]
    width, height = Image.open(io.BytesIO(base64.b64decode(frame))).size
    assert width == round(widgets.FRAME_WIDTH * widgets.FRAME_DPI) and height == widgets.FRAME_DPI
    assert f"max-width:{width}px" in html  # never blown up past its own pixels


def test_static_twin_refuses_bad_names_and_defaults():
    with pytest.raises(ValueError, match="twin name"):
        widgets.static_twin("Bad Name", {"a": widgets.Control("a", [1])}, tiny_render, str, alt="")
    with pytest.raises(ValueError, match="not among its values"):
        widgets.Control("a", [1, 2], default=3)
    with pytest.raises(ValueError, match="at least one value"):
        widgets.Control("a", [])


def test_a_control_declared_once_becomes_the_live_widget_its_values_ask_for():
    import ipywidgets

    names = widgets.Control("model", ["dot", "general"], "general").widget()
    assert isinstance(names, ipywidgets.Dropdown) and names.options == ("dot", "general")
    assert names.value == "general" and names.description == "model"
    slider = widgets.Control("step", range(12), 11, twin=[0, 11]).widget()
    assert isinstance(slider, ipywidgets.IntSlider) and (slider.max, slider.value) == (11, 11)
    seed = widgets.Control("seed", range(2**31), twin=[0, 1]).widget()
    assert isinstance(seed, ipywidgets.BoundedIntText) and seed.max == 2**31 - 1
    listed = widgets.Control("seed", [0, 2, 5]).widget()
    assert isinstance(listed, ipywidgets.Dropdown) and listed.options == (0, 2, 5)


def test_the_static_twin_renders_only_the_twin_values_and_hides_a_fixed_one():
    controls = {
        "a": widgets.Control("first", range(100), 2, twin=[1, 2, 3]),
        "b": widgets.Control("second", [5, 6], twin=[6]),
    }
    seen = []

    def describe(a, b):
        seen.append((a, b))
        return f"a={a} b={b}"

    html = widgets.static_twin("tiny", controls, tiny_render, describe, alt="bars").data
    assert seen == [(1, 6), (2, 6), (3, 6)]
    assert twin_data(html)["sizes"] == [3] and html.count('type="range"') == 1
    assert "a=2 b=6" in html.split("twin-numbers")[1]


def test_controls_and_explorers_refuse_what_cannot_be_drawn():
    with pytest.raises(ValueError, match="twin values of 'a' must be some of its values"):
        widgets.Control("a", range(3), twin=[1, 7])
    with pytest.raises(ValueError, match="not among its twin values"):
        widgets.Control("a", range(3), 0, twin=[1, 2])
    with pytest.raises(ValueError, match="give the control the twin values"):
        huge = {"a": widgets.Control("a", range(2**31))}
        widgets.static_twin("t", huge, lambda a: tiny_render(a, 1), str, alt="")
    with pytest.raises(TypeError, match="static"):
        one = {"a": widgets.Control("a", [1])}
        widgets.explorer("t", one, lambda a: tiny_render(a, 1), str, alt="", static="no")


def test_live_closes_its_own_figures_and_no_other():
    import ipywidgets

    mine = plt.figure()  # a figure the reader has open
    drawn = []

    def render(a):
        fig = tiny_render(a, 1)
        drawn.append(fig)
        return fig

    box = widgets.live({"a": widgets.Control("a", range(4), 1)}, render, lambda a: f"a={a}")
    slider = box.children[0].children[0]
    assert isinstance(slider, ipywidgets.IntSlider) and (slider.min, slider.max) == (0, 3)
    slider.value = 2  # the reader moves the slider
    try:
        assert len(drawn) == 2
        assert all(not plt.fignum_exists(f.number) for f in drawn)
        assert plt.fignum_exists(mine.number)
    finally:
        plt.close(mine)


def test_importing_plots_changes_no_style_and_style_is_restored():
    before = dict(plt.rcParams)
    import importlib

    importlib.reload(plots)
    assert dict(plt.rcParams) == before
    with plots.style():
        assert plt.rcParams["figure.facecolor"] == "white"
        assert plt.rcParams["axes.spines.top"] is False
    assert dict(plt.rcParams) == before

    @plots.styled
    def draw():
        return plt.rcParams["axes.titleweight"]

    assert draw() == "bold" and plt.rcParams["axes.titleweight"] == before["axes.titleweight"]


def test_drawing_in_style_leaves_the_notebook_showing_figures():
    """A styled drawing that first loads the backend must not undo what the backend set up."""
    import matplotlib

    interactive = matplotlib.is_interactive()
    matplotlib.interactive(not interactive)  # as if a backend had switched it on inside the drawing
    try:
        with plots.style():
            matplotlib.interactive(interactive)
        assert matplotlib.is_interactive() == interactive
    finally:
        matplotlib.interactive(interactive)


def test_a_control_and_its_render_must_fit():
    with pytest.raises(TypeError, match="default of 'a' must be one of its values"):
        widgets.Control("a", range(3), True)
    with pytest.raises(ValueError, match="controls must name render's arguments"):
        widgets.static_twin("t", {"a": widgets.Control("a", [1])}, tiny_render, str, alt="")


def test_a_twin_records_the_smallest_text_of_all_its_frames():
    def render(size):
        fig, ax = plt.subplots(figsize=(1, 1))
        ax.set_title("t", fontsize=size)
        ax.set_xticks([])
        ax.set_yticks([])
        return fig

    controls = {"size": widgets.Control("size", [12, 6], 12)}
    html = widgets.static_twin("sizes", controls, render, lambda size: "", alt="t", dpi=72).data
    # the frame shown first has 12-point text; the other frame's 6 points are the smallest
    assert 'data-text-px="6.0"' in html


def bars(a):
    return tiny_render(a, 1)


def words(a):
    return f"a={a}"


def test_a_frame_is_the_picture_savefig_draws():
    import base64
    import io

    import numpy as np
    from PIL import Image

    # a figure colour savefig paints over, as the book's style has it
    with plt.rc_context({"figure.facecolor": "#dddddd", "savefig.facecolor": "white"}):
        fig = tiny_render(1, 2)
        fig.set_size_inches(widgets.FRAME_WIDTH, fig.get_figheight())
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=widgets.FRAME_DPI)
        plt.close(fig)
        frame, _, _ = widgets._png(tiny_render(1, 2), widgets.FRAME_DPI)
    saved = Image.open(buffer).convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    drawn = Image.open(io.BytesIO(base64.b64decode(frame.split(",", 1)[1])))
    assert drawn.size == saved.size
    assert np.array_equal(np.asarray(drawn.convert("RGB")), np.asarray(saved.convert("RGB")))


def test_a_twin_of_the_books_functions_is_drawn_once_and_any_other_every_time(monkeypatch):
    monkeypatch.delenv("ATTENTION_MEASURED_CACHE", raising=False)  # memory only
    for function in (bars, words):  # as if they were an explorer's, in the package
        monkeypatch.setattr(function, "__module__", "attention_measured.book.widgets")
        monkeypatch.setattr(widgets, function.__name__, function, raising=False)
    widgets._twin_html.forget()
    drawn = []
    png = widgets._png
    monkeypatch.setattr(widgets, "_png", lambda fig, dpi: drawn.append(dpi) or png(fig, dpi))
    controls = {"a": widgets.Control("a", [1, 2])}

    first = widgets.static_twin("tiny", controls, bars, words, alt="bars").data
    assert len(drawn) == 2
    assert widgets.static_twin("tiny", controls, bars, words, alt="bars").data == first
    assert len(drawn) == 2  # remembered
    widgets.static_twin("tiny", controls, bars, words, alt="other bars")
    assert len(drawn) == 4  # another call
    with plt.rc_context({"font.size": 5}):
        widgets.static_twin("tiny", controls, bars, words, alt="bars")
    assert len(drawn) == 6  # another style
    for _ in range(2):
        widgets.static_twin("tiny", controls, bars, lambda a: "mine", alt="bars")
    assert len(drawn) == 10  # a reader's function is drawn every time


def test_only_the_books_own_functions_are_remembered():
    from attention_measured.book import flavour_explorers

    assert widgets._of_the_book(flavour_explorers._render_one_seed)
    assert not widgets._of_the_book(tiny_render)  # a module outside the package
    assert not widgets._of_the_book(lambda a: a)

    def local(a):
        return a

    assert not widgets._of_the_book(local)


def heat_render(a):
    import numpy as np

    fig, ax = plt.subplots(figsize=(3, 3))
    plots.heatmap(ax, np.eye(3) * a, list("abc"), list("xyz"), colorbar=False)
    return fig


def test_a_twins_frames_carry_their_heat_maps_cells_where_the_colours_are():
    """Each frame of a twin with heat maps carries its cells (the page's cells.js reads them
    from the image as the sliders set them); a cell's centre has its value's colour."""
    import base64
    import io

    import matplotlib
    import numpy as np
    from PIL import Image

    from attention_measured.book import phone_figures

    html = widgets.static_twin(
        "heat", {"a": widgets.Control("a", [0.25, 1.0])}, heat_render, lambda a: "", alt="map"
    ).data
    data = twin_data(html)
    assert 'data-cells="[]"' in html and 'setAttribute("data-cells"' in html
    assert len(data["cells"]) == 2
    for a, frame, (cells,) in zip((0.25, 1.0), data["frames"], data["cells"]):
        assert cells["rows"] == list("abc") and cells["cols"] == list("xyz")
        assert "row_axis" not in cells and "col_axis" not in cells  # cells.js: query and key
        np.testing.assert_array_equal(phone_figures.cell_values(cells), np.eye(3) * a)
        png = base64.b64decode(frame.split(",", 1)[1])
        image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(float)
        height, width = image.shape[:2]
        left, top, w, h = cells["box"]
        for i in range(3):
            for j in range(3):
                x = int((left + (j + 0.5) * w / 3) * width)
                y = int((top + (i + 0.5) * h / 3) * height)
                colour = np.array(matplotlib.colormaps["Blues"](a * (i == j))[:3]) * 255
                assert np.abs(image[y, x] - colour).max() <= 8, (a, i, j)  # a 64-colour palette


def test_a_twin_without_heat_maps_carries_no_cells():
    html = widgets.static_twin(
        "bars",
        {"a": widgets.Control("a", [1, 2])},
        lambda a: tiny_render(a, 1),
        lambda a: "",
        alt="bars",
    ).data
    assert "cells" not in twin_data(html) and "data-cells" not in html.split("<script")[0]


def test_a_twin_leaves_out_the_names_cells_js_assumes():
    maps = [
        {"rows": ["a", "b"], "cols": ["a", "b"], "row_axis": "query", "col_axis": "key"},
        {"rows": ["", ""], "cols": ["", "", ""], "row_axis": "step", "col_axis": "key"},
        {"rows": ["", ""], "cols": ["", ""], "row_axis": "query", "col_axis": "word"},
    ]
    assert widgets._shortened(maps) == [
        {"rows": ["a", "b"]},
        {"cols": ["", "", ""], "row_axis": "step"},
        {"col_axis": "word"},
    ]
    assert maps[0]["cols"] == ["a", "b"]  # the frame's own cells are left as they were
