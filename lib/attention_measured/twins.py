"""Live widgets and their static twins: controls, frames and HTML, whatever they show (every
Part).

A widget is three things: the choices a reader can make (one list of values per control),
``render(**choice)`` drawing a matplotlib figure, and ``describe(**choice)`` giving the numbers
shown beneath it.

- :func:`live` wires them to ipywidgets controls; it needs a running kernel.
- :func:`static_twin` renders every combination of choices in advance and
  returns HTML whose sliders swap the pictures and numbers in the browser,
  with no kernel and nothing fetched from elsewhere.

This module knows nothing of attention: each Part's explorers
(:mod:`~attention_measured.lesson_explorers`,
:mod:`~attention_measured.udhr_explorers`,
:mod:`~attention_measured.taxonomy_explorers`,
:mod:`~attention_measured.translation_explorers`,
:mod:`~attention_measured.explanation_explorers`) supply the three things.
"""

from __future__ import annotations

import base64
import html
import io
import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np

if TYPE_CHECKING:
    import IPython.display
    import ipywidgets


@dataclass
class Control:
    """One slider: its label, the values it can take, and the value it starts at."""

    label: str
    values: list
    default: object = None

    def __post_init__(self):
        if not self.values:
            raise ValueError(f"control {self.label!r} needs at least one value")
        if self.default is None:
            self.default = self.values[0]
        if self.default not in self.values:
            raise ValueError(f"default {self.default!r} of {self.label!r} is not among its values")


FRAME_WIDTH = 4.6
"""Inches: a twin's frames are drawn this wide, at :data:`FRAME_DPI`, so that shrunk to a phone's
width (about 340 px) their 9-point text stays about 9 px tall."""

FRAME_DPI = 110


def _png(fig, dpi: int, width: float = FRAME_WIDTH) -> str:
    """The figure, redrawn ``width`` inches wide at its own height, as a PNG data URI reduced to a
    64-colour palette (about a third of the bytes)."""
    from PIL import Image

    fig.set_size_inches(width, fig.get_figheight())
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    plt.close(fig)
    image = Image.open(buffer).convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    small = io.BytesIO()
    image.save(small, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(small.getvalue()).decode("ascii")


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
    side.
    """
    from IPython.display import HTML

    if not re.fullmatch(r"[a-z][a-z0-9-]*", name):
        raise ValueError(f"twin name must be lowercase letters, digits and hyphens, got {name!r}")
    keys = list(controls)
    frames, texts = [], []
    for combo in itertools.product(*(controls[k].values for k in keys)):
        choice = dict(zip(keys, combo))
        frames.append(_png(render(**choice), dpi))
        texts.append(describe(**choice))
    sizes = [len(controls[k].values) for k in keys]
    labels = [[str(v) for v in controls[k].values] for k in keys]
    starts = [controls[k].values.index(controls[k].default) for k in keys]
    sliders = "".join(
        f'<label style="margin-right:1.5em">{html.escape(controls[k].label)} '
        f'<input type="range" min="0" max="{n - 1}" step="1" value="{s}" data-control="{i}" '
        f'aria-label="{html.escape(controls[k].label)}"> <output></output></label>'
        for i, (k, n, s) in enumerate(zip(keys, sizes, starts))
    )
    data = json.dumps({"frames": frames, "texts": texts, "sizes": sizes, "labels": labels})
    first = int(np.ravel_multi_index(starts, sizes))
    box = "border:1px solid #ccc;padding:0.6em;background:#fff;color:#222"
    numbers = "background:#f6f6f6;color:#222;margin:0.3em 0 0 0;white-space:pre;overflow-x:auto"
    figure = f"display:block;width:100%;max-width:{round(FRAME_WIDTH * dpi)}px;height:auto"
    return HTML(f"""<div class="static-twin" id="twin-{name}" style="{box}">
<div class="twin-controls">{sliders}</div>
<img class="twin-figure" alt="{html.escape(alt)}" style="{figure}" src="{frames[first]}">
<pre class="twin-numbers" style="{numbers}">{html.escape(texts[first])}</pre>
<script type="application/json" class="twin-data">{data}</script>
<script>
(function () {{
  var root = document.getElementById("twin-{name}");
  var data = JSON.parse(root.querySelector(".twin-data").textContent);
  var inputs = root.querySelectorAll("input[data-control]");
  function show() {{
    var index = 0;
    inputs.forEach(function (input, i) {{
      index = index * data.sizes[i] + Number(input.value);
      input.parentNode.querySelector("output").textContent = data.labels[i][Number(input.value)];
    }});
    root.querySelector(".twin-figure").src = data.frames[index];
    root.querySelector(".twin-numbers").textContent = data.texts[index];
  }}
  inputs.forEach(function (input) {{ input.addEventListener("input", show); }});
  show();
}})();
</script>
</div>""")


def live(controls: dict[str, ipywidgets.Widget], render: Callable, describe: Callable):
    """ipywidgets controls driving ``render`` and ``describe`` with a running kernel.

    Each change draws a new figure and closes only that one, never the reader's own.
    """
    import ipywidgets as widgets
    from IPython.display import display

    out = widgets.Output()

    def update(**choice):
        with out:
            out.clear_output(wait=True)
            fig = render(**choice)
            display(fig)
            plt.close(fig)
            print(describe(**choice))

    box = widgets.VBox([widgets.HBox(list(controls.values())), out])
    widgets.interactive_output(update, controls)
    return box
