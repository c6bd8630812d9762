"""Part V's measures: is attention an explanation?  Each test of the literature, written once, on
arrays, so that every model of the book can be put through it (Part V, the measures).

The measures that need only a model's importances and, where a decision is involved, a
function that re-runs the model:

- :func:`rank_of_truth`, :func:`first_share`: where a known cause falls in a ranking (the
  book's own test, possible because its tasks have a cause known by construction);
- :func:`kendall_tau`: agreement of two rankings (Jain & Wallace 2019), SciPy's tau-b;
- :func:`jensen_shannon`: the divergence between two sets of weights (Jain & Wallace 2019;
  Wiegreffe & Pinter 2019), SciPy's distance squared, at most ln 2;
- :func:`comprehensiveness`, :func:`sufficiency`: what the top-k steps of a ranking carry
  (DeYoung et al. 2020, ERASER);
- :func:`rollout`, :func:`attention_flow`: attention through several layers (Abnar & Zuidema
  2020), the flow by NetworkX's maximum flow;
- :func:`permutation_effect`, :func:`adversarial_weights`: how much the output moves when the
  weights are shuffled, and how different weights can be while it stays put (Jain & Wallace
  2019), the latter by SciPy's constrained optimiser;
- :func:`heaviest_flips`, :func:`removed_to_flip`: decision flips when weights are zeroed
  (Serrano & Smith 2019).

The decision-based measures take ``predict(weights) -> p`` (N,), the model's probability of
its decision when its attention weights (N, T) are replaced by the given ones; the decision is
p ≥ 0.5.

Shapes: N examples, T steps; an importance is (N, T), larger meaning more important.
:class:`Subject` puts a trained model behind the interface these measures take; so far
:func:`lesson_subject` does it for Part I's network.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
from scipy.optimize import minimize
from scipy.spatial.distance import jensenshannon
from scipy.stats import kendalltau

from . import checks


def _importance(values, name: str) -> np.ndarray:
    values = checks.array(values, name)
    if values.ndim != 2 or values.shape[1] < 1:
        raise ValueError(f"{name} must be (N, T), one row of step importances per example")
    return values


def _truth(truth, importance: np.ndarray) -> np.ndarray:
    truth = checks.integers(truth, "truth", 0, importance.shape[1] - 1)
    if truth.shape != (importance.shape[0],):
        raise ValueError(f"truth must hold one step per example, ({importance.shape[0]},)")
    return truth


def rank_of_truth(importance, truth) -> np.ndarray:
    """Where the true cause falls in each example's ranking (Part V): (N,) ints, 0 = first.

    importance: (N, T); truth: (N,) the step that decides each example.  A tie counts against
    the method: the rank is the number of other steps at least as important as the truth.
    """
    importance = _importance(importance, "importance")
    truth = _truth(truth, importance)
    at_truth = np.take_along_axis(importance, truth[:, None], axis=1)
    return (importance >= at_truth).sum(axis=1) - 1


def first_share(importance, truth) -> float:
    """The share of examples whose true cause a ranking puts first, ties counting against."""
    return float(np.mean(rank_of_truth(importance, truth) == 0))


def kendall_tau(first, second) -> np.ndarray:
    """Kendall's tau-b between two importances of each example (Jain & Wallace 2019): (N,).

    1: the same order; −1: reversed; NaN where a row is constant (no order to compare).
    """
    first, second = _importance(first, "first"), _importance(second, "second")
    if first.shape != second.shape:
        raise ValueError(f"the two importances differ in shape: {first.shape}, {second.shape}")
    return np.array([kendalltau(a, b).statistic for a, b in zip(first, second)])


def jensen_shannon(p, q) -> np.ndarray:
    """The Jensen–Shannon divergence between weight rows, in nats: (N,), from 0 to ln 2.

    p, q: (N, T), each row non-negative with a positive sum (rows are normalised).  SciPy's
    ``jensenshannon`` returns the distance, the divergence's square root.
    """
    p, q = _importance(p, "p"), _importance(q, "q")
    if p.shape != q.shape:
        raise ValueError(f"p and q differ in shape: {p.shape}, {q.shape}")
    if np.any(p < 0) or np.any(q < 0) or np.any(p.sum(axis=1) <= 0) or np.any(q.sum(axis=1) <= 0):
        raise ValueError("weights must be non-negative with a positive sum in every row")
    return jensenshannon(p, q, axis=1) ** 2


def _top_k_mask(importance: np.ndarray, k: int) -> np.ndarray:
    """(N, T) boolean, True on each row's k most important steps (ties: the earlier step)."""
    order = np.argsort(-importance, axis=1, kind="stable")[:, :k]
    mask = np.zeros(importance.shape, dtype=bool)
    np.put_along_axis(mask, order, True, axis=1)
    return mask


