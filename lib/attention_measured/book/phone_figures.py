"""Every figure a page shows, drawn twice: for the text column and for a phone (every Part).

A figure drawn for the column (:data:`plots.COLUMN`, 6.7 in at 100 dpi) is shown about half
its size on a 390 px phone, so its 9-point text would be 6 px tall there.  So when a page
shows a figure, its output carries two drawings of it: the column's PNG, as Jupyter shows
it, and in the output's metadata a phone variant, the same figure redrawn at most
:data:`PHONE_WIDTH` inches wide with no text below :data:`PHONE_TEXT` points, or one the
page draws itself (:func:`drawn_for_a_phone`) where narrowing would not do.  A diagram
(:func:`scaled_as_a_drawing`) is scaled whole instead, and the labels it keeps inside its boxes
(:func:`kept_inside`) are rewrapped to fit them.  The book's
build serves the variant to narrow screens through ``<picture>`` (``_ext/phone_figures.py``).
Each drawing records the height of its smallest text in image pixels, which the browser tests
turn into CSS pixels on the screen: at least 8 on a phone.

Jupyter, Colab and nbval ignore the metadata; a live widget draws only for the screen it is
on, inside :func:`plots.style`, and makes no variant.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import io
import json
import re
import textwrap
import warnings
from collections.abc import Callable

import matplotlib
import matplotlib.text
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter
from PIL import Image

PHONE_WIDTH = 4.6  # inches: about 480 px with a tight box, shown in 358 px at 390 px (0.75)


PHONE_TEXT = 8.5  # points: 11.8 px in the image, about 8.8 CSS px on that phone


DPI = 100


LINE = 34  # characters: a longer axis label or title is wrapped on a phone


_drawing_for_a_widget = False


def smallest_text_px(fig: Figure, dpi: float = DPI, drawn: bool = False) -> float:
    """The height (font size) of the figure's smallest visible text, in pixels at ``dpi``;
    inf for a figure without text.  ``drawn``: the figure was just saved as it is, so its
    ticks are laid out and it need not be drawn again.
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, not {type(fig).__name__}")
    if isinstance(dpi, bool) or not isinstance(dpi, (int, float)) or not 10 <= dpi <= 2400:
        raise ValueError(f"dpi must be a number of dots per inch, 10 to 2400, got {dpi!r}")
    if not isinstance(drawn, bool):
        raise TypeError(f"drawn must be True or False, got {drawn!r}")
    sizes = [t.get_fontsize() for t in _texts(fig, drawn)]
    return min(sizes, default=float("inf")) * dpi / 72


def _texts(fig: Figure, drawn: bool = False, shown: bool = True) -> list[matplotlib.text.Text]:
    """The texts a drawing of ``fig`` shows: visible, not blank, and for a tick label, of a tick
    inside its axis' limits (matplotlib keeps the labels of the ticks beyond them, undrawn), on
    an axis that is on.  ``shown=False``: every tick label too, as a narrower drawing may show
    another tick."""
    if not drawn:
        fig.canvas.draw()  # ticks are laid out when drawn
    undrawn = set()
    for ax in fig.axes if shown else ():
        for axis in ax._axis_map.values():
            ticks = axis.get_major_ticks() + axis.get_minor_ticks()
            if not (ax.axison and axis.get_visible()):  # an axis turned off shows no text
                drawn_ticks = set()
                undrawn.update((id(axis.label), id(axis.offsetText)))
            else:
                drawn_ticks = {id(tick) for tick in axis._update_ticks()}
            for tick in ticks:
                if id(tick) not in drawn_ticks:
                    undrawn.update((id(tick.label1), id(tick.label2)))
    return [
        text
        for text in fig.findobj(matplotlib.text.Text)
        if text.get_visible()
        and text.get_text().strip()
        and (text.axes is None or text.axes.get_visible())
        and id(text) not in undrawn
    ]


def _png(fig: Figure, **kwargs) -> bytes:
    """The PNG Jupyter's inline backend makes of ``fig`` (IPython's own printer)."""
    from IPython.core.pylabtools import print_figure

    return print_figure(fig, "png", **kwargs)


