"""The static twins' frames: one drawing read from the canvas, against savefig's route.

`widgets._png` draws each frame once, its layout included, and reads the pixels from the canvas.
`savefig` would lay the frame out in a drawing of its own first, then encode a PNG that is
decoded again before the palette is reduced.  This times one twin of Part I and one of Part V
both ways, side by side, and checks that the two give the same page, byte for byte.
"""

import base64
import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import matplotlib.pyplot as plt  # noqa: E402
from PIL import Image  # noqa: E402
from timing import best_of  # noqa: E402

from attention_measured.book import (
    explanation_explorers,
    marked_step_explorers,
    phone_figures,
    plots,
    widgets,
)

TWINS = {
    "Part I, pick an example": marked_step_explorers.pick_an_example,
    "Part V, rank an example": explanation_explorers.rank_an_example,
}


def through_savefig(fig, dpi, width=widgets.FRAME_WIDTH):
    """The frame as savefig makes it: a layout drawing, the drawing, a PNG decoded again."""
    fig.set_size_inches(width, fig.get_figheight())
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    text_px = phone_figures.smallest_text_px(fig, dpi, drawn=True)
    plt.close(fig)
    image = Image.open(buffer).convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    small = io.BytesIO()
    image.save(small, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(small.getvalue()).decode("ascii"), text_px


def main() -> None:
    plots.use_style()
    print("Static twins: every frame rendered (seconds, best of 2)")
    print(f"  {'':<28}{'one drawing':>13}{'savefig':>10}{'ratio':>8}  same page")
    own = widgets._png
    # a twin's page is remembered once drawn (widgets.static_twin): draw it every time here
    widgets._twin_html = widgets._twin_html.uncached
    for name, twin in TWINS.items():
        fast = best_of(lambda twin=twin: twin(static=True), 2)
        page = twin(static=True).data
        widgets._png = through_savefig
        try:
            slow = best_of(lambda twin=twin: twin(static=True), 2)
            same = twin(static=True).data == page
        finally:
            widgets._png = own
        print(f"  {name:<28}{fast:11.1f} s{slow:8.1f} s{slow / fast:7.2f}x  {same}")


if __name__ == "__main__":
    main()
