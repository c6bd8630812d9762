"""One learned query over the steps of a sequence: Part I's network of 19 parameters (Part I,
section 2).

keys k_t = W_K x_t and values v_t = W_V x_t for each step; one learned query q; scores
e_t = q · k_t / sqrt(D); weights a = softmax(e); logit z = w · Σ_t a_t v_t + b.  The network
depends on its parameters only through two vectors of the input space, the score direction
W_Kᵀ q / sqrt(D) and the readout direction W_Vᵀ w (:func:`effective`), and it is computed through
them, without BLAS, so the same on every processor.

The one speed trick of the module: the arrays of a pass are laid out steps first, (T, R..., N),
so that the softmax over the twelve steps reduces twelve contiguous slabs instead of many
twelve-number rows.  ``make bench`` times it against the same sums in the page's layout,
(R..., N, T): on the development machine 2.3 times as fast for a hundred networks at once
(section 5's sweep), 1.2 times for one, the loss curves equal to 2e-15.  :class:`Output` shows every
array in the page's layout.

Shapes: N sequences, T = 12 steps, C = 2 input channels, D = 3 for keys, queries and values.  The
parameters may carry leading "run" axes R... (one per init seed), so that a hundred networks
train in one pass; every function broadcasts over them.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..core import checks, rng
from ..core.attention import drop_each_step, softmax, softmax_backward, step_contributions
from ..core.losses import binary_cross_entropy, sigmoid
from ..core.params import Params, initialiser
from ..tasks.marked_step import CHANNELS
from .protocol import Output, changes, drop_step

KEY_SIZE = 3  # D, for keys, queries and values
INIT_SPREAD = 0.9  # initial weights are 0.9 * (u1 + u2 + u3 - 1.5)
NAMES = ("W_K", "W_V", "query", "readout", "bias")  # what init draws


def effective(params: Params) -> tuple[np.ndarray, np.ndarray]:
    """The two input-space vectors the 19 parameters act through (section 2).

    Keys and values are linear in the input, so the score of step t is q · (W_K x_t) / sqrt(D) =
    (W_Kᵀ q / sqrt(D)) · x_t, and the logit is w · sum_t a_t W_V x_t + b = (W_Vᵀ w) · sum_t a_t
    x_t + b.  Returns (score_direction, readout_direction), each (R..., C).
    """
    checks.params(params, "params", NAMES)
    score_direction = np.einsum("...dc,...d->...c", params.W_K, params.query) / np.sqrt(KEY_SIZE)
    readout_direction = np.einsum("...dc,...d->...c", params.W_V, params.readout)
    return score_direction, readout_direction


class SingleQuery:
    """Part I's network under the book's model protocol (:mod:`.protocol`), section 2.

    ``init(seed)`` draws one network, ``init(seeds)`` a stack of networks side by side;
    ``forward`` runs it; ``loss_and_grads`` is the mean cross-entropy and its gradients, one
    value per network of a stack; ``backward`` takes the gradient of any loss of the logits and
    the weights (Part VI's adversary); ``removal_effects`` is section 4's removal test computed
    in closed form.  Its output is one logit per sequence.
    """

    output_kind = "logit"
    cannot: dict = {}

    def __repr__(self) -> str:
        return "SingleQuery()"

    @initialiser
    def init(self, seed) -> Params:
        """Initial weights drawn from the lesson's stream: one network for an integer ``seed``,
        a stack of R networks (a leading axis on every array) for a sequence of R seeds.

        Each seed gives 18 weights of 0.9 * (u1 + u2 + u3 - 1.5), in the order key weights (row
        by row), value weights, query, readout; the bias starts at 0.
        """
        one = isinstance(seed, numbers.Integral) and not isinstance(seed, (bool, np.bool_))
        seeds = checks.seeds([seed] if one else seed, "seed", below=2**64)
        u = rng.draws(seeds, 54).reshape(len(seeds), 18, 3)
        g = (u[..., 0] + u[..., 1] + u[..., 2] - 1.5) * INIT_SPREAD
        d, c = KEY_SIZE, CHANNELS
        params = Params(  # 6 + 6 + 3 + 3 + 1 = 19 numbers per network
            W_K=g[:, : d * c].reshape(-1, d, c),
            W_V=g[:, d * c : 2 * d * c].reshape(-1, d, c),
            query=g[:, 2 * d * c : 2 * d * c + d],
            readout=g[:, 2 * d * c + d :],
            bias=np.zeros(len(seeds)),
        )
        return params.select(0) if one else params

    def forward(self, params, inputs, *, keep=None, weights=None, scale=None) -> Output:
        """The network on inputs (N, T, C): scores_t = q · W_K x_t / sqrt(D), weights =
        softmax(scores) over the steps ``keep`` allows, logit = readout · Σ_t weights_t W_V x_t
        + bias, computed through :func:`effective`.

        ``keep`` (boolean) and ``weights`` broadcast to (R..., N, T); ``scale`` (N, T).
        Returns an :class:`Output`: the logits (R..., N), the weights (R..., N, T), and as
        parts the ``scores`` (R..., N, T) and ``pooled``, Σ_t weights_t x_t (R..., N, C).
        """
        inputs = _inputs(inputs)
        score_direction, readout_direction = effective(params)
        runs = score_direction.shape[:-1]
        keep, weights, scale = changes(
            keep, weights, scale, runs + inputs.shape[:2], inputs.shape[:2]
        )
        if scale is not None:
            inputs = inputs * scale[..., None]
        x = _steps_first(inputs, len(runs))  # (C, T, 1..., N)
        step_scores = _along_steps(x, score_direction)  # (T, R..., N)
        if weights is None:
            keep = None if keep is None else np.moveaxis(keep, -1, 0)
            step_weights = softmax(step_scores, keep, axis=0)
        else:
            step_weights = np.moveaxis(weights, -1, 0)
        pooled = np.einsum("t...n,ct...n->...nc", step_weights, x)  # (R..., N, C)
        logit = np.einsum("...nc,...c->...n", pooled, readout_direction) + params.bias[..., None]
        parts = {
            "scores": np.moveaxis(step_scores, 0, -1),
            "pooled": pooled,
            "steps first": (x, step_weights),  # what backward reads, in its own layout
        }
        return Output(logit, np.moveaxis(step_weights, 0, -1), parts=parts)

    def contributions(self, params, inputs) -> np.ndarray:
        """What each step adds to the pooled value, a_t W_V x_t (Part VI, Kobayashi et al.'s
        α f(x)): (R..., N, T, D) for inputs (N, T, C)."""
        inputs = _inputs(inputs)
        values = np.einsum("ntc,...dc->...ntd", inputs, params.W_V)  # v_t = W_V x_t
        weights = self.forward(params, inputs).weights
        return step_contributions(weights[..., None, :], values)[..., 0, :, :]

    def without_step(self, inputs, step) -> np.ndarray:
        """inputs (N, T, C) without each sequence's step ``step`` (N,): (N, T − 1, C), Jain &
        Wallace's leave-one-out (Part VI).  The network reads steps in no order, so this is
        the same as hiding the step from attention."""
        return drop_step(_inputs(inputs), step)

    def loss_and_grads(self, params, inputs, labels):
        """(mean cross-entropy per network (R...,), its gradients): the loss before this step's
        update."""
        labels = checks.labels(labels)
        out = self.forward(params, inputs)
        if labels.shape != out.output.shape[-1:]:
            raise ValueError(f"labels must hold one label per sequence, ({len(inputs)},)")
        grad_logit = (sigmoid(out.output) - labels) / len(labels)  # (R..., N)
        return binary_cross_entropy(out.output, labels), self._chain(params, out, grad_logit)

    def backward(self, params, inputs, out: Output, grad_output, grad_weights=None) -> Params:
        """The gradients of any loss of the logits (R..., N) and, when it reads them (Part VI,
        section 2's adversary), of the weights (R..., N, T), from the gradients of that loss:
        ``grad_output`` shaped like the logits and ``grad_weights`` like the weights."""
        if not isinstance(out, Output) or "steps first" not in out.parts:
            raise TypeError("out must be the Output of this model's forward pass")
        if _inputs(inputs).shape[:2] != out.weights.shape[-2:]:
            raise ValueError("inputs must be the sequences out was computed on")
        checks.params(params, "params", NAMES)
        grad_output = checks.array(grad_output, "grad_output", shape=out.output.shape, copy=False)
        if grad_weights is not None:
            grad_weights = checks.array(
                grad_weights, "grad_weights", shape=out.weights.shape, copy=False
            )
            grad_weights = np.moveaxis(grad_weights, -1, 0)  # steps first, as forward keeps them
        return self._chain(params, out, grad_output, grad_weights)

    def _chain(self, params, out: Output, grad_logit, grad_weights=None) -> Params:
        """Gradients from grad_logit (R..., N) and extra weight gradients (T, R..., N): each line
        undoes one line of :meth:`forward` (and of :func:`effective`), last line first."""
        x, step_weights = out.parts["steps first"]
        score_direction, readout_direction = effective(params)
        grad_bias = grad_logit.sum(axis=-1)
        pooled = out.parts["pooled"]
        grad_readout_direction = np.einsum("...n,...nc->...c", grad_logit, pooled)  # (R..., C)
        through_logit = _along_steps(x, readout_direction)  # (T, R..., N)
        through_logit *= grad_logit
        grad_weights = through_logit if grad_weights is None else through_logit + grad_weights
        # grad_weights is this step's own array: the scores' gradient is written over it
        grad_scores = softmax_backward(step_weights, grad_weights, axis=0, out=grad_weights)
        grad_score_direction = np.einsum("t...n,ct...n->...c", grad_scores, x)  # (R..., C)
        # effective(): score_direction = W_Kᵀ q / sqrt(D), readout_direction = W_Vᵀ w
        grad_query = np.einsum("...dc,...c->...d", params.W_K, grad_score_direction) / np.sqrt(
            KEY_SIZE
        )
        grad_W_K = (
            params.query[..., :, None] * grad_score_direction[..., None, :] / np.sqrt(KEY_SIZE)
        )
        grad_readout = np.einsum("...dc,...c->...d", params.W_V, grad_readout_direction)
        grad_W_V = params.readout[..., :, None] * grad_readout_direction[..., None, :]
        return Params(
            W_K=grad_W_K,
            W_V=grad_W_V,
            query=grad_query,
            readout=grad_readout,
            bias=grad_bias,
        )

    def removal_effects(self, params, inputs) -> tuple[np.ndarray, np.ndarray]:
        """Section 4's removal test in closed form: (p (R..., N), p_without (R..., N, T)), the
        probability of label 1, and that probability with step t dropped and the other weights
        renormalised.  Equal to :func:`~attention_measured.measures.removal.removal_effects`,
        which runs the model once per step (a test holds the two equal), and cheaper: the
        logit is linear in the weights, so only the softmax is computed again."""
        inputs = _inputs(inputs)
        out = self.forward(params, inputs)
        without = drop_each_step(out.parts["scores"])  # (R..., N, T, T)
        readout_direction = effective(params)[1]
        runs = readout_direction.shape[:-1] + (1, 1)
        per_step = sum(  # readout_direction · x_t, (R..., N, T), two products and a sum
            readout_direction[..., c].reshape(runs) * inputs[..., c] for c in range(CHANNELS)
        )
        logit = (without * per_step[..., None, :]).sum(axis=-1) + params.bias[..., None, None]
        return sigmoid(out.output), sigmoid(logit)


def _inputs(inputs) -> np.ndarray:
    inputs = checks.array(inputs, "inputs", copy=False)  # read, never written
    if inputs.ndim != 3 or inputs.shape[-1] != CHANNELS:
        raise ValueError(
            f"inputs must have shape (N, T, {CHANNELS}) (reading and marker flag per step), "
            f"got {inputs.shape}"
        )
    return inputs


def _steps_first(inputs: np.ndarray, run_axes: int) -> np.ndarray:
    """inputs (N, T, C) as (C, T, 1 per run axis, N): each channel with the steps first (the
    module's speed trick, see its docstring)."""
    channels = np.ascontiguousarray(np.moveaxis(inputs, (2, 1), (0, 1)))  # (C, T, N)
    return channels.reshape(channels.shape[:2] + (1,) * run_axes + channels.shape[2:])


def _along_steps(x: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """direction · x_t in the steps-first layout, two products and a sum per step, not a matrix
    product (with C = 2 a BLAS call costs more than it computes, and its rounding depends on
    the processor): x (C, T, 1..., N), direction (R..., C) -> (T, R..., N)."""
    out = x[0] * direction[..., 0, None]
    for c in range(1, len(x)):
        out += x[c] * direction[..., c, None]
    return out