def _check_k(k, importance: np.ndarray) -> int:
    return checks.integer(k, "k", 1, importance.shape[1])


def comprehensiveness(predict, importance, k: int) -> np.ndarray:
    """p(full input) − p(input without its top-k steps), per example (DeYoung et al. 2020): (N,).

    predict(keep) returns the model's probability of its original decision, (N,), for a
    boolean ``keep`` (N, T) of the steps it may read.  Large: the top steps carried the
    decision.
    """
    importance = _importance(importance, "importance")
    top = _top_k_mask(importance, _check_k(k, importance))
    full = np.ones(importance.shape, dtype=bool)
    return np.asarray(predict(full), dtype=float) - np.asarray(predict(~top), dtype=float)


def sufficiency(predict, importance, k: int) -> np.ndarray:
    """p(full input) − p(top-k steps alone), per example (DeYoung et al. 2020): (N,).

    Small (or negative): the top steps suffice for the decision.
    """
    importance = _importance(importance, "importance")
    top = _top_k_mask(importance, _check_k(k, importance))
    full = np.ones(importance.shape, dtype=bool)
    return np.asarray(predict(full), dtype=float) - np.asarray(predict(top), dtype=float)


def _layers(attentions) -> np.ndarray:
    attentions = checks.array(attentions, "attentions")
    if attentions.ndim != 3 or attentions.shape[1] != attentions.shape[2]:
        raise ValueError(
            "attentions must be (layers, T, T): each layer's weights, rows summing to 1"
        )
    if np.any(attentions < 0) or not np.allclose(attentions.sum(axis=2), 1.0):
        raise ValueError("each row of attention weights must be non-negative and sum to 1")
    return attentions


def _with_residual(attentions: np.ndarray) -> np.ndarray:
    """0.5 A + 0.5 I per layer: the residual connection as attention to oneself."""
    return 0.5 * attentions + 0.5 * np.eye(attentions.shape[1])


def rollout(attentions) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema 2020): (T, T), row i the share of each input position
    in output position i after all layers.

    attentions: (layers, T, T), first layer first.  Each layer's weights are mixed half and half
    with the identity (the residual connection) and the layers multiplied, the last on the left.
    """
    mixed = _with_residual(_layers(attentions))
    total = np.eye(mixed.shape[1])
    for layer in mixed:
        total = layer @ total
    return total


def attention_flow(attentions) -> np.ndarray:
    """Attention flow (Abnar & Zuidema 2020): (T, T), the maximum flow from each output position
    of the last layer to each input position, through a graph whose edges carry the weights
    (mixed with the residual as in :func:`rollout`) as capacities.  Uses NetworkX.
    """
    mixed = _with_residual(_layers(attentions))
    layers, steps = mixed.shape[0], mixed.shape[1]
    graph = nx.DiGraph()
    for layer in range(layers):  # node (l, j): position j after layer l; (0, j) is the input
        for i in range(steps):
            for j in range(steps):
                if mixed[layer, i, j] > 0:
                    graph.add_edge((layer + 1, i), (layer, j), capacity=float(mixed[layer, i, j]))
    flow = np.zeros((steps, steps))
    for i in range(steps):
        for j in range(steps):
            flow[i, j] = nx.maximum_flow_value(graph, (layers, i), (0, j))
    return flow


# ------------------------------------------------------------------ measures that re-run a model
def _weights(weights) -> np.ndarray:
    weights = _importance(weights, "weights")
    if np.any(weights < 0) or not np.allclose(weights.sum(axis=1), 1.0):
        raise ValueError("weights must be non-negative rows that sum to 1")
    return weights


def permutation_effect(predict, weights, draws: int = 100, seed: int = 0) -> np.ndarray:
    """The median |Δp| over ``draws`` random shuffles of each row's weights (Jain & Wallace
    2019): (N,).  Small: the order of the weights, which step gets which, hardly matters."""
    weights = _weights(weights)
    draws = checks.integer(draws, "draws", 1)
    rng = np.random.RandomState(checks.seed(seed))
    base = np.asarray(predict(weights), dtype=float)
    changes = np.empty((draws, len(weights)))
    for d in range(draws):
        order = np.argsort(rng.random_sample(weights.shape), axis=1)
        changes[d] = np.abs(np.asarray(predict(np.take_along_axis(weights, order, axis=1))) - base)
    return np.median(changes, axis=0)


def _zeroed(weights: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """The weights with each row's ``steps`` (N, k) set to zero and the rest renormalised."""
    out = weights.copy()
    np.put_along_axis(out, steps, 0.0, axis=1)
    total = out.sum(axis=1, keepdims=True)
    return np.divide(out, total, out=np.zeros_like(out), where=total > 0)