def scaled_as_a_drawing(fig: Figure) -> Figure:
    """Mark ``fig`` as a drawing (a diagram laid out in inches, :mod:`diagrams`): on a phone it
    is scaled as a whole, its text with it but never below :data:`PHONE_TEXT`, so that boxes
    and arrows keep their places around the text.  Returns ``fig``.
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, not {type(fig).__name__}")
    fig._phone_drawing = True
    return fig


def kept_inside(text: matplotlib.text.Text, box: Patch) -> matplotlib.text.Text:
    """Keep ``text``, centred in ``box``, inside it on a phone: where the larger text would
    spill out, it is rewrapped to the box's width (whole words; a no-break space keeps words
    together), and a drawing too short for its lines is stretched upright, at most
    :data:`STRETCH` times.  Returns ``text``.
    """
    if not isinstance(text, matplotlib.text.Text):
        raise TypeError(f"text must be a matplotlib Text, not {type(text).__name__}")
    if not isinstance(box, Patch) or box.figure is None or box.figure is not text.figure:
        raise ValueError("box must be a patch drawn on the same figure as the text")
    boxed = box.figure.__dict__.setdefault("_phone_boxed", [])
    boxed.append((text, box))
    return text


STRETCH = 1.6  # a drawing grows upright at most this much to hold its rewrapped labels


ROOM = 0.88  # of a box's width and height, the most its text may fill


def _extent(text, renderer):
    return text.get_window_extent(renderer)


def _fitted(text: matplotlib.text.Text, string: str, room: float, renderer) -> str:
    """``string`` wrapped anew, word by word, onto lines at most ``room`` display pixels wide
    (its own line breaks are dropped; a no-break space joins two words)."""
    lines, line = [], ""
    for word in string.replace("\n", " ").split(" "):
        trial = f"{line} {word}" if line else word
        text.set_text(trial)
        if line and _extent(text, renderer).width > room:
            lines.append(line)
            line = word
        else:
            line = trial
    return "\n".join([*lines, line])


def _boxes_fitted(fig: Figure) -> None:
    """Rewrap each boxed label that overflows its box, then stretch the figure upright until
    the tallest label fits its box's height (at most STRETCH times)."""
    boxed = [(t, b) for t, b in getattr(fig, "_phone_boxed", []) if t.get_visible()]
    if not boxed:
        return
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for text, box in boxed:
        room = ROOM * box.get_window_extent(renderer).width
        if _extent(text, renderer).width > room:
            text.set_text(_fitted(text, text.get_text(), room, renderer))
    need = max(
        _extent(t, renderer).height / (ROOM * b.get_window_extent(renderer).height)
        for t, b in boxed
    )
    if need > 1:
        width, height = fig.get_size_inches()
        fig.set_size_inches(width, height * min(need, STRETCH))


def _labels_fitted(fig: Figure) -> bool:
    """Rewrap each axes' titles and x-axis label that are wider than the axes (they would run
    into the next panel's), word by word; again once, since a label of more lines changes the
    layout.  Returns whether the last drawing is of the figure as it now is (no label was
    rewrapped after it)."""
    for _ in range(2):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        rewrapped = False
        for ax in fig.axes:
            if not ax.get_visible():
                continue
            room = ax.get_window_extent(renderer).width
            for label in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label):
                if label.get_text() and _extent(label, renderer).width > room:
                    label.set_text(_fitted(label, label.get_text(), room, renderer))
                    rewrapped = True
        if not rewrapped:
            return True
    return False


