"""Part V's measures against references written from the papers, on the awkward cases.

Each reference below is a plain loop, written from the paper's definition (and, where the paper
has public code, checked against it: samiraabnar/attention_flow for rollout and flow,
successar/AttentionExplanation for the Jensen–Shannon divergence and the permutation test,
jayded/eraserbenchmark for comprehensiveness and sufficiency, serrano-s/attn-tests for the
flips).  The cases are the ones where an implementation goes wrong: one step, uniform weights,
one-hot weights, ties, and weights of exactly zero.
"""

import itertools
import math

import numpy as np
import pytest

from attention_measured.measures import explanations
from attention_measured.models.protocol import Output

CASES = {  # name: weight rows (N, T), every row on the simplex
    "one step": np.array([[1.0], [1.0]]),
    "uniform": np.full((2, 4), 0.25),
    "one-hot": np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),
    "tied": np.array([[0.4, 0.4, 0.2], [0.3, 0.3, 0.4]]),
    "zero weights": np.array([[0.5, 0.0, 0.5, 0.0], [0.0, 0.0, 0.9, 0.1]]),
}


def _kl(x, m):
    return sum(x_i * math.log(x_i / m_i) for x_i, m_i in zip(x, m) if x_i > 0)


def jsd_reference(p, q):
    """½ KL(p ‖ m) + ½ KL(q ‖ m), m their mean, in nats, with 0 log 0 = 0."""
    out = []
    for a, b in zip(p, q):
        a, b = a / a.sum(), b / b.sum()
        m = (a + b) / 2
        out.append(0.5 * _kl(a, m) + 0.5 * _kl(b, m))
    return np.array(out)


def tau_b_reference(a, b):
    """Kendall's tau-b over every pair of steps: (C − D) / sqrt((P − ties in a)(P − ties in b))."""
    concordant = discordant = ties_a = ties_b = pairs = 0
    for i, j in itertools.combinations(range(len(a)), 2):
        pairs += 1
        da, db = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
        ties_a += da == 0
        ties_b += db == 0
        if da and db:
            concordant += da == db
            discordant += da != db
    denominator = math.sqrt((pairs - ties_a) * (pairs - ties_b))
    return (concordant - discordant) / denominator if denominator else float("nan")


@pytest.mark.parametrize("case", CASES)
def test_jensen_shannon_is_the_papers_divergence(case):
    w = CASES[case]
    uniform = np.full(w.shape, 1.0 / w.shape[1])
    reversed_ = w[:, ::-1]
    for other in (w, uniform, reversed_):
        np.testing.assert_allclose(
            explanations.jensen_shannon(w, other), jsd_reference(w, other), atol=1e-15
        )
    assert np.all(explanations.jensen_shannon(w, w) == 0.0)


@pytest.mark.parametrize("case", CASES)
def test_kendall_tau_is_tau_b_and_nan_without_an_order(case):
    w = CASES[case]
    other = np.array([np.arange(w.shape[1], dtype=float)] * len(w))
    got = explanations.kendall_tau(w, other)
    expected = [tau_b_reference(a, b) for a, b in zip(w, other)]
    np.testing.assert_allclose(got, expected, equal_nan=True)
    if case in ("one step", "uniform"):
        assert np.all(np.isnan(got))  # a constant row orders nothing


@pytest.mark.parametrize("case", CASES)
def test_the_rank_of_the_truth_counts_ties_against_the_method(case):
    w = CASES[case]
    for truth in range(w.shape[1]):
        truths = np.full(len(w), truth)
        expected = [sum(row[t] >= row[truth] for t in range(len(row)) if t != truth) for row in w]
        np.testing.assert_array_equal(explanations.rank_of_truth(w, truths), expected)


def rollout_reference(layers):
    """Abnar and Zuidema's code: each layer plus the identity, rows renormalised, multiplied from
    the first layer up (their compute_joint_attention)."""
    joint = None
    for att in layers:
        augmented = att + np.eye(len(att))
        augmented = augmented / augmented.sum(axis=-1, keepdims=True)
        joint = augmented if joint is None else augmented @ joint
    return joint


@pytest.mark.parametrize("case", ["one step", "uniform", "one-hot", "tied", "zero weights"])
def test_rollout_is_abnar_and_zuidemas_joint_attention(case):
    rng = np.random.RandomState(0)
    t = CASES[case].shape[1]
    rows = np.stack([CASES[case][rng.randint(len(CASES[case]))] for _ in range(t)])
    layers = np.stack([rows, rows[::-1], rng.dirichlet(np.ones(t), t)])  # three layers
    np.testing.assert_allclose(explanations.rollout(layers), rollout_reference(layers), atol=1e-15)


