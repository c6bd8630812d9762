"""The one convention for a model's learned numbers, in every Part: named arrays.

A :class:`Params` is a dict from names to numpy arrays, also readable and settable as attributes
(``params.query`` is ``params["query"]``).  Gradients come in a Params with the same names and
shapes.  A stack of R networks trained side by side (Part I trains a hundred at once) is a
Params whose arrays carry a leading run axis; :meth:`Params.select` takes one network out of it.
"""

from __future__ import annotations

import functools
import numbers
import os
import threading

import numpy as np

from . import checks

NUDGE_VARIABLE = "ATTENTION_MEASURED_NUDGE"


NUDGE_SIZE = 1e-12  # relative; larger than any processor's rounding differences


class Params(dict):
    """Named arrays of one model (or a stack of models); see the module's docstring."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"these parameters have no array named {name!r}") from None

    def __setattr__(self, name, value):
        self[name] = value

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays by name, in the order they were drawn."""
        return dict(self)

    def copy(self) -> Params:
        """A deep copy: new arrays, so training the copy leaves these untouched."""
        return Params({name: np.array(value, dtype=float) for name, value in self.items()})

    def select(self, index) -> Params:
        """One network (or a sub-stack) out of a stack: every array indexed on its leading axis.

        ``index`` is a run number 0..R-1 (no negative wrap), a slice, or an array of run numbers.
        """
        runs = min((np.shape(v)[0] for v in self.values() if np.ndim(v)), default=0)
        if isinstance(index, slice):
            pass
        elif isinstance(index, (bool, np.bool_, numbers.Integral)):
            index = checks.index(index, "index", runs)
        else:
            index = checks.integers(index, "index", 0, runs - 1)
        picked = {name: np.asarray(value)[index] for name, value in self.items()}
        # a scalar comes back as a 0-d array, which training can update in place like the rest
        return Params(
            {n: v if isinstance(v, np.ndarray) else np.array(v) for n, v in picked.items()}
        )

    @property
    def size(self) -> int:
        """How many numbers the arrays hold in all (for a stack, all the networks' together)."""
        return int(sum(np.size(value) for value in self.values()))

    def __repr__(self) -> str:
        shapes = ", ".join(f"{name}: {np.shape(value)}" for name, value in self.items())
        return f"Params({shapes})"


def fan_in_normal(rng: np.random.RandomState, *shape: int, fan_in: int | None = None) -> np.ndarray:
    """Initial weights of ``shape``: normal with standard deviation 1/sqrt(``fan_in``), the number
    of inputs each output sums.  By default the last axis is the input, as in torch's (out, in)
    weights (Part V's scores and recurrent models); a weight that multiplies from the
    right, x W with W (in, out), names its first axis (Part II's heads and order readers)."""
    checks.random_state(rng)
    shape = tuple(checks.integer(n, "shape", 1) for n in shape)
    if not shape:
        raise ValueError("shape must have at least one axis")
    fan_in = shape[-1] if fan_in is None else checks.integer(fan_in, "fan_in", 1)
    return rng.normal(0.0, 1.0 / np.sqrt(fan_in), size=shape)


def nudge() -> int:
    """The nudge in force: 0 when ``ATTENTION_MEASURED_NUDGE`` is unset or empty, else its
    positive integer k.  Anything else is refused, naming the variable."""
    text = os.environ.get(NUDGE_VARIABLE, "").strip()
    if not text:
        return 0
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{NUDGE_VARIABLE} must be a positive integer or unset, got {text!r}")
    return int(text)


def nudged(arrays: dict, k: int) -> dict:
    """``arrays`` (a Params or a dict of arrays), each multiplied by (1 + 1e-12 · z), z standard
    normal drawn in the arrays' order from ``numpy.random.default_rng(k)``; same type, new
    arrays.  Zeros (biases) stay zero."""
    if not isinstance(arrays, dict):
        raise TypeError(f"arrays must be a Params or a dict of arrays, got {type(arrays).__name__}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive whole number, the nudge, got {k!r}")
    for name, value in arrays.items():
        checks.array(value, f"arrays[{name!r}]", copy=False)  # numbers, finite
    draws = np.random.default_rng(k)
    out = type(arrays)()
    for name, value in arrays.items():
        out[name] = np.array(value, dtype=float)  # a new array, 0-d ones included
        out[name] *= 1.0 + NUDGE_SIZE * draws.standard_normal(np.shape(value))
    return out


_depth = threading.local()


def initialiser(function):
    """Decorator for every function that draws a model's initial parameters (a Params or a
    dict of arrays): under ``ATTENTION_MEASURED_NUDGE=k`` the result is :func:`nudged`.  An
    initialiser called by another (a flavour's inside a reader's) is nudged once, by the
    outermost."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        depth = getattr(_depth, "value", 0)
        _depth.value = depth + 1
        try:
            arrays = function(*args, **kwargs)
        finally:
            _depth.value = depth
        k = nudge() if depth == 0 else 0
        return nudged(arrays, k) if k else arrays

    return wrapper
