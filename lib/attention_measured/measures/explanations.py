"""Part VI's measures: is attention an explanation?  Each test of the literature, written once, on
arrays, so that every model of the book can be put through it (Part VI, the measures).

The measures that need only a model's importances and, where a decision is involved, a
function that re-runs the model:

- :func:`rank_of_truth`, :func:`first_share`: where a known cause falls in a ranking (the
  book's own test, possible because its tasks have a cause known by construction);
- :func:`kendall_tau`: agreement of two rankings (Jain & Wallace 2019), SciPy's tau-b;
- :func:`jensen_shannon`: the divergence between two sets of weights (Jain & Wallace 2019;
  Wiegreffe & Pinter 2019), SciPy's distance squared, at most ln 2;
- :func:`comprehensiveness`, :func:`sufficiency`: what the top-k steps of a ranking carry
  (DeYoung et al. 2020, ERASER), and :func:`comprehensiveness_aopc`, :func:`sufficiency_aopc`,
  their average over ERASER's bins, as the paper reports them;
- :func:`rollout`, :func:`attention_flow`: attention through several layers (Abnar & Zuidema
  2020), the flow by NetworkX's maximum flow;
- :func:`permutation_test` (and its median, :func:`permutation_effect`),
  :func:`adversarial_weights`: how much the output moves, and how often the decision flips,
  when the weights are shuffled, and how different weights can be while it stays put (Jain &
  Wallace 2019), the latter searched along every edge of the simplex;
- :func:`heaviest_flips`, :func:`removed_to_flip`: decision flips when weights are zeroed
  (Serrano & Smith 2019);
- :func:`frozen_weights_accuracy`: trained weights given to a model without attention
  (Wiegreffe & Pinter 2019).

The decision-based measures take ``predict(weights)``, the model's output when its attention
weights (N, T) are replaced by the given ones: (N,) probabilities of label 1 or (N, K) class
probabilities; the decision is the most probable class, and an output's change is the total
variation distance (:func:`output_change`).

Shapes: N examples, T steps; an importance is (N, T), larger meaning more important.
:class:`Subject` puts a trained model behind the interface these measures take, and ranks its
steps by every method: attention, the gradients of Serrano & Smith, the saliency methods
attention is measured against (gradient × input, Jain & Wallace's gradient with the weights
held, Integrated Gradients of Sundararajan et al. 2017) and leave one out;
:mod:`attention_measured.experiments.registry` builds one for each model.
"""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
from scipy.optimize import minimize
from scipy.spatial.distance import jensenshannon
from scipy.special import logsumexp
from scipy.stats import kendalltau

from ..core import checks
from ..core.attention import softmax
from ..models.protocol import OUTPUT_KINDS, probabilities, take
from . import removal


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
    """Where the true cause falls in each example's ranking (Part VI): (N,) ints, 0 = first.

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
    if first.shape[1] < 2:  # one step: no pair to order (SciPy would warn, then say NaN too)
        return np.full(len(first), np.nan)
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
    with np.errstate(invalid="ignore"):
        distance = jensenshannon(p, q, axis=1)
    # rows equal but for rounding can give a divergence of −1e-17, whose root SciPy makes NaN
    return np.nan_to_num(distance, nan=0.0) ** 2


TIE_CHOICES = 5000  # the most ways of breaking one example's tie at the k-th step tried


def _top_k_choices(importance: np.ndarray, k: int) -> list[np.ndarray]:
    """Every way to take each row's k most important steps when some tie at the k-th: a list of
    (N, T) boolean masks (a row with fewer ways repeats its last)."""
    per_row = []
    for row in importance:
        kth = np.sort(row)[::-1][k - 1]
        surely, tied = row > kth, np.flatnonzero(row == kth)
        need = k - int(surely.sum())
        if math.comb(len(tied), need) > TIE_CHOICES:
            raise ValueError(
                f"{math.comb(len(tied), need)} ways to break a tie at the k-th step; "
                f"at most {TIE_CHOICES} are tried"
            )
        masks = []
        for chosen in itertools.combinations(tied, need):
            mask = surely.copy()
            mask[list(chosen)] = True
            masks.append(mask)
        per_row.append(masks)
    most = max(len(masks) for masks in per_row)
    return [np.array([m[min(c, len(m) - 1)] for m in per_row]) for c in range(most)]


def _check_k(k, importance: np.ndarray) -> int:
    return checks.integer(k, "k", 1, importance.shape[1])


def _top_k_output(predict, importance, k: int, keep_top: bool, worst) -> np.ndarray:
    """The decision's probability with the top-k steps removed (or alone, ``keep_top``), the
    worst for the method over the ways of breaking ties (``worst``: np.maximum or np.minimum)."""
    predict = checks.function(predict, "predict")
    importance = _importance(importance, "importance")
    out = None
    for top in _top_k_choices(importance, _check_k(k, importance)):
        p = np.asarray(predict(top if keep_top else ~top), dtype=float)
        out = p if out is None else worst(out, p)
    full = np.ones(importance.shape, dtype=bool)
    return np.asarray(predict(full), dtype=float) - out


def comprehensiveness(predict, importance, k: int) -> np.ndarray:
    """p(full input) − p(input without its top-k steps), per example (DeYoung et al. 2020): (N,).

    predict(keep) returns the model's probability of its original decision, (N,), for a
    boolean ``keep`` (N, T) of the steps it may read.  Large: the top steps carried the
    decision.  Steps tied at the k-th place count against the method, as in
    :func:`rank_of_truth`: of the ways to break the tie, the one that removes least is taken.
    """
    return _top_k_output(predict, importance, k, False, np.maximum)


def sufficiency(predict, importance, k: int) -> np.ndarray:
    """p(full input) − p(top-k steps alone), per example (DeYoung et al. 2020): (N,).

    Small (or negative): the top steps suffice for the decision.  Ties count against the
    method: of the ways to break a tie at the k-th place, the one that keeps least is taken.
    """
    return _top_k_output(predict, importance, k, True, np.minimum)


ERASER_BINS = (0.01, 0.05, 0.1, 0.2, 0.5)  # ERASER's shares of the steps removed or kept


def eraser_k(steps: int, fractions=ERASER_BINS) -> np.ndarray:
    """How many steps ERASER removes (or keeps) for each share in ``fractions`` of a sequence of
    ``steps`` steps: ceil(steps × share), at least 1 and at most ``steps`` (DeYoung et al.
    2020, as their baseline models compute it).  For twelve steps: 1, 1, 2, 3, 6."""
    steps = checks.integer(steps, "steps", 1)
    fractions = checks.array(fractions, "fractions", copy=False)
    if fractions.ndim != 1 or not len(fractions) or np.any((fractions <= 0) | (fractions > 1)):
        raise ValueError(f"fractions must be shares in (0, 1], got {fractions}")
    return np.clip(np.ceil(steps * fractions - 1e-9).astype(int), 1, steps)


def _aopc(measure, predict, importance, fractions, known=None) -> np.ndarray:
    """The mean of ``measure`` over ERASER's bins, each distinct k computed once (``known``:
    {k: values} already computed, filled in as it goes)."""
    importance = _importance(importance, "importance")
    ks = eraser_k(importance.shape[1], fractions)
    known = {} if known is None else known
    for k in sorted(set(ks.tolist()) - set(known)):
        known[k] = measure(predict, importance, k)
    return np.mean([known[int(k)] for k in ks], axis=0)


def comprehensiveness_aopc(predict, importance, fractions=ERASER_BINS) -> np.ndarray:
    """ERASER's comprehensiveness as its authors report it: :func:`comprehensiveness` averaged
    over the bins ``fractions`` of the steps (the area over the perturbation curve, AOPC, with
    k from :func:`eraser_k`), per example (DeYoung et al. 2020): (N,).  The average divides by
    the number of bins, as their scorer does."""
    return _aopc(comprehensiveness, predict, importance, fractions)


def sufficiency_aopc(predict, importance, fractions=ERASER_BINS) -> np.ndarray:
    """ERASER's sufficiency averaged over its bins, as :func:`comprehensiveness_aopc`: (N,)."""
    return _aopc(sufficiency, predict, importance, fractions)


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


