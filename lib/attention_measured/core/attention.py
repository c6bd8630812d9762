"""Softmax, dropping steps, and scaled dot-product attention, with backward passes; masks,
positions and several heads (Part II); attention one block of keys at a time (Part III).

Part I, section 2 derives these; section 4 uses :func:`drop_each_step`. Conventions (the same as
torch's ``scaled_dot_product_attention``):

- a boolean ``mask`` is True where a query *may* attend;
- scores are divided by sqrt(d), d the size of a query and a key;
- a row whose every entry is masked gets weights of zero (not NaN), so that
  padding queries produce zero output and zero gradient.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import checks


def _as_mask(mask, shape) -> np.ndarray | None:
    """The mask as a boolean array broadcast against scores of ``shape``."""
    if mask is None:
        return None
    if isinstance(mask, np.ndarray) and mask.dtype == bool and mask.shape == shape:
        return mask  # already what the rest would make of it (a training step's own mask)
    mask = np.asarray(mask)
    if mask.dtype != bool:  # a wrong kind is a TypeError, as in checks (and transformer)
        raise TypeError(
            f"mask must be boolean (True where attention is allowed), got dtype {mask.dtype}"
        )
    try:
        return np.broadcast_to(mask, np.broadcast_shapes(mask.shape, shape))
    except ValueError:
        raise ValueError(
            f"mask of shape {mask.shape} does not broadcast with scores of shape {shape}"
        ) from None


def row_sums(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Sums over ``axis``, keeping it.

    Over the last axis through ``einsum``, several times faster than ``.sum`` for short rows;
    unlike a matrix product with a vector of ones it never calls BLAS, whose summation order
    (and so whose last bit) depends on the processor.  Both are exact functions of ``x`` on
    every x86 machine.
    """
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a numpy array, got {type(x).__name__}")
    if axis != -1:  # the last axis, the hot path, needs no check
        axis = checks.integer(axis, "axis", -x.ndim, x.ndim - 1)
    if axis in (-1, x.ndim - 1):
        return np.einsum("...j->...", x)[..., None]
    return x.sum(axis=axis, keepdims=True)


def _infinite_share(scores: np.ndarray, top: np.ndarray) -> np.ndarray:
    """Scores whose rows holding +inf keep only those entries, as equal finite scores (0)."""
    return np.where(np.isposinf(top), np.where(np.isposinf(scores), 0.0, -np.inf), scores)


