"""The book's one figure style (every Part): colours, weight bars, effects, distributions.

Every figure has an opaque white background, so it reads the same in the light and the dark
theme, and uses the Okabe-Ito colour-blind-safe palette. Importing this module changes nothing:
a page applies the style with
:func:`use_style`, and a function that draws for a widget runs inside
:func:`style` (or is decorated with :func:`styled`), which restores the
reader's own settings afterwards.
"""

from __future__ import annotations

import contextlib
import functools

import matplotlib.pyplot as plt
import numpy as np

from ..core import checks
from . import phone_figures

INK = "#222222"


GRID = "#dddddd"


MARKER = "#CC79A7"  # the marked step (reddish purple, distinct from both runs)


RUNS = ("#0072B2", "#E69F00")  # run 1, run 2 (and first / second of any pair)


NEUTRAL = "#9a9a9a"  # steps that are not the marker


AFTER = "#009E73"  # after a step is dropped


STYLE = {
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "axes.edgecolor": INK,
    "axes.labelcolor": INK,
    "text.color": INK,
    "xtick.color": INK,
    "ytick.color": INK,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.color": GRID,
    "axes.axisbelow": True,
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "legend.frameon": False,
    "legend.fontsize": 9,
}


def use_style() -> None:
    """Apply the book's style to every figure drawn from now on in this session (each page's
    first cell).  Each figure the page shows then also carries its phone variant
    (:mod:`phone_figures`).
    """
    plt.rcParams.update(STYLE)
    phone_figures.show_phone_variants()


@contextlib.contextmanager
def style():
    """A context in which figures are drawn in the book's style; its settings return after it.

    Only the settings of :data:`STYLE` are saved and restored, never others that a backend
    changes on first use (restoring ``interactive`` would stop the notebook showing figures).
    """
    saved = {key: plt.rcParams[key] for key in STYLE}
    plt.rcParams.update(STYLE)
    try:
        with phone_figures.none_for_a_widget():
            yield
    finally:
        plt.rcParams.update(saved)


def styled(function):
    """Decorator: ``function`` draws in the book's style, and leaves the reader's settings as
    they were.
    """
    checks.function(function, "function")

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with style():
            return function(*args, **kwargs)

    return wrapper


COLUMN = 6.7  # inches: the text column at 100 dpi (about 670 px), so figures are shown at full size


def figure(nrows: int = 1, ncols: int = 1, width: float = COLUMN, height: float = 2.6, **kwargs):
    """A figure in the book's style: (fig, axes); axes is a single Axes when there is one.
    ``nrows`` and ``ncols`` come in the order of ``plt.subplots``: ``figure(2, 1)`` stacks two
    panels.

    ``width`` (inches) may not exceed :data:`COLUMN`: a wider figure would be
    shrunk to the column, and its text with it, below a readable size.  Put
    panels below one another instead (``nrows``).
    """
    nrows, ncols = checks.integer(nrows, "nrows", 1), checks.integer(ncols, "ncols", 1)
    width, height = (
        checks.real(width, "width", positive=True),
        checks.real(height, "height", positive=True),
    )
    if width > COLUMN + 1e-9:
        raise ValueError(f"width {width} is wider than the column ({COLUMN} in): stack the panels")
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), layout="constrained", **kwargs)
    return fig, axes


def step_axis(ax, steps: int = 12) -> None:
    """Label the x axis with the step numbers 0..steps-1."""
    ax.set_xticks(range(steps))
    ax.set_xlim(-0.6, steps - 0.4)
    ax.set_xlabel("step")


def readings(ax, values: np.ndarray, marker: int, threshold: float, title: str = "") -> None:
    """One sequence's readings as bars (T,), the marked step in the marker colour, the threshold
    dashed.
    """
    colours = [MARKER if t == marker else NEUTRAL for t in range(len(values))]
    ax.bar(range(len(values)), values, color=colours)
    ax.axhline(threshold, color=INK, lw=1, ls="--")
    ax.axhline(0, color=INK, lw=0.6)
    step_axis(ax, len(values))
    ax.set_ylabel("reading")
    ax.set_title(title)


def bars(
    ax,
    series: dict[str, np.ndarray],
    marker: int | None = None,
    colours=RUNS,
    ylabel: str = "weight",
    title: str = "",
    ylim=(0, 1),
) -> None:
    """Grouped bars over the steps, one group member per series (each (T,)).

    The marked step's tick label is drawn in the marker colour and bold.
    """
    names = list(series)
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        values = np.asarray(series[name])
        offset = (i - (len(names) - 1) / 2) * width
        ax.bar(
            np.arange(len(values)) + offset,
            values,
            width,
            color=colours[i % len(colours)],
            label=name,
        )
    steps = len(np.asarray(series[names[0]]))
    step_axis(ax, steps)
    if marker is not None:
        label = ax.get_xticklabels()[marker]
        label.set_color(MARKER)
        label.set_fontweight("bold")
        ax.axvspan(marker - 0.45, marker + 0.45, color=MARKER, alpha=0.12, lw=0)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if len(names) > 1:
        ax.legend(loc="upper left", ncols=len(names))


