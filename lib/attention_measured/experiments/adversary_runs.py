"""Part VI, section 2: Wiegreffe and Pinter's adversarial training (2019, section 4).

Jain and Wallace's adversary changes the weights of one example and leaves the model alone.
Wiegreffe and Pinter train a whole model instead: the base model's architecture, trained on
the base model's own predictions with

    L = mean_i TVD(ŷ_i, ŷ_base,i)  −  λ · mean_i KL(α_i ‖ α_base,i)

so that it predicts as the base does while its attention α moves as far from the base's as λ
asks.  If an adversary reaches weights far from the base's, farther than a second seed does,
while predicting the same, then the base's weights were one choice among many.

Where the book differs from their code (sarahwie/attention, ``model/Binary_Classification.py``):

- TVD is the total variation distance between the two classes' probabilities, |p − p_base|;
  their ``batch_tvd`` sums ½|p − p_base| over the positive class only, half of it, so their λ
  is half the book's for the same balance;
- losses are means over the training set, full batch, where theirs are sums over batches;
  every adversary takes Part V's 400 full-batch Adam steps of size 0.05, Part I's network
  too (whose own training is gradient descent: on a loss with |p − p_base| in it, its steps of
  0.6 overshoot);
- the adversary starts from the base's trained weights, not a fresh draw: on this task a fresh
  model trained on |p − p_base| predicts the majority label and stays there (additive, seed 0:
  a mean TVD of 0.381 after 2000 steps), because a saturated wrong prediction has almost no
  gradient.  From the base, λ = 0 leaves the model where it is, and λ alone moves it;
- the weights compared are each step's share of the example's total, which for every flavour
  but local-p's window are the weights themselves.

KL's logarithms are of a + 1e-10, as in their ``kld``, so a step the base gives no weight costs
a finite amount.  :func:`adversary` trains one, remembered; :func:`report` measures it on the
held-out sequences; any model of the book's protocol with a ``backward`` that takes a gradient
for its weights can be trained so; :data:`MODELS` names the models it runs on (Part I's
network and the flavours of Part V, section 4, all on Part I's task).
"""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.losses import sigmoid
from ..core.params import Params
from ..core.training import Trained, fit
from ..machinery.cache import remembered
from ..measures.explanations import jensen_shannon, output_change
from ..tasks import marked_step
from . import flavour_runs, marked_step_runs, registry

LAMBDAS = (0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)  # λ on the book's scale (see above)


EPOCHS, LEARNING_RATE = (
    flavour_runs.EPOCHS,
    flavour_runs.LEARNING_RATE,
)  # Adam, as theirs


KEPT = 0.02  # an adversary "keeps the predictions" when its mean TVD from the base is at most this


LOG_FLOOR = 1e-10  # Wiegreffe and Pinter's kld: log(a + 1e-10)


MODELS = ("Part I network", *flavour_runs.SIDE_BY_SIDE)


def kl(a, b) -> np.ndarray:
    """KL(a ‖ b) = Σ_t a_t (log(a_t + 1e-10) − log(b_t + 1e-10)) for weight rows a, b (N, T):
    (N,), as Wiegreffe and Pinter's ``kld`` computes it."""
    a, b = checks.array(a, "a", ndim=2, copy=False), checks.array(b, "b", ndim=2, copy=False)
    if a.shape != b.shape:
        raise ValueError(f"a and b differ in shape: {a.shape}, {b.shape}")
    return (a * (np.log(a + LOG_FLOOR) - np.log(b + LOG_FLOOR))).sum(axis=1)


