"""One learned query over the steps of a sequence: Part I's network of 19 parameters (Part I,
section 2).

keys k_t = W_K x_t and values v_t = W_V x_t for each step; one learned query q; scores
e_t = q · k_t / sqrt(D); weights a = softmax(e); logit z = w · Σ_t a_t v_t + b.  The network
depends on its parameters only through two vectors of the input space, the score direction
W_Kᵀ q / sqrt(D) and the readout direction W_Vᵀ w (:func:`effective`), and it is computed through
them, without BLAS, so the same on every processor.

Shapes: N sequences, T = 12 steps, C = 2 input channels, D = 3 for keys, queries and values.  The
parameters may carry leading "run" axes R... (one per init seed), so that a hundred networks
train in one pass; every function broadcasts over them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import checks, rng
from ..core.attention import drop_each_step, softmax, softmax_backward
from ..core.losses import binary_cross_entropy
from ..core.losses import sigmoid as probability
from ..core.params import Params, initialiser
from ..tasks.marked_step import CHANNELS

KEY_SIZE = 3  # D, for keys, queries and values


INIT_SPREAD = 0.9  # initial weights are 0.9 * (u1 + u2 + u3 - 1.5)


def _check_seeds(seeds, name: str = "init_seeds") -> list[int]:
    return checks.seeds(seeds, name, below=2**64)


def _check_inputs(inputs) -> np.ndarray:
    inputs = checks.array(inputs, "inputs", copy=False)  # read, never written
    if inputs.ndim != 3 or inputs.shape[-1] != CHANNELS:
        raise ValueError(
            f"inputs must have shape (N, T, {CHANNELS}) (reading and marker flag per step), "
            f"got {inputs.shape}"
        )
    return inputs


NAMES = ("key_weights", "value_weights", "query", "readout", "bias")  # what init_params draws


@initialiser
def init_params(seeds) -> Params:
    """Initial networks, one per seed, drawn from the lesson's stream.

    Each seed gives 18 weights of 0.9 * (u1 + u2 + u3 - 1.5), in the order key weights (row by
    row), value weights, query, readout; the bias starts at 0.  Returns a Params stack with R =
    len(seeds).
    """
    seeds = _check_seeds(seeds)
    u = rng.draws(seeds, 54).reshape(len(seeds), 18, 3)
    g = (u[..., 0] + u[..., 1] + u[..., 2] - 1.5) * INIT_SPREAD
    d, c = KEY_SIZE, CHANNELS
    return Params(  # 6 + 6 + 3 + 3 + 1 = 19 numbers per network
        key_weights=g[:, : d * c].reshape(-1, d, c),
        value_weights=g[:, d * c : 2 * d * c].reshape(-1, d, c),
        query=g[:, 2 * d * c : 2 * d * c + d],
        readout=g[:, 2 * d * c + d :],
        bias=np.zeros(len(seeds)),
    )


def effective(params: Params) -> tuple[np.ndarray, np.ndarray]:
    """The two input-space vectors the 19 parameters act through (section 2).

    Keys and values are linear in the input, so the score of step t is q · (W_K x_t) / sqrt(D) =
    (W_Kᵀ q / sqrt(D)) · x_t, and the logit is w · sum_t a_t W_V x_t + b = (W_Vᵀ w) · sum_t a_t
    x_t + b.  Returns (score_direction, readout_direction), each (R..., C).
    """
    checks.params(params, "params", NAMES)
    score_direction = np.einsum("...dc,...d->...c", params.key_weights, params.query) / np.sqrt(
        KEY_SIZE
    )
    readout_direction = np.einsum("...dc,...d->...c", params.value_weights, params.readout)
    return score_direction, readout_direction


def keys_and_values(params: Params, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """keys_t = W_K x_t and values_t = W_V x_t: two arrays (R..., N, T, D) (section 2)."""
    checks.params(params, "params", NAMES)
    inputs = _check_inputs(inputs)
    keys = np.einsum("...dc,ntc->...ntd", params.key_weights, inputs)
    values = np.einsum("...dc,ntc->...ntd", params.value_weights, inputs)
    return keys, values


def _per_step(inputs: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """direction · x_t for every step: inputs (N, T, C), direction (R..., C) -> (R..., N, T).

    Two products and a sum per step, not a matrix product: with C = 2 a BLAS call costs more
    than it computes, and its rounding depends on the processor.
    """
    runs = direction.shape[:-1] + (1, 1)
    return sum(direction[..., c].reshape(runs) * inputs[..., c] for c in range(inputs.shape[-1]))


def _step_major(inputs: np.ndarray, run_axes: int) -> np.ndarray:
    """inputs (N, T, C) as (C, T, 1 per run axis, N): each channel with the steps first.

    The training loop works in this layout: a softmax over the first axis of a (T, R, N) array
    reduces twelve contiguous slabs, several times faster than reducing twelve-number rows.
    """
    channels = np.ascontiguousarray(np.moveaxis(inputs, (2, 1), (0, 1)))  # (C, T, N)
    return channels.reshape(channels.shape[:2] + (1,) * run_axes + channels.shape[2:])


@dataclass
class Forward:
    """The intermediates of a forward pass, kept for the backward pass.

    Scores and weights are stored steps first, (T, R..., N), the layout
    :func:`backward` works in; ``scores`` and ``weights`` show them as
    (R..., N, T), like the inputs.
    """

    step_scores: np.ndarray  # (T, R..., N)
    step_weights: np.ndarray  # (T, R..., N)
    pooled: np.ndarray  # (R..., N, C)  sum_t weights_t x_t
    logit: np.ndarray  # (R..., N)

    @property
    def scores(self) -> np.ndarray:
        """(R..., N, T): q · W_K x_t / sqrt(D) for every step."""
        return np.moveaxis(self.step_scores, 0, -1)

    @property
    def weights(self) -> np.ndarray:
        """(R..., N, T): the attention weights, each row summing to one over the steps."""
        return np.moveaxis(self.step_weights, 0, -1)


def forward(
    params: Params,
    inputs: np.ndarray,
    keep: np.ndarray | None = None,
    weights: np.ndarray | None = None,
    scale: np.ndarray | None = None,
) -> Forward:
    """The model of section 2 on inputs (N, T, C).

    scores_t = q · W_K x_t / sqrt(D); weights = softmax(scores) over the steps where ``keep``
    (boolean, broadcastable to (R..., N, T)) is True; logit = readout · sum_t weights_t W_V x_t
    + bias.  Computed through
    :func:`effective`, which gives the same numbers with a fraction of the work,
    and without BLAS, so the same on every processor.

    Part V's two other changes: ``weights`` (R..., N, T) in place of the softmax's, and
    ``scale`` (N, T), each step's input multiplied by it.
    """
    inputs = _check_inputs(inputs)
    if scale is not None:
        inputs = inputs * checks.array(scale, "scale", shape=inputs.shape[:2])[..., None]
    score_direction, readout_direction = effective(params)
    runs = score_direction.shape[:-1]
    x = _step_major(inputs, len(runs))  # (C, T, 1..., N)
    scores = _along_steps(x, score_direction)  # (T, R..., N)
    if keep is not None:
        keep = checks.mask(keep, "keep")
        keep = np.moveaxis(np.broadcast_to(keep, runs + inputs.shape[:2]), -1, 0)
    if weights is None:
        weights = softmax(scores, keep, axis=0)
    else:
        weights = checks.array(weights, "weights")
        weights = np.moveaxis(np.broadcast_to(weights, runs + inputs.shape[:2]), -1, 0)
    pooled = np.einsum("t...n,ct...n->...nc", weights, x)  # (R..., N, C)
    logit = np.einsum("...nc,...c->...n", pooled, readout_direction) + params.bias[..., None]
    return Forward(scores, weights, pooled, logit)


def _along_steps(x: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """direction · x_t in the steps-first layout: x (C, T, 1..., N), direction (R..., C) -> (T,
    R..., N)."""
    out = x[0] * direction[..., 0, None]
    for c in range(1, len(x)):
        out += x[c] * direction[..., c, None]
    return out


def backward(
    params: Params,
    inputs: np.ndarray,
    labels: np.ndarray,
    fwd: Forward,
) -> Params:
    """Gradient of the mean cross-entropy over the N sequences (section 2).

    Returns a Params of gradients, shaped like ``params``.  Each line undoes one line of
    :func:`forward` (and of :func:`effective`), last line first.
    """
    if not isinstance(fwd, Forward):
        raise TypeError(f"fwd must be the Forward of lesson.forward, got {type(fwd).__name__}")
    labels = checks.labels(labels)
    checks.params(params, "params", NAMES)
    x = _step_major(_check_inputs(inputs), params.bias.ndim)  # (C, T, 1..., N)
    if labels.shape != inputs.shape[:1]:
        raise ValueError(f"labels must hold one label per sequence, ({len(inputs)},)")
    n = len(labels)
    grad_logit = (probability(fwd.logit) - labels) / n  # (R..., N)
    return _chain(params, x, fwd, grad_logit)


def backward_from(
    params: Params, inputs: np.ndarray, fwd: Forward, grad_logit, grad_weights=None
) -> Params:
    """The gradients of any loss of the logits (R..., N) and, when it reads them (Part V,
    section 2's adversary), of the attention weights (R..., N, T): :func:`backward`'s chain
    rule, from a loss of the caller's own."""
    if not isinstance(fwd, Forward):
        raise TypeError(f"fwd must be the Forward of lesson.forward, got {type(fwd).__name__}")
    checks.params(params, "params", NAMES)
    x = _step_major(_check_inputs(inputs), params.bias.ndim)  # (C, T, 1..., N)
    grad_logit = checks.array(grad_logit, "grad_logit", shape=fwd.logit.shape, copy=False)
    if grad_weights is not None:
        grad_weights = checks.array(
            grad_weights, "grad_weights", shape=fwd.weights.shape, copy=False
        )
        grad_weights = np.moveaxis(grad_weights, -1, 0)  # steps first, as forward keeps them
    return _chain(params, x, fwd, grad_logit, grad_weights)


def _chain(params, x, fwd, grad_logit, grad_weights=None) -> Params:
    """Gradients from grad_logit (R..., N) and extra weight gradients (T, R..., N), inputs in
    the steps-first layout x (C, T, 1..., N)."""
    score_direction, readout_direction = effective(params)
    grad_bias = grad_logit.sum(axis=-1)
    grad_readout_direction = np.einsum("...n,...nc->...c", grad_logit, fwd.pooled)  # (R..., C)
    through_logit = _along_steps(x, readout_direction)  # (T, R..., N)
    through_logit *= grad_logit
    grad_weights = through_logit if grad_weights is None else through_logit + grad_weights
    # grad_weights is this step's own array: the scores' gradient is written over it
    grad_scores = softmax_backward(fwd.step_weights, grad_weights, axis=0, out=grad_weights)
    grad_score_direction = np.einsum("t...n,ct...n->...c", grad_scores, x)  # (R..., C)
    # effective(): score_direction = W_Kᵀ q / sqrt(D), readout_direction = W_Vᵀ w
    grad_query = np.einsum("...dc,...c->...d", params.key_weights, grad_score_direction) / np.sqrt(
        KEY_SIZE
    )
    grad_key_weights = (
        params.query[..., :, None] * grad_score_direction[..., None, :] / np.sqrt(KEY_SIZE)
    )
    grad_readout = np.einsum("...dc,...c->...d", params.value_weights, grad_readout_direction)
    grad_value_weights = params.readout[..., :, None] * grad_readout_direction[..., None, :]
    return Params(
        key_weights=grad_key_weights,
        value_weights=grad_value_weights,
        query=grad_query,
        readout=grad_readout,
        bias=grad_bias,
    )


def loss(params: Params, inputs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Mean cross-entropy (R...,) of the unclipped model; the quantity :func:`backward`
    differentiates.
    """
    return binary_cross_entropy(forward(params, inputs).logit, labels)


class Network:
    """Part I's model as :func:`~.training.fit` trains it: the functions above."""

    def init(self, seeds) -> Params:
        return init_params(seeds)

    def loss_and_grads(self, params: Params, inputs, labels):
        """(mean cross-entropy per run (R...,), gradients): the loss before this step's update."""
        fwd = forward(params, inputs)
        loss = binary_cross_entropy(fwd.logit, labels)
        return loss, backward(params, inputs, labels, fwd)


def removal_effects(params: Params, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What dropping each step does to the output probability (section 4).

    inputs: (N, T, C).  Returns (p, p_without), shapes (R..., N) and (R..., N, T):
    p_without[..., t] is the probability when step t is removed from the attention and the other
    weights are renormalised. The removal effect of step t is |p_without[..., t] - p|.
    """
    fwd = forward(params, inputs)
    without = drop_each_step(fwd.scores)  # (R..., N, T, T)
    readout_direction = effective(params)[1]
    per_step = _per_step(inputs, readout_direction)  # (R..., N, T)
    logit = (without * per_step[..., None, :]).sum(axis=-1) + params.bias[..., None, None]
    return probability(fwd.logit), probability(logit)
