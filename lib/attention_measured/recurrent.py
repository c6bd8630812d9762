"""Recurrent cells by hand, for Part IV's encoder-decoder (Part IV, the recurrent
encoder-decoder).

A GRU cell (Cho et al. 2014) reads one step x and the previous state h and returns the next
state.  Its parameters carry the names, shapes and gate order of torch's ``nn.GRUCell``, so
weights move between this book and torch unchanged:

- ``weight_ih`` (3H, I) and ``bias_ih`` (3H,) act on the input, ``weight_hh`` (3H, H) and
  ``bias_hh`` (3H,) on the state;
- their rows are three blocks of H, in torch's order: reset r, update z, new n.

    r = σ(W_ir x + b_ir + W_hr h + b_hr)
    z = σ(W_iz x + b_iz + W_hz h + b_hz)
    n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
    h' = (1 − z) ⊙ n + z ⊙ h

In code, x and h are batches of rows, (N, I) and (N, H), so ``x @ weight_ih.T`` applies the
input weights to every row.
"""

from __future__ import annotations

import numpy as np

from .losses import sigmoid

GRU_NAMES = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def _check_gru(params, x, h) -> tuple[np.ndarray, ...]:
    """The four arrays, x and h as floats, with shapes checked against each other."""
    missing = [name for name in GRU_NAMES if name not in params]
    if missing:
        raise ValueError(f"GRU parameters need {', '.join(GRU_NAMES)}; missing {missing}")
    W_ih, W_hh, b_ih, b_hh = (np.asarray(params[name], dtype=float) for name in GRU_NAMES)
    x, h = np.asarray(x, dtype=float), np.asarray(h, dtype=float)
    if W_hh.ndim != 2 or W_hh.shape[0] != 3 * W_hh.shape[1]:
        raise ValueError(f"weight_hh must be (3H, H), got {W_hh.shape}")
    H = W_hh.shape[1]
    if W_ih.ndim != 2 or W_ih.shape[0] != 3 * H:
        raise ValueError(f"weight_ih must be (3H, I) = ({3 * H}, I), got {W_ih.shape}")
    if b_ih.shape != (3 * H,) or b_hh.shape != (3 * H,):
        raise ValueError(f"bias_ih and bias_hh must be ({3 * H},), got {b_ih.shape}, {b_hh.shape}")
    if x.ndim != 2 or x.shape[1] != W_ih.shape[1]:
        raise ValueError(f"x must be (N, {W_ih.shape[1]}), got {x.shape}")
    if h.shape != (x.shape[0], H):
        raise ValueError(f"h must be (N, H) = ({x.shape[0]}, {H}), got {h.shape}")
    return W_ih, W_hh, b_ih, b_hh, x, h


def _gates(W_ih, W_hh, b_ih, b_hh, x, h):
    """(r, z, n, the state's part of n's argument) for a batch: each (N, H)."""
    r_i, z_i, n_i = np.split(x @ W_ih.T + b_ih, 3, axis=1)
    r_h, z_h, n_h = np.split(h @ W_hh.T + b_hh, 3, axis=1)
    r, z = sigmoid(r_i + r_h), sigmoid(z_i + z_h)
    return r, z, np.tanh(n_i + r * n_h), n_h


def gru_cell(params, x, h) -> np.ndarray:
    """The next state of a GRU cell, as torch's ``nn.GRUCell`` computes it (Part IV).

    params: a mapping with ``weight_ih`` (3H, I), ``weight_hh`` (3H, H), ``bias_ih`` and
    ``bias_hh`` (3H,), gates in the order reset, update, new.  x: (N, I) inputs, h: (N, H)
    previous states.  Returns (N, H).
    """
    W_ih, W_hh, b_ih, b_hh, x, h = _check_gru(params, x, h)
    _, z, n, _ = _gates(W_ih, W_hh, b_ih, b_hh, x, h)
    return (1.0 - z) * n + z * h


def gru_cell_backward(params, x, h, grad_next) -> tuple[dict, np.ndarray, np.ndarray]:
    """Gradients of :func:`gru_cell` (Part IV): each line undoes one forward line.

    grad_next: (N, H), the gradient of the loss with respect to the cell's output.  Returns
    (gradients of the four parameters under their names, grad_x (N, I), grad_h (N, H)).
    """
    W_ih, W_hh, b_ih, b_hh, x, h = _check_gru(params, x, h)
    grad_next = np.asarray(grad_next, dtype=float)
    if grad_next.shape != h.shape:
        raise ValueError(f"grad_next must be shaped like h {h.shape}, got {grad_next.shape}")
    r, z, n, n_h = _gates(W_ih, W_hh, b_ih, b_hh, x, h)
    grad_n = grad_next * (1.0 - z)  # h' = (1 − z) n + z h
    grad_z = grad_next * (h - n)
    grad_n_arg = grad_n * (1.0 - n**2)  # n = tanh(n_i + r n_h)
    grad_r = grad_n_arg * n_h
    grad_r_arg = grad_r * r * (1.0 - r)  # r = σ(r_i + r_h)
    grad_z_arg = grad_z * z * (1.0 - z)  # z = σ(z_i + z_h)
    grad_i = np.concatenate([grad_r_arg, grad_z_arg, grad_n_arg], axis=1)  # (N, 3H)
    grad_h_gates = np.concatenate([grad_r_arg, grad_z_arg, grad_n_arg * r], axis=1)
    grads = {
        "weight_ih": grad_i.T @ x,
        "weight_hh": grad_h_gates.T @ h,
        "bias_ih": grad_i.sum(axis=0),
        "bias_hh": grad_h_gates.sum(axis=0),
    }
    grad_x = grad_i @ W_ih
    grad_h = grad_h_gates @ W_hh + grad_next * z
    return grads, grad_x, grad_h