def test_flow_through_one_layer_is_each_edges_capacity():
    # one layer: the only path from output i to input j is the edge i -> j itself
    rng = np.random.RandomState(1)
    for t in (1, 2, 4):
        att = rng.dirichlet(np.ones(t), t)
        att[0] = np.eye(t)[t - 1]  # a one-hot row, with zero weights
        mixed = 0.5 * att + 0.5 * np.eye(t)
        np.testing.assert_allclose(explanations.attention_flow(att[None]), mixed, atol=1e-12)


def binary_predict(values):
    """A model whose probability of label 1 is σ(Σ_t w_t v_t): weights (N, T) -> (N,)."""
    return lambda w: 1 / (1 + np.exp(-(np.asarray(w) * values).sum(axis=1)))


@pytest.mark.parametrize("case", [c for c in CASES if c != "one step"])
def test_comprehensiveness_and_sufficiency_by_eraser_with_ties_against_the_method(case):
    w = CASES[case]
    values = np.linspace(-2.0, 3.0, w.shape[1])[None].repeat(len(w), 0)
    values[1] = values[1][::-1]
    p = binary_predict(values)
    decision = p(w) > 0.5

    def keep_predict(keep):  # the decision's probability, reading only the kept steps
        kept = np.where(keep, w, 0.0)
        total = kept.sum(axis=1, keepdims=True)
        kept = np.divide(kept, total, out=np.zeros_like(kept), where=total > 0)
        q = p(kept)
        return np.where(decision, q, 1 - q)

    importance = w  # rank by the weights themselves
    full = keep_predict(np.ones(w.shape, bool))
    for k in (1, 2):
        worst_comp, worst_suff = [], []
        for n, row in enumerate(importance):
            kth = np.sort(row)[::-1][k - 1]
            sure, tied = row > kth, np.flatnonzero(row == kth)
            comp, suff = [], []
            for chosen in itertools.combinations(tied, k - sure.sum()):
                top = sure.copy()
                top[list(chosen)] = True
                keep = np.ones(w.shape, bool)
                keep[n] = ~top
                comp.append(full[n] - keep_predict(keep)[n])
                keep[n] = top
                suff.append(full[n] - keep_predict(keep)[n])
            worst_comp.append(min(comp))  # ties against the method: the least removed
            worst_suff.append(max(suff))  # and the least kept
        np.testing.assert_allclose(
            explanations.comprehensiveness(keep_predict, importance, k), worst_comp
        )
        np.testing.assert_allclose(
            explanations.sufficiency(keep_predict, importance, k), worst_suff
        )


@pytest.mark.parametrize("case", CASES)
def test_the_permutation_test_is_jain_and_wallaces_with_its_flips(case):
    w = CASES[case]
    values = np.linspace(-1.0, 2.0, w.shape[1])[None].repeat(len(w), 0)
    predict = binary_predict(values)
    got = explanations.permutation_test(predict, w, draws=30, seed=3)
    rng = np.random.RandomState(3)
    base = predict(w)
    changes, flips = [], []
    for _ in range(30):  # the same draws, one shuffle of every row at a time
        order = np.argsort(rng.random_sample(w.shape), axis=1)
        shuffled = predict(np.take_along_axis(w, order, axis=1))
        changes.append(np.abs(shuffled - base))
        flips.append((shuffled > 0.5) != (base > 0.5))
    np.testing.assert_allclose(got["median"], np.median(changes, axis=0))
    np.testing.assert_allclose(got["mean"], np.mean(changes, axis=0))
    np.testing.assert_allclose(got["flip"], np.mean(flips, axis=0))
    if case in ("one step", "uniform"):  # nothing to shuffle: nothing moves
        assert np.all(got["median"] == 0) and np.all(got["flip"] == 0)


@pytest.mark.parametrize("case", [c for c in CASES if c != "one step"])
def test_zeroing_the_heaviest_weight_is_serrano_and_smiths_flip(case):
    w = CASES[case]
    values = np.array([np.linspace(2.0, -3.0, w.shape[1])] * len(w))
    predict = binary_predict(values)
    heaviest, _ = explanations.heaviest_flips(predict, w, seed=0)
    flipped = []
    for row, v in zip(w, values):
        zeroed = row.copy()
        zeroed[np.argmax(row)] = 0.0  # the first heaviest, as their argmax takes it
        if zeroed.sum() == 0:  # a one-hot row has nothing left to renormalise
            zeroed[:] = 0.0
        else:
            zeroed /= zeroed.sum()
        before, after = (1 / (1 + np.exp(-(x * v).sum())) for x in (row, zeroed))
        flipped.append((before > 0.5) != (after > 0.5))
    assert heaviest == pytest.approx(np.mean(flipped))