def distribution(
    ax,
    values: np.ndarray,
    highlights: dict[str, float],
    xlabel: str,
    bins: int = 20,
    value_range=None,
    log: bool = True,
) -> None:
    """A histogram of one measure over many seeds, with named values drawn as vertical lines.

    With ``log`` the counts are on a log scale, so a tail of one or two seeds stays visible
    beside a peak of ninety.
    """
    log = checks.flag(log, "log")
    ax.hist(values, bins=bins, range=value_range, color=NEUTRAL, edgecolor="white", log=log)
    for i, (name, x) in enumerate(highlights.items()):
        ax.axvline(x, color=RUNS[i % len(RUNS)], lw=2.2, ls=("-", "--")[i % 2], label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("seeds")
    if highlights:
        ax.legend(loc="best")  # where it covers neither the bars nor the lines


def readable_cells(
    ax,
    values,
    rows,
    cols,
    row_axis: str | None = None,
    col_axis: str | None = None,
    between: str = " → ",
) -> None:
    """Let the published page read back ``values``, the (n, m) numbers the image on ``ax``
    draws with row 0 at the top: hovering over a cell, or tapping it, shows its number
    (:func:`.phone_figures.heatmap_cells` finds the cells; every Part's heat maps).

    rows, cols: n and m labels ("" for one known by its position alone).  row_axis, col_axis:
    what a row and a column are called in the tip; None takes the axis' label as drawn, and ""
    names a cell by its labels alone.  between: what the tip writes between a cell's row and
    column (an arrow where the row reads the column, as attention's query reads its key).
    """
    if not hasattr(ax, "get_images"):
        raise TypeError(f"ax must be the matplotlib Axes the image is on, got {ax!r}")
    values = checks.array(values, "values", ndim=2, finite=False)  # a masked cell: no number
    for name, labels in (("rows", rows), ("cols", cols)):
        if isinstance(labels, str) or not hasattr(labels, "__len__"):
            raise TypeError(f"{name} must be a list of labels, got {labels!r}")
    rows, cols = [str(label) for label in rows], [str(label) for label in cols]
    if (len(rows), len(cols)) != values.shape:
        raise ValueError(
            f"rows and cols must label the {values.shape} values, got {len(rows)} and {len(cols)}"
        )
    for name, axis in (("row_axis", row_axis), ("col_axis", col_axis)):
        if axis is not None and not isinstance(axis, str):
            raise TypeError(f"{name} must be a name or None, got {axis!r}")
    if not isinstance(between, str) or not between:
        raise TypeError(f"between must be the text between a row and a column, got {between!r}")
    ax.attention_cells = {"values": values, "rows": rows, "cols": cols}
    named = {"row_axis": row_axis, "col_axis": col_axis}
    ax.attention_cells |= {name: axis for name, axis in named.items() if axis is not None}
    if between != " → ":
        ax.attention_cells["between"] = between


def heatmap(
    ax,
    weights: np.ndarray,
    row_labels,
    col_labels,
    title: str = "",
    colorbar: bool = True,
    vmax: float | None = 1.0,
    vmin: float | None = 0.0,
    row_axis: str | None = None,
) -> None:
    """An attention matrix (n, m): row i is query i, column j key j; darker is heavier, from
    ``vmin`` to ``vmax`` (None: the matrix's own least or greatest) (Part IV).  On the published
    page, hovering a cell shows its number (:func:`readable_cells`, which ``row_axis`` goes
    to: "" where the row labels say what a row is)."""
    colorbar = checks.flag(colorbar, "colorbar")
    image = ax.imshow(weights, cmap="Blues", vmin=vmin, vmax=vmax, aspect="auto")
    readable_cells(ax, weights, row_labels, col_labels, row_axis=row_axis)
    ax.set_xticks(range(len(col_labels)), col_labels, rotation=90, fontsize=9)
    ax.set_yticks(range(len(row_labels)), row_labels, fontsize=9)
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query (attending)")
    ax.grid(False)
    ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.02)