def heaviest_flips(predict, weights, seed: int = 0) -> tuple[float, float]:
    """(share of decisions flipped by zeroing each row's heaviest weight, share flipped by
    zeroing a random other step), the rest renormalised (Serrano & Smith 2019)."""
    weights = _weights(weights)
    if weights.shape[1] < 2:
        raise ValueError("zeroing a weight needs at least two steps")
    rng = np.random.RandomState(checks.seed(seed))
    decision = np.asarray(predict(weights)) >= 0.5
    heaviest = weights.argmax(axis=1)
    other = (heaviest + 1 + rng.randint(weights.shape[1] - 1, size=len(weights))) % weights.shape[1]
    flips = []
    for steps in (heaviest, other):
        changed = np.asarray(predict(_zeroed(weights, steps[:, None]))) >= 0.5
        flips.append(float(np.mean(changed != decision)))
    return flips[0], flips[1]


def removed_to_flip(predict, weights, ranking) -> np.ndarray:
    """The share of steps zeroed, most important first by ``ranking`` (N, T), before the
    decision flips (Serrano & Smith 2019): (N,).  1.0 where it never flips before the last
    step would have to go."""
    weights = _weights(weights)
    ranking = _importance(ranking, "ranking")
    if ranking.shape != weights.shape:
        raise ValueError(f"ranking must be shaped like the weights {weights.shape}")
    order = np.argsort(-ranking, axis=1, kind="stable")
    decision = np.asarray(predict(weights)) >= 0.5
    steps = weights.shape[1]
    removed = np.ones(len(weights))
    for k in range(1, steps):
        changed = np.asarray(predict(_zeroed(weights, order[:, :k]))) >= 0.5
        first = (changed != decision) & (removed == 1.0)
        removed[first] = k / steps
    return removed