def softmax(
    scores: np.ndarray,
    mask: np.ndarray | None = None,
    axis: int = -1,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Weights that sum to one over ``axis`` (the last by default), computed stably (section 2).

    scores: (..., m).  mask: boolean, broadcastable to scores, True where a step may receive
    weight.  Returns weights of the broadcast shape; masked steps get exactly 0, and a row with
    no allowed step is all zeros.  A row whose allowed scores include +inf shares its weight
    equally among those.  ``out``, optional: a float array of that shape to hold the weights,
    which may be ``scores`` itself.
    """
    trusted = checks.trusting()  # inside fit's loop: the first step checked what the rest get
    if not trusted:
        scores = checks.array(scores, "scores", finite=False, copy=False)  # -inf: masked step
        axis = checks.integer(axis, "axis")
        if scores.ndim == 0:
            raise ValueError(
                "scores must have at least one axis, the steps to weigh; got a single number"
            )
    if mask is None:  # the common case, without the guards below
        top = scores.max(axis=axis, keepdims=True)
        if not trusted and np.isnan(top).any():  # a NaN in a row makes its maximum NaN
            raise ValueError("scores must not hold NaN")
        if np.isposinf(top).any():  # +inf entries share their row's weight equally
            return softmax(_infinite_share(scores, top), axis=axis, out=out)
        exp = np.subtract(scores, top, out=_weights_out(out, scores.shape))
        np.exp(exp, out=exp)  # in place: one temporary instead of three
        exp /= row_sums(exp, axis)
        return exp
    mask = _as_mask(mask, scores.shape)
    if not trusted and np.isnan(scores.max(axis=axis)).any():
        raise ValueError("scores must not hold NaN")
    if out is None:
        scores = np.where(mask, scores, -np.inf)
    else:  # the same numbers, written into out (which may be scores itself)
        np.copyto(_weights_out(out, mask.shape), scores)
        np.copyto(out, -np.inf, where=~mask)
        scores = out
    top = scores.max(axis=axis, keepdims=True)
    if np.isposinf(top).any():
        scores = _infinite_share(scores, top)
        top = scores.max(axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    exp = np.subtract(scores, top, out=scores)  # scores is np.where's own array by now
    np.exp(exp, out=exp)
    # a row with an allowed step sums to at least 1, its largest term being exp(0); a row with
    # none sums to 0, which becomes 1, so that its zeros stay zeros (without a masked divide)
    return np.divide(exp, np.maximum(row_sums(exp, axis), 1.0), out=exp if out is None else out)


def _weights_out(out, shape) -> np.ndarray | None:
    """``out`` checked to be a float array of ``shape`` (the weights' buffer), or None."""
    if out is not None and not (
        isinstance(out, np.ndarray) and out.shape == shape and out.dtype == float
    ):
        raise ValueError(f"out must be a float array of shape {shape}, got {out!r:.60}")
    return out


def softmax_backward(
    weights: np.ndarray, grad_weights: np.ndarray, axis: int = -1, out: np.ndarray | None = None
) -> np.ndarray:
    """Gradient with respect to the scores, given the gradient with respect to the weights.

    weights, grad_weights: (..., m), the softmax taken over ``axis``.  Returns w_i * (g_i -
    sum_j w_j g_j).  Masked steps have w_i = 0 and so get 0.  ``out``, optional: a float array
    of their shape to hold the result, which may be ``grad_weights`` itself.
    """
    if not checks.trusting():
        weights = checks.array(weights, "weights", copy=False)
        grad_weights = checks.array(grad_weights, "grad_weights", shape=weights.shape, copy=False)
        axis = checks.integer(axis, "axis", -max(weights.ndim, 1), max(weights.ndim - 1, 0))
    w, g = weights, grad_weights
    if axis not in (-1, weights.ndim - 1):  # the sum over ``axis``, moved last
        w, g = np.moveaxis(weights, axis, -1), np.moveaxis(grad_weights, axis, -1)
    inner = np.einsum("...j,...j->...", w, g)
    grad_scores = np.subtract(  # inner = sum_j w_j g_j, without BLAS
        grad_weights, np.expand_dims(inner, axis), out=_weights_out(out, np.shape(grad_weights))
    )
    grad_scores *= weights
    return grad_scores


def drop_each_step(scores: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """The weights that remain when each step in turn is dropped and the rest renormalised.

    scores: (..., m).  Returns (..., m, m): entry [..., t, :] is the softmax over every step but
    t (section 4, "A high weight is not causation"). The softmax is recomputed without the step
    rather than dividing by 1 - w_t, which loses precision when w_t is close to one.
    """
    scores = checks.array(scores, "scores", finite=False, copy=False)
    if scores.ndim < 1:
        raise ValueError("scores must have an axis of steps, (..., m)")
    m = scores.shape[-1]
    keep = ~np.eye(m, dtype=bool)
    if mask is not None:
        keep = keep & _as_mask(mask, scores.shape)[..., None, :]
    return softmax(scores[..., None, :], keep)


def _check_qkv(q, k, v):
    q, k, v = (checks.array(a, n, copy=False) for a, n in ((q, "q"), (k, "k"), (v, "v")))
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise ValueError(
            "q, k and v must have at least two dimensions: (..., n, d), (..., m, d), (..., m, dv)"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"queries and keys must have the same size d, got {q.shape[-1]} and {k.shape[-1]}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"keys and values must have the same number of steps m, got {k.shape[-2]} and "
            f"{v.shape[-2]}"
        )
    return q, k, v


def _batch(*arrays) -> tuple:
    """The leading axes that q, k and v (..., ·, ·) share once broadcast."""
    return np.broadcast_shapes(*(a.shape[:-2] for a in arrays))


def scaled_dot_product_attention(q, k, v, mask=None):
    """Each query's weighted average of the values (section 2).

    q: (..., n, d) queries, k: (..., m, d) keys, v: (..., m, dv) values, mask: boolean
    broadcastable to (..., n, m), True where a query may attend. Returns ``(output, weights)``
    of shapes (..., n, dv) and (..., n, m), with weights = softmax(q kᵀ / sqrt(d)) and output =
    weights v.
    """
    q, k, v = _check_qkv(q, k, v)
    scores = q @ np.swapaxes(k, -1, -2)
    scores /= np.sqrt(q.shape[-1])
    weights = softmax(scores, mask)
    return weights @ v, weights


def scaled_dot_product_attention_backward(q, k, v, weights, grad_output):
    """Gradients of :func:`scaled_dot_product_attention` (section 2).

    q, k, v, weights as in the forward pass (weights already carry the mask); grad_output: (...,
    n, dv).  Returns (grad_q, grad_k, grad_v) shaped like q, k and v (with their leading axes
    broadcast).  Each line undoes one forward line, in reverse order.
    """
    q, k, v = _check_qkv(q, k, v)
    batch = _batch(q, k, v)
    weights = checks.array(weights, "weights", copy=False)
    if weights.shape != batch + (q.shape[-2], k.shape[-2]):
        raise ValueError(
            f"weights {weights.shape} must have the shape q {q.shape} and k {k.shape} give, "
            f"{batch + (q.shape[-2], k.shape[-2])}"
        )
    grad_output = checks.array(grad_output, "grad_output", copy=False)
    if grad_output.shape != batch + (q.shape[-2], v.shape[-1]):
        raise ValueError(
            f"grad_output must have the output's shape, {batch + (q.shape[-2], v.shape[-1])}; "
            f"got {grad_output.shape}"
        )
    scale = 1.0 / np.sqrt(q.shape[-1])
    grad_v = np.swapaxes(weights, -1, -2) @ grad_output  # o = w v
    grad_weights = grad_output @ np.swapaxes(v, -1, -2)
    # w = softmax(s); the scores' gradient is written over the weights', this call's own array
    grad_scores = softmax_backward(weights, grad_weights, out=grad_weights)
    grad_scores *= scale
    grad_q = grad_scores @ k  # scores = q kᵀ * scale
    grad_k = np.swapaxes(grad_scores, -1, -2) @ q
    return grad_q, grad_k, grad_v


# heads, order
def causal_mask(steps: int) -> np.ndarray:
    """(steps, steps) boolean, True where query i may attend key j, i.e. j <= i (Part II,
    self-attention).
    """
    steps = checks.integer(steps, "steps", 1)
    return np.tril(np.ones((steps, steps), dtype=bool))


def padding_mask(lengths, steps: int) -> np.ndarray:
    """(N, 1, steps) boolean, True for the first lengths[i] steps of sequence i (Part II,
    self-attention).
    """
    steps = checks.integer(steps, "steps", 1)
    lengths = checks.integers(lengths, "lengths")
    if lengths.ndim != 1 or not lengths.size or np.any(lengths < 0) or np.any(lengths > steps):
        raise ValueError(f"lengths must be a non-empty 1-d array of values between 0 and {steps}")
    return (np.arange(steps) < lengths[:, None])[:, None, :]


def sinusoidal_positions(steps: int, size: int) -> np.ndarray:
    """Vaswani et al.'s positional encodings (steps, size): sin on even columns, cos on odd ones
    (Part II, order).

    Column pair (2i, 2i+1) turns at the frequency 1 / 10000^(2i / size).
    """
    steps, size = checks.integer(steps, "steps", 1), checks.integer(size, "size", 2)
    if size % 2:
        raise ValueError(f"size must be even (sin and cos columns in pairs), got {size}")
    angles = np.arange(steps)[:, None] / 10000.0 ** (np.arange(0, size, 2) / size)
    encoding = np.empty((steps, size))
    encoding[:, 0::2], encoding[:, 1::2] = np.sin(angles), np.cos(angles)
    return encoding


def as_rows(x: np.ndarray) -> np.ndarray:
    """(..., K) as a matrix of rows (·, K): every position's vector one row, for one matrix
    product over all the leading axes (the backward passes of Parts III and IV)."""
    if np.ndim(x) < 1:
        raise ValueError("x must have at least one axis, (..., K)")
    return x.reshape(-1, x.shape[-1])


def _project(x: np.ndarray, W: np.ndarray) -> np.ndarray:
    """x @ W for x (..., d_in) and W (d_in, d_out), as one matrix product over all leading
    axes."""
    return (as_rows(x) @ W).reshape(x.shape[:-1] + (W.shape[1],))


def split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """(..., n, H·dh) -> (..., H, n, dh): each head's block of columns as its own sequence
    (Part II, several heads)."""
    x = checks.array(x, "x", finite=False, copy=False)  # a reshape: its numbers are not read
    heads = checks.integer(heads, "heads", 1)
    if x.ndim < 2 or x.shape[-1] % heads:
        raise ValueError(f"x must be (..., n, H·dh) with its last axis split into {heads} heads")
    return np.swapaxes(x.reshape(x.shape[:-1] + (heads, x.shape[-1] // heads)), -2, -3)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(..., H, n, dh) -> (..., n, H·dh), undoing :func:`split_heads` (Part II, several
    heads)."""
    x = checks.array(x, "x", finite=False, copy=False)
    if x.ndim < 3:
        raise ValueError(f"x must be (..., H, n, dh), got shape {x.shape}")
    x = np.swapaxes(x, -2, -3)
    return x.reshape(x.shape[:-2] + (-1,))


def _check_heads(W_Q, W_K, W_V, W_O, heads):
    W_Q, W_K, W_V, W_O = (
        checks.array(a, name, ndim=2, copy=False)
        for a, name in ((W_Q, "W_Q"), (W_K, "W_K"), (W_V, "W_V"), (W_O, "W_O"))
    )
    heads = checks.integer(heads, "heads", 1)
    if W_Q.shape != W_K.shape or W_Q.shape[1] % heads or W_V.shape[1] % heads:
        raise ValueError(
            f"W_Q and W_K must have one shape whose columns split into {heads} heads; "
            f"got {W_Q.shape}, {W_K.shape}, W_V {W_V.shape}"
        )
    if W_O.shape[0] != W_V.shape[1]:
        raise ValueError(
            f"W_O must have {W_V.shape[1]} rows (the concatenated heads), got {W_O.shape}"
        )
    return W_Q, W_K, W_V, W_O


def _check_biases(biases, W_Q, W_K, W_V, W_O):
    """The four bias vectors (b_q, b_k, b_v, b_o), zeros when ``biases`` is None."""
    sizes = (W_Q.shape[1], W_K.shape[1], W_V.shape[1], W_O.shape[1])
    if biases is None:
        return tuple(np.zeros(n) for n in sizes)
    if isinstance(biases, (str, bytes)) or not hasattr(biases, "__len__"):
        raise TypeError(f"biases must be four vectors (b_q, b_k, b_v, b_o), got {biases!r}")
    biases = tuple(checks.array(b, "biases") for b in biases)
    if len(biases) != 4 or any(b.shape != (n,) for b, n in zip(biases, sizes)):
        raise ValueError(
            f"biases must be (b_q, b_k, b_v, b_o) of sizes {sizes}, got "
            f"{[np.shape(b) for b in biases]}"
        )
    return biases


def _check_queries_keys(queries, keys, W_Q):
    """queries (..., n, d_in) and keys (..., m, d_in) as float arrays, d_in being W_Q's rows."""
    queries = checks.array(queries, "queries", copy=False)
    keys = checks.array(keys, "keys", copy=False)
    for x, name in ((queries, "queries"), (keys, "keys")):
        if x.ndim < 2 or x.shape[-1] != W_Q.shape[0]:
            raise ValueError(f"{name} must be (..., steps, {W_Q.shape[0]}), got shape {x.shape}")
    try:
        np.broadcast_shapes(queries.shape[:-2], keys.shape[:-2])
    except ValueError:
        raise ValueError(
            f"queries {queries.shape} and keys {keys.shape} must share their leading axes"
        ) from None
    return queries, keys


def _heads_qkv(queries, keys, W_Q, W_K, W_V, heads, biases):
    """Queries, keys and values projected and split into heads: each (..., H, ·, d_head)."""
    pairs = ((queries, W_Q, biases[0]), (keys, W_K, biases[1]), (keys, W_V, biases[2]))
    return tuple(split_heads(_project(x, W) + b, heads) for x, W, b in pairs)


def multi_head_attention(
    queries, keys, W_Q, W_K, W_V, W_O, heads: int, mask=None, biases=None, kept=None
):
    """Multi-head attention with explicit projections (Part II, several heads).

    queries: (..., n, d_in); keys: (..., m, d_in), which also give the values; W_Q, W_K: (d_in,
    H·dk); W_V: (d_in, H·dv); W_O: (H·dv, d_out); mask: boolean, broadcastable to (..., n, m),
    True where a query may attend. The columns of each projection are split into ``heads``
    blocks; head h runs :func:`scaled_dot_product_attention` on its block, the heads' outputs
    are concatenated and multiplied by W_O.  ``biases``, optional, are (b_q, b_k, b_v, b_o),
    added after each projection (Part III's layers have them, as torch's do).  ``kept``, optional,
    an empty dict that receives the heads' projected queries, keys and values and their outputs
    before W_O, for :func:`multi_head_attention_backward` to read instead of computing them
    again, as training does.  Returns ``(output (..., n, d_out), weights (..., H, n, m))``.
    """
    W_Q, W_K, W_V, W_O = _check_heads(W_Q, W_K, W_V, W_O, heads)
    b = _check_biases(biases, W_Q, W_K, W_V, W_O)
    queries, keys = _check_queries_keys(queries, keys, W_Q)
    head_mask = None if mask is None else checks.mask(mask, "mask")
    if head_mask is not None and head_mask.ndim < 2:
        raise ValueError(f"mask must be (..., n, m), True where a query may attend; got {mask!r}")
    if kept is not None and not isinstance(kept, dict):
        raise TypeError(f"kept must be a dict to fill, or None; got {type(kept).__name__}")
    q, k, v = _heads_qkv(queries, keys, W_Q, W_K, W_V, heads, b)
    head_mask = None if mask is None else head_mask[..., None, :, :]
    outputs, weights = scaled_dot_product_attention(q, k, v, head_mask)
    merged = merge_heads(outputs)
    if kept is not None:
        kept.update(q=q, k=k, v=v, merged=merged)
    output = _project(merged, W_O)
    return (output if biases is None else output + b[3]), weights


def step_contributions(weights, values, heads: int = 1, W_O=None) -> np.ndarray:
    """What each step adds to each row's attention output, Kobayashi et al.'s (2020) α f(x)
    (Part VI, "Seven rankings"): (..., n, m, d), the vector Σ_h α_{h,i,j} v_{h,j} W_O^h that
    step j adds to row i, whose norm ranks the steps.

    weights: (..., n, m) for one head, (..., H, n, m) for ``heads`` = H; values: (..., m, H·dv),
    the values the weights average, biases included; W_O: (H·dv, d), the output projection
    the heads' outputs pass through, or None (d = H·dv).  Summed over the steps, the vectors
    give the attention's output (before W_O's bias)."""
    heads = checks.integer(heads, "heads", 1)
    weights = checks.array(weights, "weights", copy=False)
    values = checks.array(values, "values", copy=False)
    if heads == 1:
        weights = weights[..., None, :, :]
    if weights.ndim < 3 or values.ndim < 2 or values.shape[-2] != weights.shape[-1]:
        raise ValueError(
            f"weights (..., [H,] n, m) and values (..., m, H·dv) must share m, got "
            f"{weights.shape} and {values.shape}"
        )
    if weights.shape[-3] != heads or values.shape[-1] % heads:
        raise ValueError(f"weights and values must hold {heads} heads, got {weights.shape}")
    per_head = split_heads(values, heads)  # (..., H, m, dv)
    if W_O is not None:
        W_O = checks.array(W_O, "W_O", shape=(values.shape[-1], None), copy=False)
        dv = values.shape[-1] // heads
        per_head = np.einsum("...hmv,hvd->...hmd", per_head, W_O.reshape(heads, dv, -1))
    return np.einsum("...hnm,...hmd->...nmd", weights, per_head)


def multi_head_attention_backward(
    queries,
    keys,
    W_Q,
    W_K,
    W_V,
    W_O,
    heads: int,
    weights,
    grad_output,
    biases=None,
    kept=None,
):
    """Gradients of :func:`multi_head_attention`, given its weights and grad_output (..., n,
    d_out); ``kept``: what the forward pass kept for it (its ``kept`` argument), or None to
    compute it again.

    Returns a dict with grad_queries, grad_keys, W_Q, W_K, W_V, W_O (each shaped like its
    argument; weight gradients summed over the leading axes), and b_q, b_k, b_v, b_o when
    ``biases`` are given.
    """
    W_Q, W_K, W_V, W_O = _check_heads(W_Q, W_K, W_V, W_O, heads)
    b = _check_biases(biases, W_Q, W_K, W_V, W_O)
    queries, keys = _check_queries_keys(queries, keys, W_Q)
    batch = queries.shape[:-2]
    if keys.shape[:-2] != batch:
        raise ValueError(
            f"queries {queries.shape} and keys {keys.shape} must have the same leading axes "
            "here (the weight gradients sum over them)"
        )
    n, m = queries.shape[-2], keys.shape[-2]
    weights = checks.array(weights, "weights", shape=batch + (heads, n, m), copy=False)
    grad_output = checks.array(
        grad_output, "grad_output", shape=batch + (n, W_O.shape[1]), copy=False
    )
    if kept:
        q, k, v, merged = (kept[name] for name in ("q", "k", "v", "merged"))
    else:
        q, k, v = _heads_qkv(queries, keys, W_Q, W_K, W_V, heads, b)
        merged = merge_heads(weights @ v)
    grad_W_o = as_rows(merged).T @ as_rows(grad_output)  # output = merged W_O
    grad_merged = _project(grad_output, W_O.T)
    grad_q, grad_k, grad_v = (
        merge_heads(g)
        for g in scaled_dot_product_attention_backward(
            q, k, v, weights, split_heads(grad_merged, heads)
        )
    )
    grads = {
        "grad_queries": _project(grad_q, W_Q.T),
        "grad_keys": _project(grad_k, W_K.T) + _project(grad_v, W_V.T),
        "W_Q": as_rows(queries).T @ as_rows(grad_q),
        "W_K": as_rows(keys).T @ as_rows(grad_k),
        "W_V": as_rows(keys).T @ as_rows(grad_v),
        "W_O": grad_W_o,
    }
    if biases is not None:
        for name, g in (("b_q", grad_q), ("b_k", grad_k), ("b_v", grad_v), ("b_o", grad_output)):
            grads[name] = as_rows(g).sum(axis=0)
    return grads


class Running(NamedTuple):
    """What the online softmax keeps per query after reading some keys (Part III, what attention
    costs): ``top`` (..., 1), the largest score so far (−inf before any allowed key); ``total``
    (..., 1), the sum of exp(score − top) over the keys read; ``acc`` (..., dv), the sum of
    exp(score − top) · value.  ``acc / total`` is the attention's output over those keys."""

    top: np.ndarray
    total: np.ndarray
    acc: np.ndarray


def _online_update(running: Running, scores: np.ndarray, values: np.ndarray) -> Running:
    """One block of the online softmax: ``running`` after reading ``scores`` (..., block) and
    their ``values`` (..., block, dv); the past is rescaled by exp(top − new top)."""
    top, total, acc = running
    new_top = np.maximum(top, scores.max(axis=-1, keepdims=True))
    # a query with no allowed key so far keeps top = -inf; shift by 0 there, not by -inf
    shift = np.where(np.isneginf(new_top), 0.0, new_top)
    rescale = np.exp(top - shift)  # exp(-inf) = 0 on the first allowed block
    e = np.exp(scores - shift)  # masked keys: exp(-inf) = 0
    return Running(new_top, total * rescale + row_sums(e, -1), acc * rescale + e @ values)


def online_softmax(scores, values, block: int) -> list[Running]:
    """The online softmax of one or more queries, step by step (Part III, what attention
    costs): ``scores`` (..., m), −inf where a key is masked, and ``values`` (..., m, dv), read
    ``block`` keys at a time.  Returns the :class:`Running` state after each block (⌈m /
    block⌉ of them); the last one's acc / total is softmax(scores) @ values, as
    :func:`tiled_attention` computes it (zeros where no key is allowed)."""
    scores = checks.array(scores, "scores", finite=False)
    if scores.ndim == 0 or scores.shape[-1] == 0:
        raise ValueError(f"scores must be (..., m) with at least one key, got {scores.shape}")
    if np.isnan(scores).any() or np.isposinf(scores).any():
        raise ValueError("scores must be finite numbers or -inf (a masked key)")
    values = checks.array(values, "values")
    if values.ndim < 2 or values.shape[-2] != scores.shape[-1]:
        raise ValueError(
            f"values must be (..., m, dv) with m = {scores.shape[-1]} (one per score), "
            f"got {values.shape}"
        )
    block = checks.integer(block, "block", 1)
    dv = values.shape[-1]
    batch = np.broadcast_shapes(scores.shape[:-1], values.shape[:-2])
    # each query's scores as a row of one query (..., 1, m), as tiled_attention holds them
    running = Running(
        np.full(batch + (1, 1), -np.inf), np.zeros(batch + (1, 1)), np.zeros(batch + (1, dv))
    )
    steps = []
    for start in range(0, scores.shape[-1], block):
        keys = slice(start, start + block)
        running = _online_update(running, scores[..., None, keys], values[..., keys, :])
        steps.append(Running(*(np.squeeze(x, -2) for x in running)))
    return steps


def tiled_attention(q, k, v, block: int, mask=None) -> np.ndarray:
    """:func:`scaled_dot_product_attention`'s output, computed one block of keys at a time
    (Part III, what attention costs).

    q: (..., n, d), k: (..., m, d), v: (..., m, dv), mask: boolean broadcastable to (..., n, m),
    True where a query may attend; block: how many keys each step reads.  Returns the output
    (..., n, dv), equal to the plain computation up to rounding, but never holds more than
    (..., n, block) scores: a running maximum, a running sum of exponentials and a running
    weighted sum of values are rescaled whenever a new block raises the maximum (the online
    softmax of Milakov & Gimelshein, the recurrence behind FlashAttention).  A query with no
    allowed key gets zeros, as in the plain version.  Queries and keys must be finite.
    """
    q, k, v = _check_qkv(q, k, v)
    block = checks.integer(block, "block", 1)
    n, m = q.shape[-2], k.shape[-2]
    scores_shape = np.broadcast_shapes(q.shape[:-2], k.shape[:-2]) + (n, m)
    mask = _as_mask(mask, scores_shape)
    batch = np.broadcast_shapes(scores_shape[:-2], v.shape[:-2])
    running = Running(
        np.full(batch + (n, 1), -np.inf),
        np.zeros(batch + (n, 1)),
        np.zeros(batch + (n, v.shape[-1])),
    )
    scale = 1.0 / np.sqrt(q.shape[-1])
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(k))):
        raise ValueError("tiled_attention needs finite queries and keys")
    for start in range(0, m, block):
        keys = slice(start, start + block)
        scores = q @ np.swapaxes(k[..., keys, :], -1, -2) * scale  # (..., n, block)
        if mask is not None:
            scores = np.where(mask[..., keys], scores, -np.inf)
        running = _online_update(running, scores, v[..., keys, :])
    top, total, acc = running
    return np.divide(acc, total, out=np.zeros_like(acc), where=total > 0)