def _corners(text: matplotlib.text.Text, renderer) -> np.ndarray:
    """The four corners (4, 2) of ``text``'s box on the screen, turned with the text: a label
    at 60 degrees fills a slanted strip, not the upright box around it."""
    box = _extent(text, renderer)
    degrees = text.get_rotation()
    if degrees % 90 == 0:
        flat = (box.width, box.height) if degrees % 180 == 0 else (box.height, box.width)
    else:
        text.set_rotation(0)
        upright = _extent(text, renderer)
        text.set_rotation(degrees)
        flat = (upright.width, upright.height)
    turn = np.deg2rad(degrees)
    rotation = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    half = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * np.array(flat) / 2
    # a turned rectangle is centred where the upright box around it is
    return np.array([(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2]) + half @ rotation.T


def _meet(a: np.ndarray, b: np.ndarray, by: float = 1.0) -> bool:
    """Whether two convex quadrilaterals (4, 2) overlap by more than ``by`` pixels along every
    direction that could separate them (their edges' normals)."""
    for quad in (a, b):
        for edge in quad[1:3] - quad[0:2]:
            normal = np.array([-edge[1], edge[0]]) / np.hypot(*edge)
            pa, pb = a @ normal, b @ normal
            if min(pa.max(), pb.max()) - max(pa.min(), pb.min()) <= by:
                return False
    return True


def overlapping_texts(fig: Figure) -> list[tuple[str, str]]:
    """The pairs of texts ``fig`` shows that are drawn over one another (by more than a pixel
    each way, each text's box turned with it), as their strings: labels that run together.
    The figure is laid out afresh first, without drawing a picture.
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, not {type(fig).__name__}")
    # laid out at the figure's own size: after a tight PNG, labels placed in screen
    # coordinates are still where the tight box had moved them
    fig.draw_without_rendering()
    texts = _texts(fig, drawn=True)
    renderer = fig.canvas.get_renderer()
    if len(texts) < 2:
        return []
    corners = np.array([_corners(t, renderer) for t in texts])  # (n, 4, 2)
    low, high = corners.min(axis=1), corners.max(axis=1)  # (n, 2): the upright boxes
    # only texts whose upright boxes meet can meet: test those pairs (a figure of a few
    # hundred numbers has tens of thousands of pairs, and few that touch)
    reach = np.minimum(high[:, None], high[None]) - np.maximum(low[:, None], low[None])
    near = np.triu((reach > 1).all(axis=-1), k=1)
    return [
        (texts[i].get_text(), texts[j].get_text())
        for i, j in zip(*np.nonzero(near))
        if _meet(corners[i], corners[j])
    ]


def _a_number(text: str) -> bool:
    try:
        float(text.replace("\u2212", "-"))
    except ValueError:
        return False
    return True


def _ticks_fitted(fig: Figure, drawn: bool = False) -> list[Callable[[], None]]:
    """Make room between x tick labels that run together: hide every second number, wrap
    upright words onto lines as wide as the space between two ticks, and stand slanted ones
    upright; words are never hidden.
    Returns what undoes each change, for the caller.  ``drawn``: the figure was just drawn as
    it is."""
    if not drawn:
        fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    undo = []
    for ax in fig.axes:
        low, high = sorted(ax.get_xlim())
        labels = [  # the labels drawn: of the ticks inside the axes, with text
            tick.label1
            for tick in ax.xaxis.get_major_ticks()
            if low <= tick.get_loc() <= high
            and tick.label1.get_visible()
            and tick.label1.get_text().strip()
        ]
        if len(labels) < 2:
            continue
        boxes = [_extent(t, renderer) for t in labels]
        if not any(b.x0 < a.x1 + 2 for a, b in zip(boxes, boxes[1:])):
            continue
        if len(labels) >= 3 and all(_a_number(t.get_text()) for t in labels):
            for label in labels[1::2]:
                label.set_visible(False)
                undo.append(functools.partial(label.set_visible, True))
            continue
        if any(t.get_rotation() for t in labels):
            # slanted words that meet are stood upright, where they need only a line's height
            corners = [_corners(t, renderer) for t in labels]
            if any(_meet(a, b) for a, b in zip(corners, corners[1:])):
                for label in labels:
                    undo.append(functools.partial(label.set_rotation, label.get_rotation()))
                    label.set_rotation(90)
            continue
        centres = [(b.x0 + b.x1) / 2 for b in boxes]
        room = min(b - a for a, b in zip(centres, centres[1:])) - 4
        # each label as it is shown, rewrapped in its own font (a draw sets the texts again)
        wrapped = {t.get_text(): _fitted(t, t.get_text(), room, renderer) for t in labels}
        formatter, default = ax.xaxis.get_major_formatter(), ax.xaxis.isDefault_majfmt
        ax.xaxis.set_major_formatter(
            FuncFormatter(lambda x, pos, f=formatter, w=wrapped: w.get(f(x, pos), f(x, pos)))
        )
        undo.append(functools.partial(_formatter_restored, ax.xaxis, formatter, default))
    return undo


def _formatter_restored(axis, formatter, default: bool) -> None:
    axis.set_major_formatter(formatter)
    axis.isDefault_majfmt = default


@contextlib.contextmanager
def _for_a_phone(fig: Figure, drawn: bool = False):
    """The figure at most PHONE_WIDTH wide, its smaller text raised to PHONE_TEXT (a drawing's
    text scaled with it, no smaller than that), its long axis labels and titles wrapped onto
    lines of at most LINE characters, and its boxed labels kept inside their boxes; all
    restored after.  ``drawn``: the figure was just saved as it is (see _texts).
    """
    size = fig.get_size_inches().copy()
    texts = _texts(fig, drawn, shown=False)
    sizes = [t.get_fontsize() for t in texts]
    strings = [t.get_text() for t in texts]
    labels = [
        label
        for ax in fig.axes
        for label in (ax.xaxis.label, ax.yaxis.label, ax.title)
        if len(label.get_text()) > LINE and "\n" not in label.get_text()
    ]
    width = min(size[0], PHONE_WIDTH)
    drawing = getattr(fig, "_phone_drawing", False)
    scale = width / size[0] if drawing else 1.0
    if drawing:
        fig.set_size_inches(width, size[1] * scale)
    else:
        fig.set_size_inches(width, size[1] * (1 + 0.5 * (1 - width / size[0])))
    for text, points in zip(texts, sizes):
        text.set_fontsize(max(points * scale, PHONE_TEXT))
    for label in labels:
        label.set_text(textwrap.fill(label.get_text(), LINE))
    undo = []
    try:
        _boxes_fitted(fig)
        if not drawing:
            undo = _ticks_fitted(fig, drawn=_labels_fitted(fig))
        yield
    finally:
        for step in undo:
            step()
        fig.set_size_inches(size)
        for text, points, string in zip(texts, sizes, strings):
            text.set_fontsize(points)
            text.set_text(string)


def _narrow_enough(fig: Figure, **kwargs) -> tuple[bytes, bool]:
    """(the figure's PNG, narrowed until it is at most PHONE_WIDTH (and a tight box's margin)
    wide: a legend or label outside the axes widens a tight drawing past the figure's size;
    whether the layout collapsed in the drawing returned).
    """
    target = (PHONE_WIDTH + 0.2) * DPI
    for _ in range(3):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            png = _png(fig, **kwargs)
        collapsed = any("collapsed" in str(w.message) for w in caught)
        width = Image.open(io.BytesIO(png)).width
        if width <= target:
            break
        # no narrower than 0.6 of a phone: what still overflows is the page's to fix (a
        # legend in columns, say), and the browser tests will say so
        inches = fig.get_size_inches()
        narrower = max(inches[0] - (width - target) / DPI, 0.6 * PHONE_WIDTH)
        if narrower >= inches[0]:
            break
        fig.set_size_inches(narrower, inches[1])
    return png, collapsed


def drawn_for_a_phone(fig: Figure, draw: Callable[[], Figure]) -> Figure:
    """Give ``fig`` a phone variant of its own: ``draw()`` makes it, at most
    :data:`PHONE_WIDTH` wide (a grid of many cells split into stacked panels, say), where
    narrowing the figure would not do.  Returns ``fig``.
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, not {type(fig).__name__}")
    if not callable(draw):
        raise TypeError(f"draw must make a Figure when called, not be a {type(draw).__name__}")
    fig._phone_variant = draw
    return fig