def attention_flow(attentions, query=None) -> np.ndarray:
    """Attention flow (Abnar & Zuidema 2020): (T, T), the maximum flow from each output position
    of the last layer to each input position, through a graph whose edges carry the weights
    (mixed with the residual as in :func:`rollout`) as capacities.  Uses NetworkX.

    query: optional (T,) weights of one more attention that reads the last layer (as a
    decoder's word reads the encoder); then the result is (T,), the flow from that query, whose
    edges carry its weights, to each input position.
    """
    mixed = _with_residual(_layers(attentions))
    layers, steps = mixed.shape[0], mixed.shape[1]
    graph = nx.DiGraph()
    for layer in range(layers):  # node (l, j): position j after layer l; (0, j) is the input
        for i in range(steps):
            for j in range(steps):
                if mixed[layer, i, j] > 0:
                    graph.add_edge((layer + 1, i), (layer, j), capacity=float(mixed[layer, i, j]))
    if query is not None:
        query = _weights(checks.array(query, "query", ndim=1)[None])[0]
        if len(query) != steps:
            raise ValueError(f"query must hold one weight per position, ({steps},)")
        for j in np.flatnonzero(query > 0):
            graph.add_edge("query", (layers, int(j)), capacity=float(query[j]))
        return np.array([nx.maximum_flow_value(graph, "query", (0, j)) for j in range(steps)])
    flow = np.zeros((steps, steps))
    for i in range(steps):
        for j in range(steps):
            flow[i, j] = nx.maximum_flow_value(graph, (layers, i), (0, j))
    return flow


def _weights(weights) -> np.ndarray:
    weights = _importance(weights, "weights")
    if np.any(weights < 0) or not np.allclose(weights.sum(axis=1), 1.0):
        raise ValueError("weights must be non-negative rows that sum to 1")
    return weights


def distribution(output, name: str = "output") -> np.ndarray:
    """A model's output as class probabilities (N, K): (N,) probabilities of label 1 become
    two columns, (1 − p, p); (N, K) rows are returned as they are.  ``name`` is the argument's
    name in a refusal."""
    output = checks.array(output, name)
    if output.ndim == 1:
        return np.stack([1.0 - output, output], axis=1)
    if output.ndim != 2:
        raise ValueError(f"{name} must be (N,) or (N, K) probabilities, got {output.shape}")
    return output


def output_change(first, second) -> np.ndarray:
    """The total variation distance between two outputs, per example: (N,), from 0 to 1, half
    the summed |difference| of the class probabilities.  Jain & Wallace (2019) use it for several
    classes; for two outputs given as P(label 1), (N,) each, it is |Δp| and is computed so, the
    removal effect of Part I and Wiegreffe & Pinter's TVD."""
    first, second = distribution(first, "first"), distribution(second, "second")
    if first.shape != second.shape:
        raise ValueError(f"first {first.shape} and second {second.shape} must be one shape")
    if first.shape[1] == 2:
        return np.abs(first[:, 1] - second[:, 1])
    return 0.5 * np.abs(first - second).sum(axis=1)


def _decisions(output) -> np.ndarray:
    return distribution(output).argmax(axis=1)


def permutation_test(predict, weights, draws: int = 100, seed: int = 0) -> dict[str, np.ndarray]:
    """Each row's weights shuffled ``draws`` times at random (Jain & Wallace 2019): per example
    (N,), the "median" and "mean" output change over the shuffles and the share of shuffles
    that "flip" the decision (the most probable class).

    Jain & Wallace report the median.  Where outputs are saturated, the median stays near 0
    whenever fewer than half of the shuffles flip the decision, however many do; the share
    of flips says how many.  predict(weights (N, T)) returns the output, (N,) or (N, K); see
    :func:`output_change`.
    """
    predict = checks.function(predict, "predict")
    weights = _weights(weights)
    draws = checks.integer(draws, "draws", 1)
    rng = np.random.RandomState(checks.seed(seed))
    base = predict(weights)
    decision = _decisions(base)
    changes, flips = np.empty((draws, len(weights))), np.empty((draws, len(weights)))
    for d in range(draws):
        order = np.argsort(rng.random_sample(weights.shape), axis=1)
        shuffled = predict(np.take_along_axis(weights, order, axis=1))
        changes[d] = output_change(shuffled, base)
        flips[d] = _decisions(shuffled) != decision
    return {
        "median": np.median(changes, axis=0),
        "mean": changes.mean(axis=0),
        "flip": flips.mean(axis=0),
    }


def permutation_effect(predict, weights, draws: int = 100, seed: int = 0) -> np.ndarray:
    """The median output change over ``draws`` random shuffles of each row's weights (Jain &
    Wallace 2019): (N,).  Small: which step gets which weight hardly matters.  The median of
    :func:`permutation_test`, whose share of flipped decisions belongs beside it.
    """
    return permutation_test(predict, weights, draws, seed)["median"]