def _shares(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    total = weights.sum(axis=1, keepdims=True)
    return weights / total, total


class Adversarial:
    """Wiegreffe and Pinter's loss on any model of the book's protocol whose output is a logit
    and whose ``backward`` takes a gradient for its weights (:data:`MODELS`), for
    :func:`~attention_measured.core.training.fit`: ``loss_and_grads(params, inputs)``, against
    the base's P(label 1) (N,) and weights (N, T) on those inputs."""

    def __init__(self, model, strength: float, base_probability, base_weights):
        if not callable(getattr(model, "backward", None)) or model.output_kind != "logit":
            raise TypeError("model must answer a logit and take gradients for its weights")
        self.model = model
        self.strength = checks.real(strength, "strength", low=0.0)
        self.base_probability = checks.array(base_probability, "base_probability", ndim=1)
        self.base_shares = _shares(checks.array(base_weights, "base_weights", ndim=2))[0]

    def loss_and_grads(self, params, inputs):
        """(L, gradients): L = mean TVD − λ · mean KL, as in the module's docstring."""
        out = self.model.forward(params, inputs)
        logit, weights = out.output, out.weights
        n = len(logit)
        p = sigmoid(logit)
        gap = p - self.base_probability
        shares, total = _shares(weights)
        loss = (
            output_change(p, self.base_probability).mean()
            - self.strength * kl(shares, self.base_shares).mean()
        )
        log_ratio = np.log(shares + LOG_FLOOR) - np.log(self.base_shares + LOG_FLOOR)
        grad_logit = np.sign(gap) * p * (1 - p) / n  # d|p − q|/dz = sign(p − q) p (1 − p)
        # d KL / d share_t = log ratio_t + share_t / (share_t + floor), then through w / Σ w
        grad_shares = -self.strength / n * (log_ratio + shares / (shares + LOG_FLOOR))
        through = (grad_shares * shares).sum(axis=1, keepdims=True)
        grad_weights = (grad_shares - through) / total
        return loss, self.model.backward(params, inputs, out, grad_logit, grad_weights)


def _base(model: str, seed: int):
    """(the model, its base params, training and held-out sequences) of ``model`` from
    ``seed``."""
    train, heldout = marked_step.lesson_data()
    if model == "Part I network":
        return marked_step_runs.MODEL, registry.single_query_network(seed), train, heldout
    trained = flavour_runs.reader_run(checks.choice(model, "model", MODELS), seed)
    return trained.model, trained.params, train, heldout


@remembered
def adversary(model: str, seed: int, strength: float) -> Trained:
    """``model`` (one of :data:`MODELS`) trained by Wiegreffe and Pinter's loss at λ =
    ``strength`` against its base trained from ``seed``, starting from the base's trained
    parameters, on Part I's 360 training sequences: a Trained (the :class:`Adversarial`,
    params, curve)."""
    network, base, train, _ = _base(model, checks.seed(seed))
    own = network.forward(base, train.inputs)
    loss = Adversarial(network, strength, sigmoid(own.output), own.weights)
    params = Params({name: np.array(value) for name, value in base.items()})  # a copy, to train
    curve = fit(loss, params, train.inputs, None, EPOCHS, LEARNING_RATE)
    return Trained(loss, params, curve)


@remembered
def report(model: str, seed: int, strength: float) -> dict[str, float]:
    """The adversary of :func:`adversary` against its base on the 180 held-out sequences:
    {"JSD": median Jensen–Shannon divergence of the weights, "JSD mean", "TVD": mean |Δp|,
    "accuracy", "base accuracy"} (accuracy: the share of labels predicted)."""
    network, base, _, heldout = _base(model, checks.seed(seed))
    params = adversary(model, seed, strength).params
    base_out, out = network.forward(base, heldout.inputs), network.forward(params, heldout.inputs)
    base_logit, base_weights, logit, weights = (
        base_out.output,
        base_out.weights,
        out.output,
        out.weights,
    )
    divergence = jensen_shannon(_shares(weights)[0], _shares(base_weights)[0])
    labels = heldout.labels
    return {
        "JSD": float(np.median(divergence)),
        "JSD mean": float(divergence.mean()),
        "TVD": float(output_change(sigmoid(logit), sigmoid(base_logit)).mean()),
        "accuracy": float(((logit > 0) == labels).mean()),
        "base accuracy": float(((base_logit > 0) == labels).mean()),
    }


def sweep(model: str, seed: int, strengths=LAMBDAS) -> dict[float, dict[str, float]]:
    """{λ: :func:`report`} over ``strengths`` for ``model`` from ``seed``."""
    if isinstance(strengths, str) or not hasattr(strengths, "__iter__"):
        raise TypeError(f"strengths must be a list of numbers, got {strengths!r}")
    strengths = [checks.real(s, "strengths", 0.0) for s in strengths]
    if not strengths:
        raise ValueError("strengths must hold at least one λ")
    return {s: report(model, seed, s) for s in strengths}


def reached(model: str, seed: int) -> float:
    """The closing table's number: the widest median JSD from the base's weights reached over
    :data:`LAMBDAS` by an adversary that keeps the predictions (mean TVD at most :data:`KEPT`;
    λ = 0 always does, at JSD 0)."""
    kept = [r["JSD"] for r in sweep(model, seed).values() if r["TVD"] <= KEPT]
    return max(kept)