def _own_variant(draw: Callable[[], Figure], **kwargs) -> tuple[bytes, float, list, list]:
    import matplotlib.pyplot as plt

    phone = draw()
    try:
        if not isinstance(phone, Figure):
            raise TypeError(f"a phone variant must be a Figure, not {type(phone).__name__}")
        width = phone.get_size_inches()[0]
        if width > PHONE_WIDTH + 1e-9:
            raise ValueError(f"a phone variant is {width} in wide: at most {PHONE_WIDTH}")
        png = _png(phone, **kwargs)
        px, cells = smallest_text_px(phone, drawn=True), heatmap_cells(phone, **kwargs)
        return png, px, overlapping_texts(phone), cells
    finally:
        plt.close(phone)


def heatmap_cells(fig: Figure, **kwargs) -> list[dict]:
    """Where each heat map of ``fig`` (:func:`.plots.heatmap`, or any image whose numbers
    :func:`.plots.readable_cells` gave) lies in the PNG that ``savefig(**kwargs)`` has just made
    of it, and its numbers: [{"box": [left, top, width, height] as fractions of the image's
    width and height, "rows": n labels, "cols": m labels, "row_axis" and "col_axis": what a row
    and a column are called (as :func:`.plots.readable_cells` names them, else the axes'
    labels, another map's where a panel leaves its axis unnamed, or "query" and "key"),
    "between" where the tip joins a row and a column otherwise than by an arrow, and the (n, m)
    values packed in thousandths (:func:`packed_cells`; :func:`cell_values` reads them
    back)}], in the order of the axes.  The published page shows a cell's number when the
    reader hovers over it or taps it (_ext/cells.js)."""
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, not {type(fig).__name__}")
    renderer = fig.canvas.get_renderer()
    if kwargs.get("bbox_inches") == "tight":  # the box savefig cropped the drawing to
        pad = kwargs.get("pad_inches", matplotlib.rcParams["savefig.pad_inches"])
        box = fig.get_tightbbox(renderer).padded(pad)
    else:
        box = fig.bbox_inches
    found, unnamed = [], []
    for ax in fig.axes:
        cells = getattr(ax, "attention_cells", None)
        if cells is None or not ax.get_visible() or not ax.get_images():
            continue
        x0, y0, x1, y1 = ax.get_images()[0].get_window_extent(renderer).extents / fig.dpi
        found.append(
            {
                "box": [
                    float(round((x0 - box.x0) / box.width, 5)),
                    float(round((box.y1 - y1) / box.height, 5)),
                    float(round((x1 - x0) / box.width, 5)),
                    float(round((y1 - y0) / box.height, 5)),
                ],
                **packed_cells(cells["values"]),
                "rows": list(cells["rows"]),
                "cols": list(cells["cols"]),
                # what a row and a column are called: as the page names them, or as the axes
                # do, without their glosses (after a bracket or a colon)
                "row_axis": cells.get("row_axis", re.split(r" \(|: ", ax.get_ylabel())[0]),
                "col_axis": cells.get("col_axis", re.split(r" \(|: ", ax.get_xlabel())[0]),
            }
        )
        if "between" in cells:  # a map whose rows do not read its columns
            found[-1]["between"] = cells["between"]
        unnamed.append({axis for axis in ("row_axis", "col_axis") if axis not in cells})
    # an axis left unnamed, as stacked panels leave all but one, takes another map's name for
    # it, or else "query" or "key" (where the page named it "", the labels say it all)
    for axis, default in (("row_axis", "query"), ("col_axis", "key")):
        named = [cells[axis] for cells in found if cells[axis]]
        for cells, drawn in zip(found, unnamed):
            if axis in drawn and not cells[axis]:
                cells[axis] = named[0] if named else default
    return found