def _zeroed(weights: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """The weights with each row's ``steps`` (N, k) set to zero and the rest renormalised."""
    out = weights.copy()
    np.put_along_axis(out, steps, 0.0, axis=1)
    total = out.sum(axis=1, keepdims=True)
    return np.divide(out, total, out=np.zeros_like(out), where=total > 0)


def heaviest_flips(predict, weights, seed: int = 0) -> tuple[float, float]:
    """(share of decisions flipped by zeroing each row's heaviest weight, share flipped by
    zeroing a random other step), the rest renormalised (Serrano & Smith 2019).  The decision
    is the most probable class."""
    predict = checks.function(predict, "predict")
    weights = _weights(weights)
    if weights.shape[1] < 2:
        raise ValueError("zeroing a weight needs at least two steps")
    rng = np.random.RandomState(checks.seed(seed))
    decision = _decisions(predict(weights))
    heaviest = weights.argmax(axis=1)
    other = (heaviest + 1 + rng.randint(weights.shape[1] - 1, size=len(weights))) % weights.shape[1]
    flips = []
    for steps in (heaviest, other):
        changed = _decisions(predict(_zeroed(weights, steps[:, None])))
        flips.append(float(np.mean(changed != decision)))
    return flips[0], flips[1]


def removed_to_flip(predict, weights, ranking) -> np.ndarray:
    """The share of steps zeroed, most important first by ``ranking`` (N, T), before the
    decision flips (Serrano & Smith 2019): (N,).  1.0 where it never flips before the last
    step would have to go."""
    predict = checks.function(predict, "predict")
    weights = _weights(weights)
    ranking = _importance(ranking, "ranking")
    if ranking.shape != weights.shape:
        raise ValueError(f"ranking must be shaped like the weights {weights.shape}")
    order = np.argsort(-ranking, axis=1, kind="stable")
    decision = _decisions(predict(weights))
    steps = weights.shape[1]
    removed = np.ones(len(weights))
    for k in range(1, steps):
        changed = _decisions(predict(_zeroed(weights, order[:, :k])))
        first = (changed != decision) & (removed == 1.0)
        removed[first] = k / steps
    return removed


GRID = 33  # points on each edge of the simplex and on each segment to a vertex (the adversary)


BISECTIONS = 40  # halvings that place each point where the output's change reaches epsilon


CHUNK = 4096  # weight rows per call of predict


def adversarial_weights(predict, weights, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Weights as far from each row's as possible, in Jensen–Shannon divergence, while the
    output moves by at most ``epsilon`` in :func:`output_change` (Jain & Wallace 2019):
    (new weights (N, T), their divergence (N,), at most ln 2).

    ``predict`` is called with many candidate rows for one example at a time, (K, T) -> (K,) or
    (K, C).  The search walks every edge of the simplex (weight shared between two steps) and
    every segment from the row to a one-hot weight, at :data:`GRID` points each, and moves
    each place where the output's change crosses ``epsilon`` onto the boundary by bisection;
    the farthest point found within epsilon wins.  JSD is convex in the weights, so for a
    model whose logit is linear in them the farthest weights lie at a vertex of the simplex cut
    by the two planes of the constraint, and every such vertex lies on an edge: the search is
    then exact (a test holds it to the enumerated vertices).  Jain & Wallace instead run Adam
    on the weights' log-scores from random starts, with the constraint as a penalty.
    """
    predict = checks.function(predict, "predict")
    weights = _weights(weights)
    epsilon = checks.real(epsilon, "epsilon", positive=True)
    found = np.array([_adversarial_row(predict, row, epsilon) for row in weights])
    return found, jensen_shannon(found, weights)


def _adversarial_row(predict, row: np.ndarray, epsilon: float) -> np.ndarray:
    """One row of :func:`adversarial_weights`: the farthest weights on the edges and segments."""
    steps = len(row)
    if steps == 1:
        return row
    base = distribution(predict(row[None]))
    decision = int(base[0].argmax())

    def measured(points):  # (K, T) -> (output change (K,), decision's probability − base's)
        change, side = np.empty(len(points)), np.empty(len(points))
        for at in range(0, len(points), CHUNK):
            out = distribution(predict(points[at : at + CHUNK]))
            change[at : at + CHUNK] = output_change(out, np.broadcast_to(base, out.shape))
            side[at : at + CHUNK] = out[:, decision] - base[0, decision]
        return change, side

    corners = np.eye(steps)
    i, j = np.triu_indices(steps, 1)
    starts = np.concatenate([corners[j], np.broadcast_to(row, (steps, steps))])  # (P, T)
    ends = np.concatenate([corners[i], corners])

    def along(paths, lam):  # the points at lam (K,) along paths (K,)
        return starts[paths] + lam[:, None] * (ends[paths] - starts[paths])

    grid = np.linspace(0.0, 1.0, GRID)
    paths = np.repeat(np.arange(len(starts)), GRID)
    change, side = (a.reshape(-1, GRID) for a in measured(along(paths, np.tile(grid, len(starts)))))
    inside = change <= epsilon
    points = [along(paths[inside.ravel()], np.tile(grid, len(starts))[inside.ravel()])]
    # where the change crosses epsilon between two grid points, bisect onto the boundary
    p, g = np.nonzero(inside[:, :-1] != inside[:, 1:])
    keep_left = inside[p, g]
    points.append(
        _boundary(
            measured,
            along,
            p,
            grid[g],
            grid[g + 1],
            keep_left,
            epsilon,
            (change[p, g], change[p, g + 1]),
        )
    )
    # a band narrower than the grid: the decision's probability passes the base's between two
    # points that both move the output too far; bisect to the crossing, then out to both edges
    p, g = np.nonzero(
        ~inside[:, :-1] & ~inside[:, 1:] & (np.sign(side[:, :-1]) != np.sign(side[:, 1:]))
    )
    if len(p):
        flip = -np.sign(side[p, g])  # makes the left point's side the negative one
        crossing = _root(
            lambda at: flip * measured(along(p, at))[1],
            grid[g],
            grid[g + 1],
            flip * side[p, g],
            flip * side[p, g + 1],
        )
        ok = measured(along(p, crossing))[0] <= epsilon
        p, crossing, g = p[ok], crossing[ok], g[ok]
        points.append(along(p, crossing))
        points.append(
            _boundary(measured, along, p, grid[g], crossing, np.zeros(len(p), bool), epsilon)
        )
        points.append(
            _boundary(measured, along, p, crossing, grid[g + 1], np.ones(len(p), bool), epsilon)
        )
    points = np.concatenate(points)
    divergence = jensen_shannon(points, np.broadcast_to(row, points.shape))
    return points[int(divergence.argmax())]


def _boundary(measured, along, paths, left, right, keep_left, epsilon, known=None):
    """Points on ``paths`` between ``left`` and ``right`` (K,) where the output's change meets
    epsilon, from the side that stays within it (the left where ``keep_left``); ``known`` holds
    the changes at ``left`` and ``right`` where they were measured already."""
    good = np.where(keep_left, left, right)
    bad = np.where(keep_left, right, left)
    if known is None:
        known = measured(along(paths, left))[0], measured(along(paths, right))[0]
    # aim a hair inside epsilon, so that the point found is within it however it is rounded
    aim = epsilon * (1 - 1e-9)
    at_good = np.where(keep_left, known[0], known[1]) - aim
    at_bad = np.where(keep_left, known[1], known[0]) - aim
    found = _root(lambda at: measured(along(paths, at))[0] - aim, good, bad, at_good, at_bad)
    return along(paths, found)


RESOLUTION = 2.0**-45  # where the root's bracket is this narrow, the search stops


def _root(f, good, bad, f_good, f_bad) -> np.ndarray:
    """For each of K brackets, the point nearest the root of ``f`` (vectorised, (K,) -> (K,))
    on the side where f ≤ 0: ``good`` and ``bad`` (K,) are ends with f(good) ≤ 0 < f(bad).

    The Illinois method (regula falsi that halves the stale end's value when one end is kept
    twice, Dowell & Jarratt 1971), with a halving wherever the secant leaves the bracket: it
    narrows each bracket to :data:`RESOLUTION` in about a dozen calls of ``f`` where plain
    halving needs :data:`BISECTIONS`, and never takes more than that.  SciPy's ``brentq``
    does the same for one bracket at a time; here every bracket shares each call."""
    good, bad = np.array(good, dtype=float), np.array(bad, dtype=float)
    f_good, f_bad = np.array(f_good, dtype=float), np.array(f_bad, dtype=float)
    kept = np.zeros(len(good))  # +1 where the good end moved last, −1 the bad end
    for _ in range(BISECTIONS):
        open_ = (np.abs(bad - good) > RESOLUTION) & (f_good < 0)
        if not open_.any():
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            at = good - f_good * (bad - good) / (f_bad - f_good)
        lo, hi = np.minimum(good, bad), np.maximum(good, bad)
        at = np.where((at > lo) & (at < hi), at, (good + bad) / 2)
        value = np.where(open_, f(np.where(open_, at, good)), f_good)
        to_good = open_ & (value <= 0)
        to_bad = open_ & ~to_good
        f_bad = np.where(to_good & (kept == 1), f_bad / 2, f_bad)
        f_good = np.where(to_bad & (kept == -1), f_good / 2, f_good)
        good, f_good = np.where(to_good, at, good), np.where(to_good, value, f_good)
        bad, f_bad = np.where(to_bad, at, bad), np.where(to_bad, value, f_bad)
        kept = np.where(to_good, 1, np.where(to_bad, -1, kept))
    return good


def frozen_weights_accuracy(weights, inputs, labels, heldout) -> float:
    """Wiegreffe & Pinter's (2019) diagnostic: weights fixed in advance, given to a model with no
    attention of its own, here a logistic readout of the pooled inputs Σ_t a_t x_t.

    weights (N, T), inputs (N, T, C), labels (N,) of 0s and 1s train the readout (SciPy's
    BFGS on the mean cross-entropy); ``heldout`` = (weights, inputs, labels) of other examples,
    on which the accuracy is returned.  Weights that carry the task's information make this
    readout accurate; uniform weights 1/T give it only the plain mean of the inputs.
    """
    pooled, labels = _pooled(weights, inputs, labels)
    if (
        isinstance(heldout, (str, bytes))
        or not isinstance(heldout, (tuple, list))
        or len(heldout) != 3
    ):
        raise TypeError(
            f"heldout must be (weights, inputs, labels) of other examples, got {heldout!r}"
        )
    test, test_labels = _pooled(*heldout)
    if test.shape[1] != pooled.shape[1]:
        raise ValueError("the held-out inputs need as many channels as the training inputs")

    def loss(theta):
        z = pooled @ theta[:-1] + theta[-1]
        return float(np.mean(np.logaddexp(0.0, z) - labels * z))

    theta = minimize(loss, np.zeros(pooled.shape[1] + 1), method="BFGS").x
    return float(np.mean(((test @ theta[:-1] + theta[-1]) > 0) == (test_labels == 1)))


def _pooled(weights, inputs, labels) -> tuple[np.ndarray, np.ndarray]:
    weights = _weights(weights)
    inputs = checks.array(inputs, "inputs")
    labels = checks.array(labels, "labels")
    if inputs.ndim != 3 or inputs.shape[:2] != weights.shape:
        raise ValueError(f"inputs must be (N, T, C) with (N, T) = {weights.shape}")
    if labels.shape != (len(weights),) or not np.all((labels == 0) | (labels == 1)):
        raise ValueError("labels must be one 0 or 1 per example")
    return np.einsum("nt,ntc->nc", weights, inputs), labels


STEP = 1e-4  # the finite-difference step of the gradient methods


IG_STEPS = 16  # intervals of Integrated Gradients' trapezoidal rule, to begin with


IG_MOST_STEPS = 256  # and at most (the paper: 20 to 300 steps are enough)


PATH_ROWS = 512  # rows per forward pass of Integrated Gradients' points (measured best)


IG_TOLERANCE = 0.05  # the paper's check: the steps add up to p(x) − p(0) within 5%


class Subject:
    """A trained model and the examples it is explained on, behind the one interface every
    measure above takes (Part VI).  Any model of the book's protocol (:mod:`~.protocol`) can be
    a subject: the Subject runs it through ``forward`` with its three changes, and needs nothing
    written for the model.

    ``Subject(model, params, inputs, row=None, truth=None, name=None, no_truth=None)``:

    - ``inputs``: the examples, as the model's forward pass takes them;
    - ``row``: which row of the model's weights each example is explained by, where they have
      several: a head or a hop (one integer for every example), or a query position or target
      word (one integer per example, (N,)).  A change reaches that row alone: the other rows
      keep every step and their own weights.  Where the model answers once per row (a
      translator, the cloze head), the example's answer is read at that row;
    - ``truth``: (N,) the step that decides each example, known by construction, or None, with
      ``no_truth`` saying why;
    - ``name``: what the tables call it.

    What it holds: ``weights`` (N, T), the row's weights over the steps the model may attend to
    there (its own mask left out; a row's share of its total where the model's weights do not
    sum to one, as local-p's); ``probabilities`` (N, K) and ``decision`` (N,), the model's
    answer; ``layers`` (N, L, T, T), the self-attention beneath, for rollout and flow; ``cannot``
    {what: why} for what the model cannot do: ``"truth"``, ``"replace"`` (its weights cannot be
    swapped for others), ``"layers"``, ``"delete"`` (its input cannot lose a step: no
    ``without_step``) or ``"contributions"`` (it does not report what each step adds).

    Every ranking is computed here, once, for every model (:meth:`importance`).
    """

    METHODS = (
        "attention",
        "gradient",
        "attention × gradient",
        "gradient × input",
        "gradient × input, weights held",
        "integrated gradients",
        "leave one out",
        "leave one out, deleted",
        "norm-weighted attention",
        "rollout",
        "flow",
    )
    LACKS = ("replace", "truth", "layers", "delete", "contributions")  # what a subject may lack
    NEEDS = {  # what each ranking needs that a model may lack
        "gradient": "replace",
        "attention × gradient": "replace",
        "gradient × input, weights held": "replace",
        "leave one out, deleted": "delete",
        "norm-weighted attention": "contributions",
        "rollout": "layers",
        "flow": "layers",
    }

    def __init__(self, model, params, inputs, row=None, truth=None, name=None, no_truth=None):
        if not callable(getattr(model, "forward", None)):
            raise TypeError(f"model must follow the book's protocol, got {type(model).__name__}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be text, got {type(name).__name__}")
        self.model, self.params, self.inputs = model, params, inputs
        self.name = repr(model) if name is None else name
        self.kind = checks.choice(getattr(model, "output_kind", None), "output_kind", OUTPUT_KINDS)
        if self.kind == "value":
            raise ValueError("a regression makes no decision to explain")
        own = model.forward(params, inputs)
        if own.weights is None:
            raise ValueError(f"{self.name} has no attention weights to explain")
        self._own = np.asarray(own.weights, dtype=float)
        n = len(self._own)
        if self._own.ndim == 3:
            if row is None:
                raise ValueError(
                    f"the model's weights have {self._own.shape[1]} rows per example: say which "
                    "row explains each, row=..."
                )
            self._row = np.broadcast_to(
                checks.integers(row, "row", 0, self._own.shape[1] - 1), (n,)
            ).copy()
        elif self._own.ndim == 2:
            if row is not None:
                raise ValueError("the model has one row of weights per example: row must be None")
            self._row = None
        else:
            raise ValueError(
                f"the model's weights must be (N, T) or (N, Q, T), got {self._own.shape}"
            )
        own_rows = self._pick(self._own)  # (N, T_all)
        allowed = np.ones(own_rows.shape, dtype=bool)
        if own.mask is not None:
            allowed = self._pick(np.broadcast_to(own.mask, self._own.shape))
        counts = allowed.sum(axis=1)
        if np.any(counts != counts[0]):
            raise ValueError("every example must allow the same number of steps")
        self._columns = np.nonzero(allowed)[1].reshape(n, counts[0])  # (N, T)
        weights = np.take_along_axis(own_rows, self._columns, axis=1)
        self._total = None
        if not getattr(model, "weights_sum_to_one", True):
            # local-p's Gaussian scales its softmax, so its weights sum to less than 1: the
            # subject explains each step's share, and weights put in its place keep the total
            self._total = weights.sum(axis=1, keepdims=True)
            weights = weights / self._total
        self.weights = _weights(weights)
        self.cannot = {}
        if "weights" in getattr(model, "cannot", {}):
            self.cannot["replace"] = model.cannot["weights"]
        if "delete" in getattr(model, "cannot", {}):
            self.cannot["delete"] = model.cannot["delete"]
        elif not callable(getattr(model, "without_step", None)):
            self.cannot["delete"] = "the model has no way to read its input with a step deleted"
        if not callable(getattr(model, "contributions", None)):
            self.cannot["contributions"] = "the model does not report what each step adds"
        if truth is None:
            if no_truth is not None and not isinstance(no_truth, str):
                raise TypeError(f"no_truth must say why there is no truth, got {no_truth!r}")
            self.cannot["truth"] = no_truth or "this task has no one step known to decide it"
            self.truth = None
        else:
            self.truth = self._in_columns(truth)
        if own.layers is None or self.weights.shape[1] != own_rows.shape[1]:
            self.cannot["layers"] = "there is one layer of attention, nothing to roll out"
            self.layers = None
        else:
            self.layers = checks.array(own.layers, "layers")
            n, t = self.weights.shape
            if self.layers.ndim != 4 or self.layers.shape[:1] + self.layers.shape[2:] != (n, t, t):
                raise ValueError(f"the model's layers must be (N, L, T, T) with N = {n}, T = {t}")
        first, _ = self._distinct(inputs, {})
        self._copies = 1 if first is None else n // len(first)  # rows read from one input
        self.probabilities = self._probabilities(own.output, np.arange(n))
        self.decision = self.probabilities.argmax(axis=1)
        self._cache: dict[str, np.ndarray] = {}
        self._kept: dict[tuple, float] = {}  # keep_predict's answers, by example and kept set

    def __repr__(self) -> str:
        n, t = self.weights.shape
        return f"Subject({self.name!r}, {n} examples of {t} steps)"

    def _pick(self, array: np.ndarray) -> np.ndarray:
        """Each example's explained row of an array shaped like the model's weights."""
        if self._row is None:
            return array
        return array[np.arange(len(array)), self._row]

    def _in_columns(self, truth) -> np.ndarray:
        """The truth (N,), a step of the model's, as a place among the example's steps."""
        truth = checks.integers(truth, "truth", 0, self._own.shape[-1] - 1)
        if truth.shape != (len(self._columns),):
            raise ValueError(f"truth must hold one step per example, ({len(self._columns)},)")
        found = self._columns == truth[:, None]
        if not found.any(axis=1).all():
            raise ValueError("truth must be a step each example may attend to")
        return found.argmax(axis=1)

    def _probabilities(self, output, rows: np.ndarray) -> np.ndarray:
        """The model's answer for the examples ``rows`` as class probabilities (n, K)."""
        output = np.asarray(output, dtype=float)
        if self.kind == "tokens":  # one answer per row: the explained row's
            output = output[np.arange(len(rows)), self._row[rows]]
        return probabilities(self.kind, output)

    def _logits(self, weights=None, keep=None, scale=None, rows=None, inputs=None) -> np.ndarray:
        """The model's class scores (n, K) for the examples ``rows`` (all by default), with one
        change applied to each example's explained row: ``keep`` or ``weights`` (n, T) over its
        steps, ``scale`` (n, T) of its steps' inputs; or for every example, other ``inputs``
        (a step deleted)."""
        rows = np.arange(len(self.weights)) if rows is None else np.asarray(rows)
        every = np.arange(len(rows))
        columns = self._columns[rows]
        shape = (len(rows),) + self._own.shape[1:]
        change = {}
        if keep is not None:
            full = np.ones(shape, dtype=bool)
            self._place(full, every, rows, columns, keep)
            change["keep"] = full
        if weights is not None:
            full = self._own[rows].copy()  # its steps outside the mask keep their zero weight
            if self._total is not None:
                weights = weights * self._total[rows]
            self._place(full, every, rows, columns, weights)
            change["weights"] = full
        if scale is not None:
            full = np.ones((len(rows), self._own.shape[-1]))
            full[every[:, None], columns] = scale
            change["scale"] = full
        if inputs is None:
            inputs = (
                self.inputs
                if len(rows) == len(self.weights) and np.all(rows == every)
                else take(self.inputs, rows)
            )
        first, again = self._distinct(inputs, change)
        if first is not None:  # run each distinct example once, read every row from it
            inputs = take(inputs, first)
            change = {name: value[first] for name, value in change.items()}
        output = np.asarray(self.model.forward(self.params, inputs, **change).output, dtype=float)
        if first is not None:
            output = output[again]
        if self.kind == "tokens":
            output = output[every, self._row[rows]]
        if self.kind == "logit":
            output = np.stack([np.zeros_like(output), output], axis=1)
        return output

    def _distinct(self, inputs, change) -> tuple:
        """(first, again): where several examples are one input read at different rows (a
        translator explained at each word of a sentence) and the changes leave them alike,
        ``first`` indexes one copy of each and ``again`` (n,) each example's copy among them,
        so that the model runs once per distinct input; (None, None) where every example
        differs or the inputs are not arrays."""
        if self.kind != "tokens" or not isinstance(inputs, (tuple, np.ndarray)):
            return None, None
        parts = inputs if isinstance(inputs, tuple) else (inputs,)
        n = len(parts[0])
        table = [np.asarray(part, dtype=float).reshape(n, -1) for part in parts]
        table += [np.asarray(v, dtype=float).reshape(n, -1) for v in change.values()]
        _, first, again = np.unique(
            np.concatenate(table, axis=1), axis=0, return_index=True, return_inverse=True
        )
        if len(first) == n:
            return None, None
        return first, again.reshape(n)

    def _place(self, full, every, rows, columns, values) -> None:
        """Write ``values`` (n, T) into the explained row's allowed steps of ``full``."""
        if self._row is None:
            full[every[:, None], columns] = values
        else:
            full[every[:, None], self._row[rows][:, None], columns] = values

    # -------------------------------------------------------------- running the model
    def output(self, weights=None, keep=None, scale=None) -> np.ndarray:
        """Class probabilities (N, K) (see the class docstring for the three changes)."""
        shape = self.weights.shape
        if weights is not None:
            weights = checks.array(weights, "weights", shape=shape, copy=False)
        if keep is not None:
            keep = checks.mask(keep, "keep", shape)
        if scale is not None:
            scale = checks.array(scale, "scale", shape=shape, copy=False)
        return softmax(self._logits(weights=weights, keep=keep, scale=scale))

    def check(self, what: str) -> None:
        """Refuse, with the model's own reason, what it cannot do: ``what`` is one of
        :data:`LACKS`."""
        checks.choice(what, "what", self.LACKS)
        if what in self.cannot:
            raise ValueError(f"{self.name}: {self.cannot[what]}")

    def predict(self, weights) -> np.ndarray:
        """(N, K) probabilities with the given weights (N, T) in place of the model's own."""
        self.check("replace")
        if weights is None:
            raise TypeError("weights must be an (N, T) array to put in place of the model's own")
        return self.output(weights=weights)

    def row_predict(self, row: int):
        """predict for example ``row`` alone: candidate weights (K, T) for that one example ->
        probabilities (K, C).

        Where the model reads each row from the rows before it alone (a decoder under teacher
        forcing: its ``rows_upto(inputs, n)`` keeps the first n), the example is cut after its
        explained row first, which leaves that row's answer as it was and saves the later rows'
        work, the adversary's costliest part on the translators (``make bench``)."""
        self.check("replace")
        row = checks.index(row, "row", len(self.weights))
        subject, at = self, row
        upto = getattr(self.model, "rows_upto", None)
        if callable(upto) and self._row is not None:
            explained = int(self._row[row])
            inputs = upto(take(self.inputs, np.array([row])), explained + 1)
            subject = Subject(self.model, self.params, inputs, row=[explained], name=self.name)
            at = 0

        def predict(weights):
            weights = checks.array(weights, "weights", shape=(None, self.weights.shape[1]))
            return softmax(subject._logits(weights=weights, rows=np.full(len(weights), at)))

        return predict

    def keep_predict(self, keep) -> np.ndarray:
        """(N,) the probability of the model's own decision when it may attend only where
        ``keep`` (N, T) is True.  Each example's answer for each set of kept steps is computed
        once and remembered: the removal tests ask for the same sets again and again (the full
        input, the k = 1 of several bins, the ways of breaking a tie), and only the examples
        whose set is new are run."""
        keep = checks.mask(keep, "keep", self.weights.shape)
        known = self._kept  # {(example, its row of keep as bytes): the probability}
        keys = [(i, row.tobytes()) for i, row in enumerate(keep)]
        todo = np.array([i for i, key in enumerate(keys) if key not in known], dtype=int)
        if len(todo):
            rows = None if len(todo) == len(keep) else todo
            logits = self._logits(keep=keep if rows is None else keep[todo], rows=rows)
            for i, value in zip(todo, self._of_decision(softmax(logits), rows)):
                known[keys[i]] = value
        return np.array([known[key] for key in keys])

    def _of_decision(self, probabilities: np.ndarray, rows=None) -> np.ndarray:
        """The decision's probability (n,) in ``probabilities`` (n, K) of the examples
        ``rows`` (all by default)."""
        decision = self.decision if rows is None else self.decision[rows]
        return probabilities[np.arange(len(probabilities)), decision]

    def _margin(self, rows=None, **change) -> np.ndarray:
        """The decision's log-odds, log p − log(1 − p), computed from the scores: (n,), for
        the examples ``rows`` (all by default)."""
        logits = np.asarray(self._logits(rows=rows, **change), dtype=float)
        decision = self.decision if rows is None else self.decision[rows]
        own = logits[np.arange(len(logits)), decision]
        others = logits.copy()
        others[np.arange(len(logits)), decision] = -np.inf
        return own - logsumexp(others, axis=1)

    def _spread(self, probabilities=None, rows=None) -> np.ndarray:
        """p (1 − p) of the decision, 1 − p summed from the other classes: (n,); of the model's
        own ``probabilities`` unless others (n, K), of the examples ``rows``, are given."""
        probabilities = self.probabilities if probabilities is None else probabilities
        own = self._of_decision(probabilities, rows)
        return own * (probabilities.sum(axis=1) - own)

    def _slope(self, name: str, start: np.ndarray, rows=None, **held) -> np.ndarray:
        """∂ margin / ∂ start_t for each step t, by central differences: (n, T), signed, for
        the examples ``rows`` (all by default); the changes in ``held`` stay as given."""
        out = np.empty(start.shape)
        for t in range(start.shape[1]):
            up, down = start.copy(), start.copy()
            up[:, t] += STEP
            down[:, t] -= STEP
            out[:, t] = (
                self._margin(rows, **{name: up}, **held)
                - self._margin(rows, **{name: down}, **held)
            ) / (2 * STEP)
        return out

    def _path_slopes(self, rows: np.ndarray, alphas: np.ndarray) -> np.ndarray:
        """∂ p / ∂ s_t at every input scaled by each of ``alphas``, for the examples ``rows``:
        (len(alphas), n, T).  Several points of the path run as one batch of at most
        :data:`PATH_ROWS` distinct inputs, since a pass over a few rows costs nearly as much
        as over many (and one over thousands more per row than one over hundreds)."""
        steps = self.weights.shape[1]
        out = np.empty((len(alphas), len(rows), steps))
        per_call = max(1, PATH_ROWS * self._copies // len(rows))  # distinct inputs per call
        for first in range(0, len(alphas), per_call):
            chunk = alphas[first : first + per_call]
            start = np.repeat(chunk, len(rows))[:, None] * np.ones((1, steps))
            copies = np.tile(rows, len(chunk))
            p = softmax(self._logits(scale=start, rows=copies))
            slope = self._spread(p, copies)[:, None] * self._slope("scale", start, copies)
            out[first : first + len(chunk)] = slope.reshape(len(chunk), len(rows), steps)
        return out

    def _integrated(self) -> np.ndarray:
        """Integrated Gradients of p, the decision's probability, along the straight path from
        every input scaled to 0 to the input itself (Sundararajan et al. 2017): (N, T), signed.

        The integral is taken by the trapezoidal rule, as the authors' code takes it, over
        :data:`IG_STEPS` intervals; as the paper advises, an example whose steps do not add
        up to p(x) − p(0) within :data:`IG_TOLERANCE` is integrated again with twice as many
        intervals (the new points halfway between the old), up to :data:`IG_MOST_STEPS`."""
        n, steps = self.weights.shape
        change = self._of_decision(self.probabilities) - self._of_decision(
            softmax(self._logits(scale=np.zeros((n, steps))))
        )
        intervals = np.full(n, IG_STEPS)  # each example's, as it is refined
        rule = np.array([0.5] + [1.0] * (IG_STEPS - 1) + [0.5])  # the trapezoid's weights
        alphas = np.arange(IG_STEPS + 1) / IG_STEPS
        total = np.einsum("k,knt->nt", rule, self._path_slopes(np.arange(n), alphas))
        rows = np.arange(n)  # total / intervals is the integral; a finer rule adds midpoints
        while len(rows):
            gap = np.abs(total[rows].sum(axis=1) / intervals[rows] - change[rows])
            rows = rows[gap > IG_TOLERANCE * np.maximum(np.abs(change[rows]), 0.01)]
            if not len(rows) or intervals[rows[0]] >= IG_MOST_STEPS:
                break
            now = intervals[rows[0]]
            halfway = (2 * np.arange(now) + 1) / (2 * now)
            total[rows] += self._path_slopes(rows, halfway).sum(axis=0)
            intervals[rows] = 2 * now
        return total / intervals[:, None]

    # -------------------------------------------------------------- rankings
    def supports(self, method: str) -> str | None:
        """None if ``method`` can rank this model's steps, else the reason it cannot."""
        method = checks.choice(method, "method", self.METHODS)
        need = self.NEEDS.get(method)
        return self.cannot.get(need) if need else None

    def importance(self, method: str) -> np.ndarray:
        """(N, T) each step's importance by ``method``, larger meaning more important:

        - ``"attention"``: the weights;
        - ``"gradient"``: ∂ p / ∂ a_t, signed, p the decision's probability and a the weights,
          as Serrano & Smith (2019) rank, largest first: the step whose weight would raise the
          decision most.  Computed as p (1 − p) ∂ m / ∂ a_t, m the decision's log-odds, which
          keeps its digits where p is within rounding of 1;
        - ``"attention × gradient"``: a_t ∂ p / ∂ a_t, signed (Serrano & Smith 2019);
        - ``"gradient × input"``: |∂ m / ∂ x_t · x_t|, the change of m as step t's input is
          scaled, the gradient flowing through the attention too (the saliency of Bastings &
          Filippova 2020);
        - ``"gradient × input, weights held"``: |∂ p / ∂ x_t · x_t| with the attention weights
          held at the model's own, Jain & Wallace's (2019) gradient, which "disconnects the
          computation graph at the attention module";
        - ``"integrated gradients"``: ∫ ∂ p / ∂ x_t · x_t along the inputs scaled from 0 to 1,
          signed (Sundararajan et al. 2017), from :data:`IG_STEPS` intervals, refined where needed;
          its steps add up to p(x) − p(0), the completeness axiom;
        - ``"leave one out"``: |p − p without step t|, p the decision's probability, the step
          hidden from the explained row's attention (Part I's removal test);
        - ``"leave one out, deleted"``: the total variation distance between the model's
          outputs with and without step t deleted from the input, so that everything the model
          computes from its input is computed again without it (Jain & Wallace 2019's
          leave-one-out; for a yes-or-no answer |Δp|, equal to the above for a model whose
          steps meet only in the attention, such as Part I's network);
        - ``"norm-weighted attention"``: ‖a_t f(x_t)‖, the length of the vector step t adds to
          the row's attention output (Kobayashi et al. 2020), from the model's
          ``contributions``;
        - ``"rollout"``, ``"flow"``: the weights carried down through ``layers`` by
          :func:`rollout` and :func:`attention_flow` (Abnar & Zuidema 2020).
        """
        reason = self.supports(method)
        if reason:
            raise ValueError(f"{self.name} has no {method!r} ranking: {reason}")
        if method not in self._cache:
            with checks.trusted():  # the model ran checked when the Subject was made
                self._cache[method] = self._rank(method)
        return self._cache[method]

    def _rank(self, method: str) -> np.ndarray:
        n, steps = self.weights.shape
        if method == "attention":
            return self.weights
        if method == "gradient":
            return self._spread()[:, None] * self._slope("weights", self.weights)
        if method == "attention × gradient":
            return self.weights * self.importance("gradient")
        if method == "gradient × input":
            return np.abs(self._slope("scale", np.ones((n, steps))))
        if method == "gradient × input, weights held":
            held = self._slope("scale", np.ones((n, steps)), weights=self.weights)
            return np.abs(self._spread()[:, None] * held)
        if method == "integrated gradients":
            return self._integrated()
        if method == "leave one out":  # Part I's removal test, on the decision's probability
            without = np.empty((n, steps))
            for t in range(steps):
                keep = np.ones((n, steps), dtype=bool)
                keep[:, t] = False
                without[:, t] = self.keep_predict(keep)
            return removal.effects(self._of_decision(self.probabilities), without)
        if method == "leave one out, deleted":  # the output's total variation, as theirs
            moved = np.empty((n, steps))
            for t in range(steps):
                inputs = self.model.without_step(self.inputs, self._columns[:, t])
                moved[:, t] = output_change(
                    self.probabilities, softmax(self._logits(inputs=inputs))
                )
            return moved
        if method == "norm-weighted attention":
            added = np.asarray(self.model.contributions(self.params, self.inputs), dtype=float)
            if added.shape[:-1] != self._own.shape:
                raise ValueError(
                    f"{self.name}'s contributions must be its weights' shape {self._own.shape} "
                    f"and a feature axis, got {added.shape}"
                )
            added = np.take_along_axis(self._pick(added), self._columns[:, :, None], axis=1)
            return np.sqrt(np.sum(added * added, axis=-1))
        if method == "rollout":
            return np.einsum(
                "nt,nts->ns", self.weights, np.array([rollout(a) for a in self.layers])
            )
        return np.array([attention_flow(a, query=w) for a, w in zip(self.layers, self.weights)])


EPSILON = 0.01  # Jain & Wallace's tolerance: the output may move this much (total variation)


ADVERSARIAL_ROWS = 40  # examples of each model searched for adversarial weights (the costly one)


REMOVAL_RANKINGS = ("attention", "random", "gradient", "attention × gradient")


MEASURES = {
    "first": "share of examples whose true cause the ranking puts first",
    "rank": "mean place of the true cause in the ranking (0 = first)",
    "τ gradient × input, weights held": (
        "median Kendall τ of attention and gradient × input with the weights held (Jain & "
        "Wallace's τ_g)"
    ),
    "τ leave one out": (
        "median Kendall τ of attention and leave one out with the step hidden from attention "
        "(the book's variant of Jain & Wallace's τ_loo)"
    ),
    "τ leave one out, deleted": (
        "median Kendall τ of attention and leave one out with the step deleted from the input "
        "(Jain & Wallace's τ_loo)"
    ),
    "permutation": "median output change when the weights are shuffled",
    "permutation flips": "mean share of shuffles of the weights that flip the decision",
    "adversarial": f"median JSD of weights found within ε = {EPSILON} of the output",
    "uniform kept": "share of decisions kept when every weight is 1/T at test time, not retrained",
    "flips heaviest": "share of decisions flipped by zeroing the heaviest weight",
    "flips random": "share of decisions flipped by zeroing a random other weight",
    "removed": "mean share of steps zeroed, by a ranking, before the decision flips",
    "comprehensiveness": "mean drop of p when the top step of a ranking is removed",
    "sufficiency": "mean drop of p when the top step of a ranking is all that is kept",
    "comprehensiveness AOPC": "comprehensiveness averaged over ERASER's bins of the steps",
    "sufficiency AOPC": "sufficiency averaged over ERASER's bins of the steps",
}


SALIENCY = (
    "attention",
    "norm-weighted attention",
    "gradient × input",
    "integrated gradients",
    "leave one out",
)
# the rankings whose top steps the removal measures take out (attention and its rivals)


def scorecard(subjects, seed: int = 0) -> dict:
    """Every measure of this module on one trained model (Part VI, the closing table).

    subjects: a :class:`Subject`, or a list of them (one model on examples of several lengths),
    whose examples are pooled.  Returns {"values": {name: float}, "cannot": {name: reason}}:
    a name is a key of :data:`MEASURES`, followed for the ranking measures by the method, as in
    ``"first: gradient"``; a measure the model cannot support is absent from the values and
    present, with its reason, in "cannot".
    """
    if isinstance(subjects, Subject):
        subjects = [subjects]
    elif not isinstance(subjects, (list, tuple)):
        raise TypeError(f"subjects must be a Subject or a list of them, got {subjects!r}")
    if not subjects or not all(isinstance(s, Subject) for s in subjects):
        raise ValueError("subjects must be a Subject or a non-empty list of them")
    rng = np.random.RandomState(checks.seed(seed))
    pooled: dict[str, list] = {}
    cannot: dict[str, str] = {}

    def add(name, values):
        pooled.setdefault(name, []).append(np.atleast_1d(np.asarray(values, dtype=float)))

    sizes = [len(s.weights) for s in subjects]
    chosen = rng.choice(sum(sizes), min(sum(sizes), ADVERSARIAL_ROWS), replace=False)
    starts = np.cumsum([0] + sizes)
    for i, s in enumerate(subjects):
        searched = np.sort(chosen[(chosen >= starts[i]) & (chosen < starts[i + 1])] - starts[i])
        with checks.trusted():  # each Subject ran its model checked when it was made
            _card(s, rng, add, cannot, searched)
    values = {}
    for name, parts in pooled.items():
        joined = np.concatenate(parts)
        if np.all(np.isnan(joined)):  # Kendall's τ of a ranking that ties every step
            cannot[name] = "every step has the same weight, so attention orders no steps"
            continue
        median = name.split(":")[0] in (
            "τ gradient × input, weights held",
            "τ leave one out",
            "τ leave one out, deleted",
            "permutation",
        )
        median = median or name == "adversarial"
        values[name] = float(np.nanmedian(joined) if median else np.mean(joined))
    return {"values": values, "cannot": cannot}


def _card(s: Subject, rng, add, cannot, searched) -> None:
    """One Subject's share of :func:`scorecard`; ``searched``: its rows for the adversary."""
    n, steps = s.weights.shape
    ranked = {}
    for method in Subject.METHODS:
        reason = s.supports(method)
        if reason:
            for what in ("first", "rank"):
                cannot[f"{what}: {method}"] = reason
            continue
        ranked[method] = s.importance(method)
        if s.truth is None:
            for what in ("first", "rank"):
                cannot[f"{what}: {method}"] = s.cannot["truth"]
        else:
            add(f"first: {method}", rank_of_truth(ranked[method], s.truth) == 0)
            add(f"rank: {method}", rank_of_truth(ranked[method], s.truth))
    held = "gradient × input, weights held"
    if held in ranked:
        add(f"τ {held}", kendall_tau(s.weights, ranked[held]))
    else:
        cannot[f"τ {held}"] = s.supports(held)
    add("τ leave one out", kendall_tau(s.weights, ranked["leave one out"]))
    deleted = "leave one out, deleted"
    if deleted in ranked:
        add(f"τ {deleted}", kendall_tau(s.weights, ranked[deleted]))
    else:
        cannot[f"τ {deleted}"] = s.supports(deleted)
    for method in SALIENCY:
        if method not in ranked:
            for what in ("comprehensiveness", "sufficiency"):
                for how in (what, f"{what} AOPC"):
                    cannot[f"{how}: {method}"] = s.supports(method)
            continue
        for name, measure in (
            ("comprehensiveness", comprehensiveness),
            ("sufficiency", sufficiency),
        ):
            by_k = {1: measure(s.keep_predict, ranked[method], 1)}  # k = 1 is a bin too
            add(f"{name}: {method}", by_k[1])
            aopc = _aopc(measure, s.keep_predict, ranked[method], ERASER_BINS, by_k)
            add(f"{name} AOPC: {method}", aopc)
    replacing = [
        "permutation",
        "permutation flips",
        "adversarial",
        "uniform kept",
        "flips heaviest",
        "flips random",
    ]
    replacing += [f"removed: {method}" for method in REMOVAL_RANKINGS]
    if "replace" in s.cannot:
        cannot.update({name: s.cannot["replace"] for name in replacing})
        return
    shuffled = permutation_test(s.predict, s.weights, seed=rng.randint(2**31))
    add("permutation", shuffled["median"])
    add("permutation flips", shuffled["flip"])
    for r in searched:
        add("adversarial", adversarial_weights(s.row_predict(r), s.weights[[r]], EPSILON)[1])
    uniform = np.full(s.weights.shape, 1.0 / steps)
    add("uniform kept", _decisions(s.predict(uniform)) == s.decision)
    heaviest, other = heaviest_flips(s.predict, s.weights, seed=rng.randint(2**31))
    add("flips heaviest", np.full(n, heaviest))
    add("flips random", np.full(n, other))
    rankings = dict(ranked, random=rng.random_sample(s.weights.shape))
    for method in REMOVAL_RANKINGS:
        add(f"removed: {method}", removed_to_flip(s.predict, s.weights, rankings[method]))
