"""The lesson's random stream, reproduced bit for bit (Part I, section 1).

The lesson never uses a library generator.  Each stream is started from an integer seed by a
32-bit integer hash (the finaliser of MurmurHash3), and then advanced by a linear congruential
generator with the multiplier and increment of *Numerical Recipes*.  Every draw is the 32-bit
state divided by 2**32, a float in [0, 1).

The functions below run many streams side by side: ``seeds`` may be an array, and ``draws(seeds,
k)`` returns the first ``k`` draws of every stream as a ``(len(seeds), k)`` array, identical to
drawing from each stream in turn.
"""

from __future__ import annotations

import numpy as np

from . import checks

MASK32 = 0xFFFFFFFF


MULTIPLIER = 1664525


INCREMENT = 1013904223


def check_seed(seed, name: str = "seed") -> int:
    """``seed`` as a Python int in [0, 2**64), the stream's seeds, or an error naming ``name``."""
    return checks.seed(seed, name, below=2**64)


def _hash32(seeds: np.ndarray) -> np.ndarray:
    """Scramble integer seeds into 32-bit starting states.

    seeds: integer array of any shape; returns a uint64 array of the same shape holding values
    below 2**32.
    """
    x = np.asarray(seeds, dtype=np.uint64)
    x = ((x ^ (x >> np.uint64(16))) * np.uint64(2246822507)) & np.uint64(MASK32)
    x = ((x ^ (x >> np.uint64(13))) * np.uint64(3266489909)) & np.uint64(MASK32)
    return (x ^ (x >> np.uint64(16))) & np.uint64(MASK32)


def draws(seeds, count: int) -> np.ndarray:
    """The first ``count`` uniform draws of the stream started by each seed.

    seeds: an integer or a 1-d sequence of S integers. Returns float64 of shape (S, count) (or
    (count,) for a single seed).
    """
    single = np.ndim(seeds) == 0
    seed_list = [seeds] if single else list(seeds)
    seed_list = [check_seed(s, "seeds") for s in seed_list]
    count = checks.integer(count, "count", 0)
    state = _hash32(np.array(seed_list, dtype=np.uint64))
    out = np.empty((len(seed_list), int(count)))
    for j in range(int(count)):
        state = (state * np.uint64(MULTIPLIER) + np.uint64(INCREMENT)) & np.uint64(MASK32)
        out[:, j] = state / 4294967296.0
    return out[0] if single else out
