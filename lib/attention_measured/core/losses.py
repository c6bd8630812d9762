"""The losses every Part trains on, each with its gradient, computed stably from logits.

- :func:`sigmoid`                 the logistic function, its argument clipped to ±30
- :func:`binary_cross_entropy`    mean −log p of the true label, for logits (N,) and labels 0/1
- :func:`log_softmax`, :func:`softmax_cross_entropy`  for rows of logits over V classes
- :func:`softmax_and_summed_cross_entropy`  both of Part IV's at once, from one exponential
- :func:`squared_error_and_gradient`  mean squared error, for regression (Part V's addition)

Each ``*_and_gradient`` function returns the loss it reports together with the gradient of
exactly that loss, so a backward pass never differentiates one quantity while the page prints
another.
"""

from __future__ import annotations

import numpy as np

from . import checks
from .attention import row_sums

LOGIT_CLIP = 30.0  # the lesson clips the logit before the sigmoid; so does every Part


def sigmoid(logit) -> np.ndarray:
    """P(label 1) = 1 / (1 + exp(-logit)), the logit clipped to ±30 (as the lesson does)."""
    logit = checks.array(logit, "logit", copy=False)
    return 1.0 / (1.0 + np.exp(-np.clip(logit, -LOGIT_CLIP, LOGIT_CLIP)))


def binary_cross_entropy(logit, labels) -> np.ndarray:
    """Mean of log(1 + e^z) − y z over the last axis: −log p of the true label, from the logits
    z.

    logit, labels: (..., N), the labels 0 or 1.  Returns (...,).  Stable for logits of any
    size.
    """
    logit, labels = checks.array(logit, "logit", copy=False), checks.labels(labels)
    if not checks.trusting():
        _broadcast(logit, labels, "logit", "labels")
    return np.mean(np.logaddexp(0.0, logit) - labels * logit, axis=-1)


def _broadcast(a: np.ndarray, b: np.ndarray, first: str, second: str) -> None:
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"{first} {a.shape} and {second} {b.shape} do not match") from None


def binary_cross_entropy_and_gradient(
    logit, labels, name: str = "labels"
) -> tuple[float, np.ndarray]:
    """(mean binary cross-entropy of logits (N,), its gradient (sigmoid(z) − y) / N).

    The gradient is exact wherever |z| < 30, where the clipped sigmoid is the sigmoid.  ``name``:
    what the labels are called in a refusal.
    """
    logit, labels = checks.array(logit, "logit", ndim=1), checks.labels(labels, name)
    if labels.shape != logit.shape:
        raise ValueError(f"{name} must hold one label per logit, {logit.shape}; got {labels.shape}")
    return float(binary_cross_entropy(logit, labels)), (sigmoid(logit) - labels) / labels.shape[-1]


def squared_error_and_gradient(output, targets) -> tuple[float, np.ndarray]:
    """(mean squared error of outputs (N,), its gradient 2 (output − target) / N)."""
    output, targets = checks.array(output, "output"), checks.array(targets, "targets")
    _broadcast(output, targets, "output", "targets")
    error = output - targets
    return float(np.mean(error**2)), 2 * error / error.shape[-1]


def log_softmax(logits) -> np.ndarray:
    """log softmax over the last axis, computed stably: (..., V) -> (..., V)."""
    logits = checks.array(logits, "logits", copy=False)  # read, never written
    if logits.ndim == 0:
        raise ValueError("logits must have an axis of classes, (..., V)")
    return _log_softmax(logits)


def _log_softmax(logits) -> np.ndarray:
    """:func:`log_softmax` of checked logits."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    sums = np.exp(shifted).sum(axis=-1, keepdims=True)
    return np.subtract(shifted, np.log(sums), out=shifted)


def softmax_cross_entropy(logits, targets) -> tuple[np.ndarray, np.ndarray]:
    """Cross-entropy of each row of logits (..., V) against integer targets (...), and its
    gradient.

    Returns (losses (...), gradient (..., V)): −log softmax(logits)[target], and softmax(logits)
    minus the one-hot target.
    """
    logits = checks.array(logits, "logits", copy=False)
    if logits.ndim == 0:
        raise ValueError("logits must have an axis of classes, (..., V)")
    log_probs = _log_softmax(logits)
    targets = checks.integers(targets, "targets", 0, log_probs.shape[-1] - 1)
    if targets.shape != log_probs.shape[:-1]:
        raise ValueError(
            f"targets must hold one class per row of logits, {log_probs.shape[:-1]}, "
            f"got {targets.shape}"
        )
    targets = targets[..., None]
    losses = -np.take_along_axis(log_probs, targets, axis=-1)[..., 0]
    grad = np.exp(log_probs)
    np.put_along_axis(grad, targets, np.take_along_axis(grad, targets, axis=-1) - 1, axis=-1)
    return losses, grad


def softmax_and_summed_cross_entropy(logits, targets) -> tuple[np.ndarray, float]:
    """(softmax of logits (N, V) over the last axis, the summed cross-entropy −Σ_i log
    softmax(logits)[i, target_i]) for integer targets (N,) (Part IV, section 2).

    The same floats, to the last bit, as :func:`attention_measured.core.attention.softmax` and
    :func:`log_softmax` computed apart (a test holds them equal), from one exponential and one
    (N, V) array instead of five.
    """
    logits = checks.array(logits, "logits", ndim=2, copy=False)
    if not checks.trusting():
        targets = checks.integers(targets, "targets", 0, logits.shape[1] - 1)
        if targets.shape != logits.shape[:1]:
            raise ValueError(
                f"targets must hold one class per row, {logits.shape[:1]}; got {targets.shape}"
            )
    shifted = logits - logits.max(axis=-1, keepdims=True)
    at_targets = shifted[np.arange(len(shifted)), targets]
    exp = np.exp(shifted, out=shifted)
    # log_softmax's log of the row sums, then softmax's own row sums (which sum another way)
    loss = -float((at_targets - np.log(exp.sum(axis=-1))).sum())
    exp /= row_sums(exp)
    return exp, loss


def output_loss(output, targets, kind: str) -> tuple[float, np.ndarray]:
    """A classifier's ("bce", output = logits) or a regression's ("mse") mean loss and its
    gradient."""
    if checks.choice(kind, "kind", ("bce", "mse")) == "bce":
        return binary_cross_entropy_and_gradient(output, targets, "targets")
    return squared_error_and_gradient(output, checks.array(targets, "targets"))
