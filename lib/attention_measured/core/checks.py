"""Argument checks shared by every module: each returns the value in a plain form, or raises.

A reader who changes a number in a cell meets these first, so every message names the argument
and says what it must be.  Wrong kinds raise ``TypeError``; right kinds with wrong values raise
``ValueError``.
"""

from __future__ import annotations

import contextlib
import functools
import numbers
import threading
import weakref
from collections.abc import Mapping

import numpy as np

MAX_COUNT = 1_000_000  # the most of anything a count may ask for (examples, steps, units)


def integer(value, name: str, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an int, checked to lie in [low, high].  A count, an integer with a ``low``
    bound and no ``high`` one, is at most :data:`MAX_COUNT`, so that a mistyped number is
    refused rather than left to run for hours or to exhaust the memory; an integer with neither
    bound (an axis) may be anything."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    _bounds(low, high, numbers.Integral)
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must be an integer {_range(low, high)}, got {value}")
    if low is not None and high is None and value > MAX_COUNT:
        raise ValueError(
            f"{name} must be an integer of at most {MAX_COUNT:,}, more than the book ever asks "
            f"for, got {value}"
        )
    return value


def _bounds(low, high, kind) -> None:
    """The checker's own bounds: numbers of ``kind`` or None (a mistake of the library's)."""
    for bound, label in ((low, "low"), (high, "high")):
        if bound is not None and (
            isinstance(bound, (bool, np.bool_)) or not isinstance(bound, kind)
        ):
            raise TypeError(
                f"{label} must be a number of the checker's kind or None, got {bound!r}"
            )


def _range(low, high) -> str:
    """'between 1 and 5', 'of at least 1' or 'of at most 5', for an error message."""
    if low is not None and high is not None:
        return f"between {low} and {high}"
    return f"of at least {low}" if high is None else f"of at most {high}"


def seed(value, name: str = "seed", below: int = 2**32) -> int:
    """A random seed: an integer in [0, below); numpy's RandomState takes seeds below 2**32."""
    return integer(value, name, 0, integer(below, "below", 1, 2**64) - 1)


def seeds(value, name: str = "seeds", below: int = 2**32) -> list[int]:
    """A non-empty sequence of seeds (a list, tuple or range of integers), as a list of ints."""
    if isinstance(value, (str, bytes, Mapping)) or np.ndim(value) != 1 or len(value) == 0:
        raise ValueError(f"{name} must be a non-empty sequence of integers, got {value!r}")
    return [seed(s, name, below) for s in value]


def real(
    value,
    name: str,
    low: float | None = None,
    high: float | None = None,
    positive: bool = False,
) -> float:
    """``value`` as a finite float, at least ``low`` and at most ``high``; ``positive`` excludes
    0."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {value!r} ({type(value).__name__})")
    positive = flag(positive, "positive")
    _bounds(low, high, numbers.Real)
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")
    if positive and not value > 0:
        raise ValueError(f"{name} must be positive, got {value}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must be a number {_range(low, high)}, got {value}")
    return value


def flag(value, name: str) -> bool:
    """``value`` if it is True or False (not 0, 1 or a string)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def choice(value, name: str, options) -> str:
    """``value`` if it is one of ``options``, else a ValueError listing them."""
    options = tuple(options)
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a name, one of {', '.join(map(repr, options))}; got {value!r}"
        )
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}, got {value!r}")
    return value


def index(value, name: str, size: int) -> int:
    """An index into a collection of ``size`` items: an integer in 0..size-1."""
    return integer(value, name, 0, integer(size, "size", 1) - 1)


_state = threading.local()


@contextlib.contextmanager
def trusted():
    """Within this block, float arrays are taken as they come, without checks of their shape or
    scans for NaN, and parameters are not searched for their names: the one training loop
    (:func:`attention_measured.core.training.fit`) runs its first step checked and the rest trusted,
    so that checks cost nothing inside inner loops."""
    before = getattr(_state, "trusted", False)
    _state.trusted = True
    try:
        yield
    finally:
        _state.trusted = before


def trusting() -> bool:
    """True inside :func:`trusted`: a module's own checks beyond these may then be skipped."""
    return getattr(_state, "trusted", False)


def array(
    value,
    name: str,
    ndim: int | None = None,
    shape: tuple | None = None,
    finite: bool = True,
    copy: bool = True,
) -> np.ndarray:
    """``value`` as a float array, checked for its number of axes, its shape and finiteness.

    ``shape`` may hold None for an axis of any length.  The array is a copy unless ``copy`` is
    False, when a float array comes back as it is (for a caller that never writes to it).
    """
    if getattr(_state, "trusted", False) and isinstance(value, np.ndarray) and value.dtype == float:
        return value.copy() if copy else value
    finite, copy = flag(finite, "finite"), flag(copy, "copy")
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be an array of numbers, got a string")
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):  # ragged nesting
        raise TypeError(f"{name} must be an array of numbers, got {type(value).__name__}") from None
    # booleans are not numbers here, and a complex number would lose its imaginary part
    if raw.dtype == bool or np.issubdtype(raw.dtype, np.complexfloating):
        raise TypeError(f"{name} must be an array of real numbers, got dtype {raw.dtype}")
    if raw.dtype.kind in "US":
        raise TypeError(f"{name} must be an array of numbers, got strings")
    try:
        out = raw.astype(float, copy=copy)
    except (TypeError, ValueError):  # an object array holding something else
        raise TypeError(f"{name} must be an array of numbers, got {type(value).__name__}") from None
    if ndim is not None and out.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} axes, got shape {out.shape}")
    if shape is not None and (
        out.ndim != len(shape) or any(s is not None and s != o for s, o in zip(shape, out.shape))
    ):
        wanted = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{name} must have shape {wanted}, got {out.shape}")
    if finite and not np.all(np.isfinite(out)):
        raise ValueError(f"{name} must hold finite numbers (no NaN or infinity)")
    return out


