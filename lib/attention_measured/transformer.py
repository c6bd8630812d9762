"""The Transformer's layers by hand, under the names of torch's state dicts (Part IV, the
Transformer assembled).

So far: layer normalisation, as torch's ``nn.LayerNorm`` over the last axis, with its
``weight`` and ``bias`` and eps 1e-5:

    y = (x − mean(x)) / sqrt(var(x) + eps) ⊙ weight + bias

where mean and var (the biased variance, dividing by D) are taken over each row's D features.
"""

from __future__ import annotations

import numpy as np

EPS = 1e-5  # torch's default for nn.LayerNorm and the Transformer layers


def _check_norm(params, x) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    for name in ("weight", "bias"):
        if name not in params:
            raise ValueError(f"layer-norm parameters need 'weight' and 'bias'; missing {name!r}")
    weight, bias = (np.asarray(params[name], dtype=float) for name in ("weight", "bias"))
    x = np.asarray(x, dtype=float)
    if x.ndim < 1 or weight.shape != (x.shape[-1],) or bias.shape != (x.shape[-1],):
        raise ValueError(
            f"weight and bias must be (D,) for x of shape (..., D); got {weight.shape}, "
            f"{bias.shape} and x {x.shape}"
        )
    return weight, bias, x


def _normalised(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """(x̂, 1/sqrt(var + eps)): each row centred and scaled to unit variance."""
    centred = x - x.mean(axis=-1, keepdims=True)
    inv_std = 1.0 / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + eps)
    return centred * inv_std, inv_std


def layer_norm(params, x, eps: float = EPS) -> np.ndarray:
    """Layer normalisation over the last axis, as torch's ``nn.LayerNorm(D)`` (Part IV).

    params: ``weight`` and ``bias``, each (D,).  x: (..., D).  Returns (..., D).
    """
    weight, bias, x = _check_norm(params, x)
    return _normalised(x, eps)[0] * weight + bias


def layer_norm_backward(params, x, grad_output, eps: float = EPS) -> tuple[dict, np.ndarray]:
    """Gradients of :func:`layer_norm` (Part IV): ({'weight', 'bias'}, grad_x (..., D)).

    grad_output: (..., D), the gradient of the loss with respect to the output.
    """
    weight, _, x = _check_norm(params, x)
    grad_output = np.asarray(grad_output, dtype=float)
    if grad_output.shape != x.shape:
        raise ValueError(f"grad_output must be shaped like x {x.shape}, got {grad_output.shape}")
    x_hat, inv_std = _normalised(x, eps)
    rows = tuple(range(x.ndim - 1))  # every axis but the features
    grads = {"weight": (grad_output * x_hat).sum(axis=rows), "bias": grad_output.sum(axis=rows)}
    g = grad_output * weight  # the gradient with respect to x̂
    # x̂ = (x − mean) · inv_std: remove g's mean and its component along x̂, then scale
    grad_x = inv_std * (
        g - g.mean(axis=-1, keepdims=True) - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)
    )
    return grads, grad_x