def max_flow_reference(capacity: dict, source, sink) -> float:
    """The maximum flow as a linear programme (SciPy's linprog), not NetworkX: maximise the flow
    out of the source, each edge within its capacity, conserved at every other node."""
    from scipy.optimize import linprog

    edges = list(capacity)
    nodes = {n for edge in edges for n in edge} - {source, sink}
    objective = [-1.0 if a == source else (1.0 if b == source else 0.0) for a, b in edges]
    balance = [[(a == n) - (b == n) for a, b in edges] for n in sorted(nodes, key=str)]
    solved = linprog(
        objective,
        A_eq=balance or None,
        b_eq=[0.0] * len(balance) or None,
        bounds=[(0.0, capacity[e]) for e in edges],
    )
    return -solved.fun


@pytest.mark.parametrize("case", ["uniform", "one-hot", "tied", "zero weights"])
def test_flow_through_several_layers_is_the_maximum_flow_of_abnar_and_zuidemas_graph(case):
    """Their graph: node (l, j) is position j after layer l, an edge (l + 1, i) -> (l, j) carries
    layer l's mixed weight ½ a_ij + ½ [i = j]; the flow from the last layer's i to input j."""
    rng = np.random.RandomState(2)
    t = CASES[case].shape[1]
    rows = np.stack([CASES[case][rng.randint(len(CASES[case]))] for _ in range(t)])
    layers = np.stack([rows, rng.dirichlet(np.ones(t), t)])  # two layers
    mixed = 0.5 * layers + 0.5 * np.eye(t)
    capacity = {
        ((layer + 1, i), (layer, j)): mixed[layer, i, j]
        for layer in range(2)
        for i in range(t)
        for j in range(t)
        if mixed[layer, i, j] > 0
    }
    expected = [[max_flow_reference(capacity, (2, i), (0, j)) for j in range(t)] for i in range(t)]
    np.testing.assert_allclose(explanations.attention_flow(layers), expected, atol=1e-9)


@pytest.mark.parametrize("case", [c for c in CASES if c != "one step"])
def test_the_share_removed_before_a_flip_is_serrano_and_smiths(case):
    """Steps zeroed one at a time in the ranking's order (ties: the earlier step first), the
    rest renormalised, until the decision flips; 1 where it never does before the last step."""
    w = CASES[case]
    values = np.array([np.linspace(2.0, -3.0, w.shape[1])] * len(w))
    values[1] = values[1][::-1]
    predict = binary_predict(values)
    ranking = w + np.linspace(0.0, 1e-3, w.shape[1])  # no ties in this ranking but w's own
    for importance in (w, ranking):
        expected = []
        for row, v, rank in zip(w, values, importance):
            order = sorted(range(len(row)), key=lambda t: -rank[t])  # sorted() is stable
            before = 1 / (1 + np.exp(-(row * v).sum())) > 0.5
            share = 1.0
            for k in range(1, len(row)):
                zeroed = row.copy()
                zeroed[order[:k]] = 0.0
                zeroed = zeroed / zeroed.sum() if zeroed.sum() > 0 else zeroed
                if (1 / (1 + np.exp(-(zeroed * v).sum())) > 0.5) != before:
                    share = k / len(row)
                    break
            expected.append(share)
        np.testing.assert_allclose(explanations.removed_to_flip(predict, w, importance), expected)


def logistic_reference(x, y, steps=50):
    """Logistic regression with an intercept by Newton's method (IRLS), a small ridge so that a
    separable set stays finite: the weights (C + 1,)."""
    design = np.hstack([x, np.ones((len(x), 1))])
    theta = np.zeros(design.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-design @ theta))
        hessian = design.T @ (design * (p * (1 - p))[:, None]) + 1e-6 * np.eye(len(theta))
        theta -= np.linalg.solve(hessian, design.T @ (p - y) + 1e-6 * theta)
    return theta


