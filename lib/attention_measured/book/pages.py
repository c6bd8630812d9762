"""The pages' bookkeeping: numbers handed from a page's code to its prose (every Part).

The prose never types a number; it quotes what the page computed, through myst-nb's ``glue``.
:func:`glue` hands over a number at the precision the prose prints, so that what nbval compares
is what the reader reads: the last digits of a trained number can differ between processors (see
the notation page, "The numbers on your machine"), the digits the prose shows do not.
"""

from __future__ import annotations

import numbers
from html import escape

import numpy as np


def _plain(value, digits: int | None):
    """A plain Python bool, int or float (glue prints numpy scalars as np.float64(...)), rounded
    if asked.
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        return value if digits is None or not np.isfinite(value) else round(value, digits)
    if isinstance(value, str):
        return value
    raise TypeError(f"glue takes a number or a string, got {type(value).__name__}")


def glue(name: str, value, digits: int | None = None) -> None:
    """Hand ``value`` to the page's prose as ``{glue:text}`name```, without showing it in the
    cell.

    ``digits``: round a float to this many decimals, the most the prose prints.
    """
    from myst_nb import glue as myst_glue

    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if hasattr(value, "savefig"):  # a figure, for a {glue:figure} on another page
        myst_glue(name, value, display=False)
        return
    if digits is not None and (
        isinstance(digits, bool) or not isinstance(digits, numbers.Integral) or digits < 0
    ):
        raise ValueError(f"digits must be a non-negative integer or None, got {digits!r}")
    myst_glue(name, _plain(value, digits), display=False)


def glue_all(values: dict, digits: int | None = None, prefix: str = "") -> None:
    """:func:`glue` every ``{name: value}`` of ``values``, each name preceded by ``prefix``."""
    for name, value in values.items():
        glue(prefix + name, value, digits)


def at_least(value, step: float = 0.05, margin: float = 0.02) -> float:
    """A bound below ``value`` on a grid of ``step``, ``margin`` lower first, for a number that
    moves in its last printed digit under the book's nudges and other processors: the margin
    must exceed the spread those checks were measured to cause (Part VII)."""
    value, step, margin = _bound_arguments(value, step, margin)
    return float(np.floor((value - margin) / step) * step)


def at_most(value, step: float = 0.05, margin: float = 0.02) -> float:
    """The bound above ``value`` that :func:`at_least` gives below it."""
    value, step, margin = _bound_arguments(value, step, margin)
    return float(np.ceil((value + margin) / step) * step)


def _bound_arguments(value, step, margin) -> tuple[float, float, float]:
    for name, number in (("value", value), ("step", step), ("margin", margin)):
        if isinstance(number, bool) or not isinstance(number, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {number!r}")
        if not np.isfinite(number):
            raise ValueError(f"{name} must be finite, got {number!r}")
    if step <= 0 or margin < 0:
        raise ValueError(f"step must be positive and margin at least 0, got {step}, {margin}")
    return float(value), float(step), float(margin)


WIDTH = 80


def _cell(value, digits: int | None) -> str:
    """One table entry as text: a float at ``digits`` decimals (``-`` for NaN), else ``str``."""
    if isinstance(value, (bool, np.bool_, str)) or value is None:
        return "" if value is None else str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        if np.isnan(value):
            return "-"
        return f"{float(value):.{4 if digits is None else digits}f}"
    raise TypeError(f"a table entry must be a number, a string or None, got {type(value).__name__}")


def table(header, rows, digits=4) -> None:
    """Print ``rows`` under ``header`` as a plain-text table that fits the page's column.

    ``header``: one title per column; ``rows``: a list of rows, each with one entry per column
    (numbers, strings or ``None`` for an empty entry). The first column is left-aligned, the others
    right-aligned; each is as wide as its longest entry. ``digits``: the decimals of every float,
    or one per column. Refuses a table wider than :data:`WIDTH` characters, which would scroll.
    """
    if isinstance(header, (str, bytes)) or not hasattr(header, "__iter__"):
        raise TypeError("header must be a list of column titles")
    if isinstance(rows, (str, bytes)) or not hasattr(rows, "__iter__"):
        raise TypeError("rows must be a list of rows, each a list of entries")
    header = [str(title) for title in header]
    if any(isinstance(row, (str, bytes)) or not hasattr(row, "__iter__") for row in rows):
        raise TypeError("rows must be a list of rows, each a list of entries")
    rows = [list(row) for row in rows]
    if not header or not rows:
        raise ValueError("a table needs a header and rows: at least one of each")
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"row {i} has {len(row)} entries for {len(header)} columns")
    if isinstance(digits, numbers.Integral) and not isinstance(digits, bool):
        digits = [int(digits)] * len(header)
    if isinstance(digits, (str, bytes)) or not hasattr(digits, "__iter__"):
        raise TypeError(f"digits must be a whole number or one per column, got {digits!r}")
    digits = list(digits)
    for d in digits:
        if d is not None and (isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 0):
            raise ValueError(f"digits must be whole numbers of at least 0 (or None), got {d!r}")
    if len(digits) != len(header):
        raise ValueError(f"digits has {len(digits)} entries for {len(header)} columns")
    text = [[_cell(value, digits[j]) for j, value in enumerate(row)] for row in rows]
    widths = [max(len(line[j]) for line in [header, *text]) for j in range(len(header))]
    lines = []
    for line in [header, *text]:
        first = line[0].ljust(widths[0])
        lines.append("  ".join([first] + [e.rjust(w) for e, w in zip(line[1:], widths[1:])]))
    width = max(len(line.rstrip()) for line in lines)
    if width > WIDTH:
        raise ValueError(
            f"the table is {width} characters wide; {WIDTH} fit the page's column: "
            "shorten the titles or split the table"
        )
    _show("\n".join(line.rstrip() for line in lines), _html(header, text))


def _html(header: list[str], text: list[list[str]]) -> str:
    """The table as HTML: a header row, the first column as text and the others right-aligned
    numbers, for the published page (``_static/tables.css`` lays it out on a phone)."""

    def cells(line, tag):
        first, rest = line[0], line[1:]
        # an empty corner is a plain cell: a header cell must name its column
        corner = "td" if tag == "th" and not first.strip() else tag
        out = [f'<{corner} class="am-label">{escape(first)}</{corner}>']
        out += [f'<{tag} class="am-number">{escape(e)}</{tag}>' for e in rest]
        return "<tr>" + "".join(out) + "</tr>"

    body = "".join(cells(line, "td") for line in text)
    return (
        f'<table class="am-table"><thead>{cells(header, "th")}</thead><tbody>{body}</tbody></table>'
    )


def _show(text: str, html: str) -> None:
    """Print ``text``; in a notebook, also hand the page its HTML twin.

    Both forms are stored, and nbval compares both, so every number stays checked.
    """
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the notebooks
        get_ipython = None
    if get_ipython is None or get_ipython() is None:
        print(text)
        return
    from IPython.display import display

    display({"text/plain": text, "text/html": html}, raw=True)
