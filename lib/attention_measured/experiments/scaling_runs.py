"""Why scores are divided by sqrt(d): the softmax of random queries and keys at initialisation,
with and without the division (Part II, section 1)."""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.attention import softmax


def scaling_at_init(
    sizes=(4, 16, 64, 256, 1024), steps: int = 16, trials: int = 2000, seed: int = 0
) -> dict:
    """Scores of random queries and keys at initialisation, with and without dividing by sqrt(d)
    (section 5).

    Queries and keys have independent standard normal entries, as projections of unit-variance
    inputs with variance-preserving initial weights give. For each d in ``sizes``: the variance
    of q·k (unscaled), the mean largest weight of a softmax over ``steps`` keys, and the mean
    size of the softmax's gradient, ‖∂a/∂e‖ (Frobenius norm of the Jacobian), each unscaled and
    scaled.  Returns arrays of shape (len(sizes),).
    """
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise TypeError(f"sizes must be a list of widths d, got {sizes!r}")
    sizes = [checks.integer(d, "sizes", 1) for d in sizes]
    if not sizes:
        raise ValueError("sizes must name at least one width d")
    steps, trials = checks.integer(steps, "steps", 1), checks.integer(trials, "trials", 1)
    rng = np.random.RandomState(checks.seed(seed))
    out = {
        k: []
        for k in ("variance", "max_weight", "max_weight_scaled", "gradient", "gradient_scaled")
    }
    for d in sizes:
        d = checks.integer(d, "size", 1)
        q = rng.normal(size=(trials, 1, d))
        k = rng.normal(size=(trials, steps, d))
        scores = (q @ np.swapaxes(k, 1, 2))[:, 0]  # (trials, steps)
        out["variance"].append(float(scores.var()))
        for suffix, s in (("", scores), ("_scaled", scores / np.sqrt(d))):
            a = softmax(s)
            jacobian = a[:, :, None] * (
                np.eye(steps) - a[:, None, :]
            )  # ∂a_i/∂e_j = a_i (δ_ij − a_j)
            out["max_weight" + suffix].append(float(a.max(axis=1).mean()))
            out["gradient" + suffix].append(float(np.sqrt((jacobian**2).sum(axis=(1, 2))).mean()))
    return {"sizes": np.array(sizes), **{k: np.array(v) for k, v in out.items()}}