def adversarial_weights(predict, weights, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Weights as far from each row's as possible, in Jensen–Shannon divergence, while the
    output moves by at most ``epsilon`` (Jain & Wallace 2019): (new weights (N, T), their
    divergence (N,), at most ln 2).

    Found row by row with SciPy's SLSQP over the softmax's scores, started once from the
    trained weights pushed towards each step; the best start that keeps the output within
    epsilon wins.  ``predict`` is called on one row at a time, shaped (1, T).
    """
    weights = _weights(weights)
    epsilon = checks.real(epsilon, "epsilon", positive=True)
    found = np.array([_adversarial_row(predict, row, epsilon) for row in weights])
    return found, jensen_shannon(found, weights)


def _spread(scores: np.ndarray) -> np.ndarray:
    w = np.exp(scores - scores.max())
    return w / w.sum()


def _adversarial_row(predict, row: np.ndarray, epsilon: float) -> np.ndarray:
    """One row of :func:`adversarial_weights`: the best of one SLSQP run from each step."""

    def output(w):
        return float(np.asarray(predict(w[None]))[0])

    base = output(row)
    margin = 0.99 * epsilon  # the optimiser's tolerance stays inside epsilon
    constraints = [
        {"type": "ineq", "fun": lambda z: margin - (output(_spread(z)) - base)},
        {"type": "ineq", "fun": lambda z: margin + (output(_spread(z)) - base)},
    ]
    best, best_value = row, 0.0
    for start in range(len(row)):  # from the trained weights, pushed towards one step
        scores = np.log(row + 1e-12)
        scores[start] += 2.0
        result = minimize(
            lambda z: -float(jensenshannon(_spread(z), row) ** 2),
            scores,
            method="SLSQP",
            constraints=constraints,
        )
        candidate = _spread(result.x)
        value = float(jensenshannon(candidate, row) ** 2)
        if abs(output(candidate) - base) <= epsilon and value > best_value:
            best, best_value = candidate, value
    return best


# ------------------------------------------------------------------ one interface for every model
class Subject:
    """A trained model and the examples it is explained on, through the one interface every
    measure above needs (Part V).  So far Part I's network (:func:`lesson_subject`).

    - ``weights``: (N, T) the model's attention weights on each example;
    - ``truth``: (N,) the step that decides each example, known by construction;
    - ``predict(weights)``: (N,) the probability of label 1 with the given weights in place of
      the model's own;
    - ``keep_predict(keep)``: (N,) the probability of the model's own decision when it may read
      only the steps where ``keep`` (N, T) is True (its weights renormalised over them);
    - ``importance(method)``: (N, T) a ranking of the steps by ``"attention"``, ``"gradient"``
      (|∂ logit / ∂ x_t|), ``"gradient × input"`` (|∂ logit / ∂ x_t · x_t|) or
      ``"leave one out"`` (|p without step t − p|).
    """

    METHODS = ("attention", "gradient", "gradient × input", "leave one out")

    def __init__(self, name, weights, truth, predict, keep_predict, gradients, inputs, loo):
        self.name, self.weights, self.truth = name, weights, truth
        self.predict, self.keep_predict = predict, keep_predict
        self._gradients, self._inputs, self._loo = gradients, inputs, loo

    def importance(self, method: str) -> np.ndarray:
        method = checks.choice(method, "method", self.METHODS)
        if method == "attention":
            return self.weights
        if method == "gradient":
            return np.linalg.norm(self._gradients, axis=-1)
        if method == "gradient × input":
            return np.abs((self._gradients * self._inputs).sum(axis=-1))
        return self._loo


def lesson_subject(run: int = 0) -> Subject:
    """Part I's network, run ``run`` (0 or 1: the lesson's runs 1 and 2), on the 180 held-out
    sequences; the true cause of each label is its marked step."""
    from . import lesson  # Part I

    run = checks.index(run, "run", len(lesson.INIT_SEEDS))
    heldout, stack = lesson.lesson_runs()
    params = stack.select(run)
    x = heldout.inputs  # (N, T, C)
    fwd = lesson.forward(params, x)
    score_direction, readout_direction = lesson.effective(params)
    weights = fwd.weights

    def logit_with(w):
        return np.einsum("nt,ntc,c->n", np.asarray(w, dtype=float), x, readout_direction) + float(
            params.bias
        )

    def predict(w):
        return 1.0 / (1.0 + np.exp(-logit_with(w)))

    decision = predict(weights) >= 0.5

    def keep_predict(keep):
        scores = np.where(keep, fwd.scores, -np.inf)
        kept = np.exp(scores - scores.max(axis=1, keepdims=True))
        p = predict(kept / kept.sum(axis=1, keepdims=True))
        return np.where(decision, p, 1.0 - p)

    # logit = r · Σ_t a_t x_t + b with a = softmax(u · x_t): ∂ logit / ∂ x_t =
    # a_t r + a_t (r · x_t − r · x̄) u, x̄ = Σ_t a_t x_t
    pooled = np.einsum("nt,ntc->nc", weights, x)
    centred = np.einsum("ntc,c->nt", x, readout_direction) - (pooled @ readout_direction)[:, None]
    gradients = weights[..., None] * (readout_direction + centred[..., None] * score_direction)
    p, p_without = lesson.removal_effects(params, x)
    loo = np.abs(p_without - p[:, None])
    return Subject(
        f"Part I, run {run + 1}", weights, heldout.markers, predict, keep_predict, gradients, x, loo
    )