def test_the_frozen_weights_diagnostic_is_a_logistic_readout_of_the_pooled_inputs():
    """Wiegreffe and Pinter's diagnostic on a task whose cause is known: step 0 holds the signal.
    Weights on step 0 make the readout right; uniform weights dilute the signal with noise."""
    rng = np.random.RandomState(4)
    n, t = 400, 6
    inputs = rng.normal(size=(n, t, 1))
    labels = (inputs[:, 0, 0] + 0.3 * rng.normal(size=n) > 0).astype(float)
    train, test = slice(0, 300), slice(300, n)
    for name, weights in {
        "on the cause": np.eye(t)[np.zeros(n, int)],
        "uniform": np.full((n, t), 1 / t),
        "random": rng.dirichlet(np.ones(t), n),
    }.items():
        got = explanations.frozen_weights_accuracy(
            weights[train],
            inputs[train],
            labels[train],
            (weights[test], inputs[test], labels[test]),
        )
        pooled = np.einsum("nt,ntc->nc", weights, inputs)
        theta = logistic_reference(pooled[train], labels[train])
        predicted = (pooled[test] @ theta[:-1] + theta[-1]) > 0
        assert got == pytest.approx(np.mean(predicted == (labels[test] == 1)), abs=2 / 100), name
        if name == "on the cause":
            assert got > 0.85
        if name == "uniform":
            assert got < 0.8


def test_erasers_k_is_the_ceiling_of_each_share():
    # the baseline models of ERASER's authors: k = ceil(T × share), for shares 1, 5, 10, 20, 50%
    for steps, expected in (
        (12, [1, 1, 2, 3, 6]),
        (10, [1, 1, 1, 2, 5]),
        (1, [1] * 5),
        (40, [1, 2, 4, 8, 20]),
        (101, [2, 6, 11, 21, 51]),
    ):
        got = explanations.eraser_k(steps)
        assert list(got) == expected, steps
        assert list(got) == [
            max(1, math.ceil(round(steps * f, 9))) for f in explanations.ERASER_BINS
        ]
    with pytest.raises(ValueError, match="fractions"):
        explanations.eraser_k(12, [0.0, 0.5])
    with pytest.raises(ValueError, match="steps"):
        explanations.eraser_k(0)


@pytest.mark.parametrize("case", [c for c in CASES if c != "one step"])
def test_aopc_is_the_mean_over_erasers_bins(case):
    w = CASES[case]
    values = np.linspace(-2.0, 3.0, w.shape[1])[None].repeat(len(w), 0)
    p = binary_predict(values)
    decision = p(w) > 0.5

    def keep_predict(keep):
        kept = np.where(keep, w, 0.0)
        total = kept.sum(axis=1, keepdims=True)
        kept = np.divide(kept, total, out=np.zeros_like(kept), where=total > 0)
        q = p(kept)
        return np.where(decision, q, 1 - q)

    ks = [max(1, math.ceil(round(w.shape[1] * f, 9))) for f in explanations.ERASER_BINS]
    for aopc, single in (
        (explanations.comprehensiveness_aopc, explanations.comprehensiveness),
        (explanations.sufficiency_aopc, explanations.sufficiency),
    ):
        # ERASER's scorer: np.average over the bins, dividing by their number, not by |B| + 1
        expected = sum(single(keep_predict, w, k) for k in ks) / len(ks)
        np.testing.assert_allclose(aopc(keep_predict, w), expected)


class _GivenWeights:
    """A model of the book's protocol whose weights are its parameters (N, T) and whose values
    are its inputs (N, T, D): the logit is Σ_t a_t (x_t · 1)."""

    output_kind = "logit"
    cannot: dict = {}

    def forward(self, params, inputs, *, keep=None, weights=None, scale=None):
        x = inputs if scale is None else inputs * scale[..., None]
        a = params if weights is None else weights
        return Output(np.einsum("nt,ntd->n", a, x), a)

    def contributions(self, params, inputs):
        return params[..., None] * inputs


def norms_reference(weights, values):
    """Kobayashi et al.'s ‖α_t f(x_t)‖, step by step, with f the identity."""
    out = np.zeros(weights.shape)
    for n, t in itertools.product(*map(range, weights.shape)):
        out[n, t] = math.sqrt(sum((weights[n, t] * v) ** 2 for v in values[n, t]))
    return out


@pytest.mark.parametrize("case", CASES)
def test_norm_weighted_attention_is_kobayashis_length_of_what_each_step_adds(case):
    weights = CASES[case]
    values = np.random.RandomState(3).normal(size=weights.shape + (3,))
    subject = explanations.Subject(_GivenWeights(), weights, values, name=case)
    np.testing.assert_allclose(
        subject.importance("norm-weighted attention"),
        norms_reference(weights, values),
        atol=1e-15,
    )
    assert "deleted" in subject.supports("leave one out, deleted")