# a heat map's numbers travel in the page as text: each in thousandths, less the smallest, written
# as a fixed number of base-64 digits (two for weights from 0 to 1, against about six characters
# for a decimal in JSON; a map of 48 by 48 then costs 4.6 kB).  The largest code of that many
# digits stands for a cell without a number (not finite).
DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


PACKED_MOST = 1e12  # the largest magnitude a cell's number may have


def packed_cells(values) -> dict:
    """A heat map's (n, m) ``values`` as the published page carries them: {"shape": [n, m],
    "lo": the smallest finite value in thousandths, "digits": base-64 digits per cell,
    "codes": each cell's value in thousandths less ``lo``, row by row, in :data:`DIGITS`}
    (Part I onward: every heat map a reader hovers over; read back by :func:`cell_values`
    and by _ext/cells.js)."""
    values = np.asarray(values, dtype=float)
    if values.ndim != 2 or 0 in values.shape:
        raise ValueError(f"values must be an (n, m) matrix with cells, got shape {values.shape}")
    finite = np.isfinite(values)
    if finite.any() and np.abs(values[finite]).max() > PACKED_MOST:
        raise ValueError(f"values must lie within ±{PACKED_MOST:g} to be packed")
    thousandths = np.rint(np.where(finite, values, 0.0) * 1000).astype(np.int64)
    lo = int(thousandths[finite].min()) if finite.any() else 0
    codes = thousandths - lo
    digits = 1
    while 64**digits - 1 <= (int(codes[finite].max()) if finite.any() else 0):
        digits += 1
    codes[~finite] = 64**digits - 1
    places = codes.reshape(-1, 1) // 64 ** np.arange(digits - 1, -1, -1) % 64
    text = "".join(np.array(list(DIGITS))[places].ravel())
    return {"shape": list(values.shape), "lo": lo, "digits": digits, "codes": text}