def labels(value, name: str = "labels") -> np.ndarray:
    """``value`` as a float array of binary labels, each 0 or 1 (booleans are refused: a label
    is a number here, as the losses use it)."""
    out = array(value, name, copy=False)  # read, never written
    if getattr(_state, "trusted", False):
        return out
    if out.size and not np.all((out == 0) | (out == 1)):
        raise ValueError(f"{name} must be 0 or 1, got values {np.unique(out)[:5].tolist()}")
    return out


def mask(value, name: str, shape: tuple | None = None) -> np.ndarray:
    """``value`` as a boolean array (True where attention may go) of ``shape``, if given (None
    for an axis of any length).  0 and 1 are refused: an integer array is not a mask."""
    out = np.asarray(value)
    if out.dtype != bool:
        raise TypeError(f"{name} must be boolean, True where attention may go; got {out.dtype}")
    if shape is not None and (
        out.ndim != len(shape) or any(s is not None and s != o for s, o in zip(shape, out.shape))
    ):
        wanted = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{name} must have shape {wanted}, got {out.shape}")
    return out


def integers(value, name: str, low: int | None = None, high: int | None = None) -> np.ndarray:
    """``value`` as an integer array, each entry in [low, high]."""
    out = np.asarray(value)
    if out.dtype == bool or not (out.size == 0 or np.issubdtype(out.dtype, np.integer)):
        raise TypeError(f"{name} must hold integers, got dtype {out.dtype}")
    if out.size and (
        (low is not None and out.min() < low) or (high is not None and out.max() > high)
    ):
        raise ValueError(f"{name} must hold integers {_range(low, high)}")
    return out


def token_ids(value, name: str, vocabulary: int, shape: tuple) -> np.ndarray:
    """An integer array of token ids, each below ``vocabulary``, of ``shape`` (None: any length)."""
    vocabulary = integer(vocabulary, "vocabulary", 1)
    if not isinstance(shape, tuple):
        raise TypeError(f"shape must be a tuple of axis lengths or None, got {shape!r}")
    ids = integers(value, name, 0, vocabulary - 1)
    if ids.ndim != len(shape) or any(s is not None and s != n for s, n in zip(shape, ids.shape)):
        wanted = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{name} must be token ids shaped {wanted}, got shape {ids.shape}")
    return ids


def params(value, name: str, needs) -> Mapping:
    """``value`` if it is a mapping (a Params) holding a finite array under every name in
    ``needs``."""
    if getattr(_state, "trusted", False):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be the model's Params, got {type(value).__name__}")
    missing = [n for n in needs if n not in value]
    if missing:
        shown = ", ".join(map(repr, missing[:4])) + (" …" if len(missing) > 4 else "")
        raise ValueError(f"{name} lacks {shown}: pass the Params this model's init draws")
    for n in needs:
        array = value[n]
        if (
            isinstance(array, np.ndarray)
            and array.dtype.kind == "f"
            and not np.isfinite(array).all()
        ):
            raise ValueError(f"{name}[{n!r}] holds NaN or infinity: the parameters have diverged")
    return value


def function(value, name: str):
    """``value`` if it can be called (a model's predict, a render function)."""
    if not callable(value):
        raise TypeError(f"{name} must be a function, got {type(value).__name__}")
    return value


def random_state(value, name: str = "rng") -> np.random.RandomState:
    """``value`` if it is a numpy RandomState (the book's generators all are)."""
    if not isinstance(value, np.random.RandomState):
        raise TypeError(f"{name} must be a numpy RandomState, got {type(value).__name__}")
    return value


_drawn: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def params_of(model, value, name: str = "params") -> Mapping:
    """``value`` if it holds every array ``model.init`` draws, finite (:func:`params`); what a
    measure checks before it runs a model it is given."""
    if getattr(_state, "trusted", False):
        return value
    if not callable(getattr(model, "init", None)):
        raise TypeError(f"model must have an init method, got {type(model).__name__}")
    if model not in _drawn:
        _drawn[model] = tuple(model.init(0))
    return params(value, name, _drawn[model])


def model_params(method):
    """Decorator for a model's method whose argument after ``self`` is its parameters ``p``:
    refuse, naming p, anything but a mapping holding every array the model's ``init`` draws."""

    @functools.wraps(method)
    def checked(self, p, *args, **kwargs):
        params_of(self, p, "p")
        return method(self, p, *args, **kwargs)

    return checked
