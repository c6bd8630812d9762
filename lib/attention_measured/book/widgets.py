"""Live widgets and their static twins: controls, frames and HTML, whatever they show (every
Part).

A widget is three things: the choices a reader can make (one :class:`Control` each, declared
once for both forms), ``render(**choice)`` drawing a matplotlib figure, and
``describe(**choice)`` giving the numbers shown beneath it.

- :func:`live` makes each control its ipywidgets control; it needs a running kernel.
- :func:`static_twin` renders every combination of the controls' twin values in advance and
  returns HTML whose sliders swap the pictures and numbers in the browser,
  with no kernel and nothing fetched from elsewhere.
- :func:`explorer` is either, as its ``static`` flag asks.

This module knows nothing of attention: each Part's explorers
(:mod:`~attention_measured.book.marked_step_explorers`,
:mod:`~attention_measured.book.cloze_explorers`,
:mod:`~attention_measured.book.flavour_explorers`,
:mod:`~attention_measured.book.translation_explorers`,
:mod:`~attention_measured.book.explanation_explorers`,
:mod:`~attention_measured.book.language_explorers`) supply the three things.
"""

from __future__ import annotations

import base64
import hashlib
import html
import inspect
import io
import itertools
import json
import pickle
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

from ..machinery.cache import remembered
from . import phone_figures

if TYPE_CHECKING:
    import IPython.display
    import ipywidgets


SLIDER_MOST = 1000


TWIN_MOST = 400


@dataclass
class Control:
    """One choice a reader makes, declared once for both forms of a widget.

    - ``label``: shown beside the control, live and static alike;
    - ``values``: every value the live widget offers, a list or a range;
    - ``default``: the value it starts at, live and static (if None, the first twin value, or
      the first value);
    - ``twin``: the values the static twin renders in advance, when not all of ``values``
      (a twin of one value shows no slider and draws with that value).

    :meth:`widget` makes the live control: a dropdown when the values are names (strings), a
    slider over a range of whole numbers, a box to type into when the range is longer than
    :data:`SLIDER_MOST` (a seed), and a dropdown for any other list.
    """

    label: str
    values: Sequence
    default: object = None
    twin: Sequence | None = None

    def __post_init__(self):
        if not isinstance(self.label, str):
            raise TypeError(f"label must be text, got {type(self.label).__name__}")
        if isinstance(self.values, (str, bytes)) or not hasattr(self.values, "__iter__"):
            raise TypeError(f"values of {self.label!r} must be a list or a range")
        if not isinstance(self.values, range):
            self.values = list(self.values)
        if not self.values:
            raise ValueError(f"values of control {self.label!r} must hold at least one value")
        if self.twin is not None:
            self.twin = list(self.twin)
        if self.default is None:
            self.default = (self.twin or self.values)[0]
        if isinstance(self.default, bool) and not any(isinstance(v, bool) for v in self.values):
            raise TypeError(
                f"default of {self.label!r} must be one of its values, got {self.default!r}"
            )
        if self.default not in self.values:
            raise ValueError(f"default {self.default!r} of {self.label!r} is not among its values")
        if self.twin is not None:
            outside = [v for v in self.twin if v not in self.values]
            if not self.twin or outside:
                raise ValueError(
                    f"the twin values of {self.label!r} must be some of its values, got {outside}"
                )
            if self.default not in self.twin:
                raise ValueError(
                    f"default {self.default!r} of {self.label!r} is not among its twin values"
                )

    @property
    def shown(self) -> list:
        """The values the static twin renders."""
        values = self.values if self.twin is None else self.twin
        if len(values) > TWIN_MOST:
            raise ValueError(
                f"a static twin cannot render {len(values)} values of {self.label!r}; "
                "give the control the twin values to render"
            )
        return list(values)

    def widget(self) -> ipywidgets.Widget:
        """The live ipywidgets control (needs ipywidgets, as a running kernel has)."""
        import ipywidgets as w

        common = {"description": self.label, "style": {"description_width": "initial"}}
        values = self.values
        if isinstance(values, range) and values.step == 1:
            low, high = values.start, values.stop - 1
            if len(values) > SLIDER_MOST:
                return w.BoundedIntText(self.default, min=low, max=high, **common)
            return w.IntSlider(self.default, low, high, **common)
        return w.Dropdown(options=list(values), value=self.default, **common)