def cell_values(packed: dict) -> np.ndarray:
    """The (n, m) values :func:`packed_cells` packed, rounded to thousandths (NaN where a cell
    had no finite number)."""
    if not isinstance(packed, dict) or not {"shape", "lo", "digits", "codes"} <= packed.keys():
        raise ValueError("packed must be what packed_cells returns: shape, lo, digits and codes")
    n, m = packed["shape"]
    digits, codes = packed["digits"], packed["codes"]
    if len(codes) != n * m * digits or set(codes) - set(DIGITS):
        raise ValueError(f"packed codes must be {n * m * digits} characters of DIGITS")
    places = np.array([DIGITS.index(c) for c in codes]).reshape(n * m, digits)
    code = places @ 64 ** np.arange(digits - 1, -1, -1)
    values = (packed["lo"] + code) / 1000
    values[code == 64**digits - 1] = np.nan
    return values.reshape(n, m)


def drawings(fig: Figure, **kwargs) -> tuple[bytes, dict]:
    """(the column's PNG, metadata with the phone variant): what a page's output stores.

    The metadata holds ``phone`` (the variant's PNG, base64), ``text_px`` and
    ``phone_text_px`` (the smallest text of each, in image pixels), and ``overlaps`` and
    ``phone_overlaps`` (each drawing's texts that run together, :func:`overlapping_texts`; a
    test over every page wants none); for a figure with heat maps, ``cells`` and
    ``phone_cells`` (:func:`heatmap_cells` of each drawing, as JSON text).  ``kwargs`` go to
    ``savefig`` for both drawings, as Jupyter's inline backend passes them.
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, not {type(fig).__name__}")
    # each measure of text size reads the drawing just saved, since every draw lays the figure
    # out again: 5 draws in all, twice for each tight PNG and once to fit the phone's labels;
    # each measure of overlaps lays the figure out once more, without drawing a picture
    column = _png(fig, **kwargs)
    column_px = smallest_text_px(fig, drawn=True)
    column_cells = heatmap_cells(fig, **kwargs)
    column_overlaps = overlapping_texts(fig)
    draw = getattr(fig, "_phone_variant", None)
    if draw is not None:
        phone, phone_px, phone_overlaps, phone_cells = _own_variant(draw, **kwargs)
    else:
        # a layout that collapses on the way (narrowed too far, say) warns; what counts is
        # the drawing served, and the warnings are the phone's, not the page's
        with warnings.catch_warnings(record=True), _for_a_phone(fig, drawn=True):
            warnings.simplefilter("always")
            phone, collapsed = _narrow_enough(fig, **kwargs)
            phone_px = smallest_text_px(fig, drawn=True)
            phone_cells = heatmap_cells(fig, **kwargs)
            phone_overlaps = overlapping_texts(fig)
        if collapsed:
            # the layout gave up at a phone's width: serve the column's drawing, whose small
            # text the browser tests then report, rather than empty axes
            phone, phone_px, phone_overlaps = column, column_px, column_overlaps
            phone_cells = column_cells
    meta = {
        "text_px": round(column_px, 2),
        "overlaps": [list(pair) for pair in column_overlaps],
        "phone": base64.b64encode(phone).decode("ascii"),
        "phone_text_px": round(phone_px, 2),
        "phone_overlaps": [list(pair) for pair in phone_overlaps],
    }
    if column_cells:  # a figure with heat maps: where their cells are, in each drawing (as
        # compact JSON text, one line of the notebook rather than one for every number)
        meta |= {
            name: json.dumps(cells, separators=(",", ":"))
            for name, cells in (("cells", column_cells), ("phone_cells", phone_cells))
        }
    return column, meta


@contextlib.contextmanager
def none_for_a_widget():
    """Inside this context figures are drawn for the screen only (a live widget's)."""
    global _drawing_for_a_widget
    saved, _drawing_for_a_widget = _drawing_for_a_widget, True
    try:
        yield
    finally:
        _drawing_for_a_widget = saved


def show_phone_variants() -> None:
    """Make every figure this notebook shows from now on carry its phone variant (a page's
    first cell, through :func:`plots.use_style`).  Outside IPython it does nothing.
    """
    try:
        from IPython import get_ipython
        from matplotlib_inline.config import InlineBackend
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    options = InlineBackend.instance().print_figure_kwargs

    def png(fig):
        if _drawing_for_a_widget:
            return _png(fig, **options)
        return drawings(fig, **options)

    shell.display_formatter.formatters["image/png"].for_type(Figure, png)
