"""Softmax, dropping steps, and scaled dot-product attention, with backward passes.

Part I, section 2 derives these; section 4 uses :func:`drop_each_step`.
Conventions (the same as torch's ``scaled_dot_product_attention``):

- a boolean ``mask`` is True where a query *may* attend;
- scores are divided by sqrt(d), d the size of a query and a key;
- a row whose every entry is masked gets weights of zero (not NaN), so that
  padding queries produce zero output and zero gradient.
"""
from __future__ import annotations

import numpy as np


def _as_mask(mask, shape) -> np.ndarray | None:
    """The mask as a boolean array broadcast against scores of ``shape``."""
    if mask is None:
        return None
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise ValueError(f"mask must be boolean (True where attention is allowed), got dtype {mask.dtype}")
    try:
        return np.broadcast_to(mask, np.broadcast_shapes(mask.shape, shape))
    except ValueError:
        raise ValueError(f"mask of shape {mask.shape} does not broadcast with scores of shape {shape}") from None


def _row_sums(x: np.ndarray) -> np.ndarray:
    """Sums over the last axis, keeping it (a matrix product: several times faster than .sum for short rows)."""
    return (x @ np.ones(x.shape[-1]))[..., None]


def softmax(scores: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Weights that sum to one over the last axis, computed stably (section 2).

    scores: (..., m).  mask: boolean, broadcastable to scores, True where a
    step may receive weight.  Returns weights of the broadcast shape (..., m); masked steps
    get exactly 0, and a row with no allowed step is all zeros.
    """
    scores = np.asarray(scores, dtype=float)
    if mask is None:                      # the common case, without the guards below
        exp = scores - scores.max(axis=-1, keepdims=True)
        np.exp(exp, out=exp)              # in place: one temporary instead of three
        exp /= _row_sums(exp)
        return exp
    mask = _as_mask(mask, scores.shape)
    scores = np.where(mask, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    exp = scores - top
    np.exp(exp, out=exp)
    total = _row_sums(exp)
    return np.divide(exp, total, out=exp, where=total > 0)   # rows with no allowed step stay all zeros


def softmax_backward(weights: np.ndarray, grad_weights: np.ndarray) -> np.ndarray:
    """Gradient with respect to the scores, given the gradient with respect to the weights.

    weights, grad_weights: (..., m).  Returns (..., m):
    w_i * (g_i - sum_j w_j g_j).  Masked steps have w_i = 0 and so get 0.
    """
    return weights * (grad_weights - _row_sums(weights * grad_weights))


def drop_each_step(scores: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """The weights that remain when each step in turn is dropped and the rest renormalised.

    scores: (..., m).  Returns (..., m, m): entry [..., t, :] is the softmax
    over every step but t (section 4, "A high weight is not causation").
    The softmax is recomputed without the step rather than dividing by
    1 - w_t, which loses precision when w_t is close to one.
    """
    scores = np.asarray(scores, dtype=float)
    m = scores.shape[-1]
    keep = ~np.eye(m, dtype=bool)
    if mask is not None:
        keep = keep & _as_mask(mask, scores.shape)[..., None, :]
    return softmax(scores[..., None, :], keep)


def _check_qkv(q, k, v):
    q, k, v = (np.asarray(a, dtype=float) for a in (q, k, v))
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise ValueError("q, k and v must have at least two dimensions: (..., n, d), (..., m, d), (..., m, dv)")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"queries and keys must have the same size d, got {q.shape[-1]} and {k.shape[-1]}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"keys and values must have the same number of steps m, got {k.shape[-2]} and {v.shape[-2]}")
    return q, k, v


def scaled_dot_product_attention(q, k, v, mask=None):
    """Each query's weighted average of the values (section 2).

    q: (..., n, d) queries, k: (..., m, d) keys, v: (..., m, dv) values,
    mask: boolean broadcastable to (..., n, m), True where a query may attend.
    Returns ``(output, weights)`` of shapes (..., n, dv) and (..., n, m), with
    weights = softmax(q kᵀ / sqrt(d)) and output = weights v.
    """
    q, k, v = _check_qkv(q, k, v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    weights = softmax(scores, mask)
    return weights @ v, weights


def scaled_dot_product_attention_backward(q, k, v, weights, grad_output):
    """Gradients of :func:`scaled_dot_product_attention` (section 2).

    q, k, v, weights as in the forward pass (weights already carry the mask);
    grad_output: (..., n, dv).  Returns (grad_q, grad_k, grad_v) shaped like
    q, k and v.  Each line undoes one forward line, in reverse order.
    """
    q, k, v = _check_qkv(q, k, v)
    scale = 1.0 / np.sqrt(q.shape[-1])
    grad_v = np.swapaxes(weights, -1, -2) @ grad_output          # output = weights v
    grad_weights = grad_output @ np.swapaxes(v, -1, -2)
    grad_scores = softmax_backward(weights, grad_weights) * scale  # weights = softmax(scores)
    grad_q = grad_scores @ k                                      # scores = q kᵀ * scale
    grad_k = np.swapaxes(grad_scores, -1, -2) @ q
    return grad_q, grad_k, grad_v
