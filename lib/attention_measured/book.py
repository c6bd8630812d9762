"""The pages' bookkeeping: numbers handed from a page's code to its prose (every Part).

The prose never types a number; it quotes what the page computed, through myst-nb's ``glue``.
:func:`glue` hands over a number at the precision the prose prints, so that what nbval compares
is what the reader reads: the last digits of a trained number can differ between processors (see
the notation page, "The numbers on your machine"), the digits the prose shows do not.
"""

from __future__ import annotations

import numbers

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