FRAME_WIDTH = 4.6


FRAME_DPI = 110


def _png(fig, dpi: int, width: float = FRAME_WIDTH) -> tuple[str, float, list[dict]]:
    """(the figure, redrawn ``width`` inches wide at its own height, as a PNG data URI reduced to
    a 64-colour palette (about a third of the bytes); the height of its smallest text in the
    PNG's pixels; its heat maps' cells in the PNG, :func:`.phone_figures.heatmap_cells`)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    fig.set_size_inches(width, fig.get_figheight())
    fig.set_dpi(dpi)
    for part in ("facecolor", "edgecolor"):  # the colours savefig would paint it in
        colour = matplotlib.rcParams[f"savefig.{part}"]
        if colour != "auto":
            getattr(fig, f"set_{part}")(colour)
    # one drawing, its layout included, read straight from the canvas: savefig would lay the
    # figure out in a drawing of its own first, then encode a PNG that is decoded again here
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    size = canvas.get_width_height()
    image = Image.frombuffer("RGBA", size, canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    text_px = phone_figures.smallest_text_px(fig, dpi, drawn=True)
    cells = phone_figures.heatmap_cells(fig)
    plt.close(fig)
    image = image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    small = io.BytesIO()
    image.save(small, format="PNG", optimize=True)
    uri = "data:image/png;base64," + base64.b64encode(small.getvalue()).decode("ascii")
    return uri, text_px, cells


def static_twin(
    name: str,
    controls: dict[str, Control],
    render: Callable,
    describe: Callable,
    alt: str,
    dpi: int = FRAME_DPI,
) -> IPython.display.HTML:
    """Pre-render every combination of ``controls`` and return kernel-free HTML.

    name: a short identifier, unique on the page.  render(**choice) returns a figure;
    describe(**choice) returns text.  The HTML holds one PNG per combination (data URIs) and a
    few lines of JavaScript that show the one the sliders select.  The frames are sized for a
    phone (:data:`FRAME_WIDTH`): a render function should stack its panels, not set them side by
    side.  The image records the smallest text of all its frames, in their pixels, as
    ``data-text-px``: the browser tests require 8 CSS px of it on a 390 px phone.  Where the
    frames hold heat maps (:func:`.plots.heatmap`), each frame's cells go with it, and the image
    carries the present frame's as ``data-cells``, so that the published page shows a cell's
    number on hover as it does for any figure (:func:`.phone_figures.heatmap_cells`).

    Where ``render`` and ``describe`` are functions of this package (each explorer's), the HTML
    is remembered as a trained model is (:func:`~.cache.remembered`):
    filed under their modules' code, and also under matplotlib's and Pillow's versions, the style in
    force and the package's stored data.  Any other functions are drawn on every call.
    """
    from IPython.display import HTML

    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9-]*", name):
        raise ValueError(f"twin name must be lowercase letters, digits and hyphens, got {name!r}")
    _check_parts(controls, render, describe)
    if not isinstance(alt, str):
        raise TypeError(f"alt must be the text that describes the figure, got {type(alt).__name__}")
    if isinstance(dpi, bool) or not isinstance(dpi, (int, np.integer)) or not 50 <= dpi <= 600:
        raise ValueError(f"dpi must be a whole number of dots per inch from 50 to 600, got {dpi!r}")
    if _of_the_book(render) and _of_the_book(describe):  # remembered, filed under their code
        return HTML(_twin_html(name, controls, render, describe, alt, dpi, _drawing()))
    # a reader's own functions: drawn every time, since their code can change under one name
    return HTML(_twin_html.uncached(name, controls, render, describe, alt, dpi, drawing=None))


def _of_the_book(function) -> bool:
    """Whether ``function`` is a function of this package's modules, which the cache files a
    result under (a lambda or a closure, a reader's function or a partial is not)."""
    module = getattr(function, "__module__", None) or ""
    qualname = getattr(function, "__qualname__", "")
    if not module.startswith("attention_measured.") or "<" in qualname:
        return False
    try:
        pickle.dumps(function)
    except (pickle.PicklingError, AttributeError, TypeError):
        return False
    return True


def _drawing() -> tuple:
    """What a twin's frames depend on besides the code: matplotlib's and Pillow's versions,
    the style in force and the data files of the package (the stored sweeps a describe reads)."""
    import PIL

    style = hashlib.sha256(repr(sorted(matplotlib.rcParams.items())).encode()).hexdigest()
    data = hashlib.sha256()
    for path in sorted(Path(__file__).parents[1].rglob("*.json")):
        data.update(path.name.encode() + b"\0" + path.read_bytes())
    return matplotlib.__version__, PIL.__version__, style, data.hexdigest()


@remembered
def _twin_html(name, controls, render, describe, alt, dpi, drawing) -> str:
    """The HTML of :func:`static_twin`, its arguments checked; ``drawing`` (:func:`_drawing`, or
    None when nothing is remembered) is part of the call only so that a new matplotlib, style or
    stored sweep draws afresh."""
    keys = list(controls)
    shown = {k: controls[k].shown for k in keys}
    frames, texts, text_px, cells = [], [], [], []
    for combo in itertools.product(*shown.values()):
        choice = dict(zip(keys, combo))
        frame, px, maps = _png(render(**choice), dpi)
        frames.append(frame)
        text_px.append(px)
        cells.append(maps)
        texts.append(describe(**choice))
    keys = [k for k in keys if len(shown[k]) > 1]  # a control of one value gets no slider
    sizes = [len(shown[k]) for k in keys]
    labels = [[str(v) for v in shown[k]] for k in keys]
    starts = [shown[k].index(controls[k].default) for k in keys]
    sliders = "".join(
        f'<label style="margin-right:1.5em">{html.escape(controls[k].label)} '
        f'<input type="range" min="0" max="{n - 1}" step="1" value="{s}" data-control="{i}" '
        f'aria-label="{html.escape(controls[k].label)}"> <output></output></label>'
        for i, (k, n, s) in enumerate(zip(keys, sizes, starts))
    )
    first = int(np.ravel_multi_index(starts, sizes)) if sizes else 0
    # the first frame is in the page once, as the image's own picture (what the page shows
    # where JavaScript is off), not again among the frames the sliders swap in
    data = {"frames": frames[:first] + [None] + frames[first + 1 :], "first": first}
    data |= {"texts": texts, "sizes": sizes, "labels": labels}
    # frames with heat maps: each frame's cells, which the page's cells.js reads from the image
    # as it does a figure's, so that hovering a cell shows its number
    heat_maps = any(cells)
    if heat_maps:
        data["cells"] = [_shortened(maps) for maps in cells]
    data = json.dumps(data, separators=(",", ":"))
    box = "border:1px solid #ccc;padding:0.6em;background:#fff;color:#222"
    numbers = "background:#f6f6f6;color:#222;margin:0.3em 0 0 0;white-space:pre;overflow-x:auto"
    figure = f"display:block;width:100%;max-width:{round(FRAME_WIDTH * dpi)}px;height:auto"
    return f"""<div class="static-twin" id="twin-{name}" style="{box}">
<div class="twin-controls">{sliders}</div>
<img class="twin-figure" alt="{html.escape(alt)}" style="{figure}" src="{frames[first]}"
 data-text-px="{round(min(text_px), 2)}"{' data-cells="[]"' if heat_maps else ""}>
<pre class="twin-numbers" style="{numbers}">{html.escape(texts[first])}</pre>
<script type="application/json" class="twin-data">{data}</script>
<script>
(function () {{
  var root = document.getElementById("twin-{name}");
  var data = JSON.parse(root.querySelector(".twin-data").textContent);
  var inputs = root.querySelectorAll("input[data-control]");
  var figure = root.querySelector(".twin-figure");
  data.frames[data.first] = figure.getAttribute("src");
  function show() {{
    var index = 0;
    inputs.forEach(function (input, i) {{
      index = index * data.sizes[i] + Number(input.value);
      input.parentNode.querySelector("output").textContent = data.labels[i][Number(input.value)];
    }});
    figure.src = data.frames[index];
    if (data.cells) figure.setAttribute("data-cells", JSON.stringify(data.cells[index]));
    root.querySelector(".twin-numbers").textContent = data.texts[index];
  }}
  inputs.forEach(function (input) {{ input.addEventListener("input", show); }});
  show();
}})();
</script>
</div>"""


def _shortened(maps: list[dict]) -> list[dict]:
    """A frame's heat map cells (:func:`.phone_figures.heatmap_cells`) without what cells.js
    assumes when it is missing: columns named as the rows, rows and columns without names
    (numbered), axes named "query" and "key"."""
    short = []
    for cells in maps:
        cells = dict(cells)
        if cells["cols"] == cells["rows"]:
            del cells["cols"]
        if not any(cells["rows"]):
            del cells["rows"]
        for axis, name in (("row_axis", "query"), ("col_axis", "key")):
            if cells[axis] == name:
                del cells[axis]
        short.append(cells)
    return short


def _check_parts(controls, render, describe) -> None:
    """Refuse, naming it, a widget part of the wrong kind."""
    if not isinstance(controls, dict) or not controls:
        raise TypeError("controls must be a dict of at least one Control, by argument name")
    for key, control in controls.items():
        if not isinstance(control, Control):
            raise TypeError(f"controls[{key!r}] must be a Control, got {type(control).__name__}")
    for name, function in (("render", render), ("describe", describe)):
        if not callable(function):
            raise TypeError(
                f"{name} must be a function of the choices, got {type(function).__name__}"
            )
        try:
            inspect.signature(function).bind(**dict.fromkeys(controls))
        except TypeError as error:
            raise ValueError(
                f"controls must name {name}'s arguments: {', '.join(controls)} do not fit it "
                f"({error})"
            ) from None
        except ValueError:  # a function whose signature cannot be read: let it run
            pass


def live(controls: dict[str, Control], render: Callable, describe: Callable):
    """ipywidgets controls driving ``render`` and ``describe`` with a running kernel, each made
    from its :class:`Control` by :meth:`Control.widget`.

    Each change draws a new figure and closes only that one, never the reader's own.
    """
    _check_parts(controls, render, describe)
    import ipywidgets as widgets
    from IPython.display import display

    out = widgets.Output()

    def update(**choice):
        with out:
            out.clear_output(wait=True)
            fig = render(**choice)
            with phone_figures.none_for_a_widget():  # drawn for the reader's screen only
                display(fig)
            plt.close(fig)
            print(describe(**choice))

    made = {key: control.widget() for key, control in controls.items()}
    box = widgets.VBox([widgets.HBox(list(made.values())), out])
    widgets.interactive_output(update, made)
    return box


def explorer(
    name: str,
    controls: dict[str, Control],
    render: Callable,
    describe: Callable,
    alt: str,
    static: bool,
    dpi: int = FRAME_DPI,
    live_render: Callable | None = None,
):
    """One explorer from one list of choices: its :func:`static_twin` if ``static``, else
    :func:`live` (drawn by ``live_render`` where the live widget does more, such as train with a
    progress bar)."""
    if not isinstance(static, (bool, np.bool_)):  # "False" is a string, so it would be true
        raise TypeError(f"static must be True or False, got {static!r}")
    if static:
        return static_twin(name, controls, render, describe, alt=alt, dpi=dpi)
    return live(controls, live_render or render, describe)