@styled
def matrices(named: dict, tokens, per_row: int = 3, digits: int = 2):
    """Small matrices drawn as labelled grids with their numbers written in, ``per_row`` to a
    row (Part IV's three tokens, Part II's worked example of self-attention); on a phone,
    two to a row.

    named: ``{title: (n, k) array}``, each with one row per token; tokens: the n row labels, used
    for the columns too when a matrix is (n, n).  Returns ``(fig, axes)``.
    """
    if not isinstance(named, dict) or not named:
        raise ValueError("named must be a non-empty {title: matrix} dict")
    if isinstance(tokens, str) or not isinstance(tokens, (list, tuple)):
        raise TypeError(f"tokens must be a list of row labels, got {tokens!r}")
    tokens = [str(t) for t in tokens]
    digits = checks.integer(digits, "digits", 0, 6)
    arrays = {}
    for title, values in named.items():
        values = checks.array(values, f"named[{title!r}]", ndim=2)
        if values.shape[0] != len(tokens):
            raise ValueError(f"{title} has {values.shape[0]} rows; there are {len(tokens)} tokens")
        arrays[title] = values
    per_row = checks.integer(per_row, "per_row", 1)
    fig, axes = _matrices(arrays, tokens, per_row, digits, COLUMN)
    narrow = min(per_row, 2)
    phone_figures.drawn_for_a_phone(
        fig, lambda: _matrices(arrays, tokens, narrow, digits, phone_figures.PHONE_WIDTH)[0]
    )
    return fig, axes


@styled
def _matrices(arrays: dict, tokens: list[str], per_row: int, digits: int, width: float):
    rows = -(-len(arrays) // per_row)
    fig, axes = figure(rows, per_row, width=width, height=1.9 * rows, squeeze=False)
    for ax, (title, values) in zip(axes.flat, arrays.items()):
        top = np.abs(values).max() or 1.0
        ax.imshow(np.abs(values) / top, cmap="Blues", vmin=-0.15, vmax=1.6, aspect="auto")
        for (i, j), v in np.ndenumerate(values):
            ax.text(j, i, f"{v:.{digits}f}", ha="center", va="center", fontsize=10)
        square = values.shape[1] == len(tokens)
        ax.set_xticks(
            range(values.shape[1]), tokens if square else range(values.shape[1]), fontsize=9
        )
        ax.set_yticks(range(len(tokens)), tokens, fontsize=9)
        ax.tick_params(length=0)
        ax.grid(False)
        ax.set_title(title, fontsize=10)
    for ax in list(axes.flat)[len(arrays) :]:
        ax.axis("off")
    return fig, axes


def loss_curve(ax, curve: np.ndarray, label: str | None = None, colour: str = RUNS[0]) -> None:
    """A training curve on a log scale (iterations counted from 1)."""
    ax.plot(np.arange(1, len(curve) + 1), curve, color=colour, lw=1.2, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel("loss per predicted token")
    if label:
        ax.legend(loc="upper right")


def strips(
    ax, values: dict[str, np.ndarray], xlabel: str, highlight=(0, 1), value_range=(0, 1)
) -> None:
    """One row of dots per name (each (seeds,)), the seeds at positions ``highlight`` in the run
    colours (Part V).
    """
    names = list(values)
    for row, name in enumerate(names):
        v = np.asarray(values[name])
        others = [i for i in range(len(v)) if i not in highlight]
        ax.scatter(
            v[others],
            np.full(len(others), row),
            s=14,
            color=NEUTRAL,
            alpha=0.8,
            lw=0,
            clip_on=False,
        )
        for k, i in enumerate(highlight):  # highlighted seeds a little above and below the row
            if i < len(v):
                offset = (k - (len(highlight) - 1) / 2) * 0.3
                ax.scatter(
                    v[i],
                    row + offset,
                    s=28,
                    color=RUNS[k % len(RUNS)],
                    marker="D",
                    lw=0,
                    zorder=3,
                    clip_on=False,
                )
    ax.set_yticks(range(len(names)), names)
    ax.set_ylim(len(names) - 0.5, -0.5)
    margin = 0.02 * (value_range[1] - value_range[0])
    ax.set_xlim(value_range[0] - margin, value_range[1] + margin)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x")
    ax.grid(axis="y", visible=False)


def example_figure(
    values,
    marker: int,
    line: float,
    title: str,
    weights: dict,
    effects: dict,
    weights_title: str = "attention weights",
    effects_title: str = "removal effects",
    colours=RUNS,
):
    """Three panels for one sequence (every Part): its readings ``values`` (T,), the marker
    highlighted and ``line`` dashed; the weights; and the removal effects of each named run
    or head ({name: (T,)}), in matching colours."""
    fig, axes = figure(3, 1, height=6.3)
    readings(axes[0], values, marker, line, title=title)
    bars(axes[1], weights, marker=marker, colours=colours, title=weights_title)
    bars(
        axes[2],
        effects,
        marker=marker,
        colours=colours,
        ylabel="|Δp| when dropped",
        title=effects_title,
    )
    return fig
