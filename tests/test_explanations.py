"""Part V's measures, each against a case worked by hand or the library it wraps."""

import numpy as np
import pytest
from scipy.stats import kendalltau

from attention_measured.measures import explanations
from attention_measured.models.protocol import Output


def test_the_rank_of_the_true_cause_counts_ties_against_the_method():
    importance = np.array([[0.1, 0.5, 0.4], [0.5, 0.5, 0.1], [0.9, 0.05, 0.05]])
    np.testing.assert_array_equal(explanations.rank_of_truth(importance, [2, 0, 0]), [1, 1, 0])
    assert explanations.first_share(importance, [2, 0, 0]) == pytest.approx(1 / 3)


def test_kendall_tau_is_scipys_row_by_row():
    rng = np.random.RandomState(0)
    a, b = rng.normal(size=(4, 6)), rng.normal(size=(4, 6))
    expected = [kendalltau(x, y).statistic for x, y in zip(a, b)]
    np.testing.assert_allclose(explanations.kendall_tau(a, b), expected)
    np.testing.assert_allclose(explanations.kendall_tau([[1, 2, 3]], [[3, 2, 1]]), [-1.0])


def test_jensen_shannon_is_zero_for_equal_weights_and_ln2_for_disjoint_ones():
    np.testing.assert_allclose(
        explanations.jensen_shannon([[0.2, 0.8]], [[0.2, 0.8]]), [0.0], atol=1e-15
    )
    np.testing.assert_allclose(explanations.jensen_shannon([[1.0, 0.0]], [[0.0, 1.0]]), [np.log(2)])
    # by hand: M = (0.5, 0.5); KL(p || M) = 0.75 ln 1.5 + 0.25 ln 0.5, and the same for q
    kl = 0.75 * np.log(1.5) + 0.25 * np.log(0.5)
    np.testing.assert_allclose(explanations.jensen_shannon([[0.75, 0.25]], [[0.25, 0.75]]), [kl])
    rng = np.random.RandomState(1)
    near = rng.dirichlet(np.ones(12), size=500)
    twin = near * (1 + 1e-15 * rng.normal(size=near.shape))  # equal but for rounding
    divergence = explanations.jensen_shannon(near, twin / twin.sum(axis=1, keepdims=True))
    assert not np.any(np.isnan(divergence)) and divergence.max() < 1e-12


def test_comprehensiveness_and_sufficiency_on_an_additive_model():
    evidence = np.array([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3]])

    def predict(keep):  # the probability is the evidence the model may read
        return (evidence * keep).sum(axis=1)

    np.testing.assert_allclose(explanations.comprehensiveness(predict, evidence, 1), [0.6, 0.5])
    np.testing.assert_allclose(explanations.sufficiency(predict, evidence, 1), [0.4, 0.5])
    np.testing.assert_allclose(explanations.comprehensiveness(predict, evidence, 3), [1.0, 1.0])
    np.testing.assert_allclose(explanations.sufficiency(predict, evidence, 3), [0.0, 0.0])


def test_rollout_and_flow_on_two_layers_worked_by_hand():
    even = np.full((2, 2, 2), 0.5)  # two layers, every position reading both evenly
    # with the residual, each layer is [[0.75, 0.25], [0.25, 0.75]]
    np.testing.assert_allclose(explanations.rollout(even), [[0.625, 0.375], [0.375, 0.625]])
    # flow from output 0 to input 0: 0.75 through (1, 0) and 0.25 through (1, 1);
    # to input 1: min(0.75, 0.25) + min(0.25, 0.75)
    np.testing.assert_allclose(explanations.attention_flow(even), [[1.0, 0.5], [0.5, 1.0]])
    one = np.array([[[0.9, 0.1], [0.3, 0.7]]])
    np.testing.assert_allclose(explanations.attention_flow(one), 0.5 * one[0] + 0.5 * np.eye(2))
    np.testing.assert_allclose(explanations.rollout(one).sum(axis=1), 1.0)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: explanations.rank_of_truth([[0.1, 0.2]], [2]), "truth"),
        (lambda: explanations.rank_of_truth([0.1, 0.2], [0]), "importance"),
        (lambda: explanations.kendall_tau([[1, 2]], [[1, 2, 3]]), "shape"),
        (lambda: explanations.jensen_shannon([[-0.1, 1.1]], [[0.5, 0.5]]), "non-negative"),
        (lambda: explanations.comprehensiveness(lambda keep: keep.sum(1), [[0.1, 0.2]], 3), "k"),
        (lambda: explanations.rollout(np.full((1, 2, 2), 0.7)), "sum to 1"),
        (lambda: explanations.attention_flow(np.ones((2, 3))), "layers"),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_rollout_multiplies_the_later_layer_on_the_left():
    first = np.array([[1.0, 0.0], [0.5, 0.5]])
    second = np.array([[0.2, 0.8], [0.6, 0.4]])
    mixed = [0.5 * a + 0.5 * np.eye(2) for a in (first, second)]
    expected = mixed[1] @ mixed[0]  # output position i, through layer 2, then layer 1
    np.testing.assert_allclose(explanations.rollout(np.stack([first, second])), expected)
    assert not np.allclose(expected, mixed[0] @ mixed[1])


# ------------------------------------------------------------------ measures that re-run a model
VALUES = np.array([1.0, 0.0, 0.0, 0.0])  # a model whose output is the weight on step 0


def weighted(weights):
    return np.asarray(weights) @ VALUES


def test_permutation_effect_is_the_median_over_the_same_shuffles():
    weights = np.array([[0.7, 0.1, 0.1, 0.1], [0.25, 0.25, 0.25, 0.25]])
    rng = np.random.RandomState(3)
    changes = []
    for _ in range(50):  # the loop the function runs, written out
        order = np.argsort(rng.random_sample(weights.shape), axis=1)
        changes.append(
            np.abs(weighted(np.take_along_axis(weights, order, axis=1)) - weighted(weights))
        )
    np.testing.assert_allclose(
        explanations.permutation_effect(weighted, weights, 50, seed=3), np.median(changes, axis=0)
    )
    assert (
        explanations.permutation_effect(weighted, weights, 50)[1] == 0.0
    )  # even weights: shuffling is idle


def test_zeroing_the_heaviest_flips_where_a_random_step_does_not():
    weights = np.array([[0.6, 0.2, 0.1, 0.1], [0.55, 0.05, 0.2, 0.2]])
    # zeroing step 0 sends p = w_0 to 0: both flip; zeroing another raises w_0: neither flips
    assert explanations.heaviest_flips(weighted, weights) == (1.0, 0.0)


def test_removed_to_flip_counts_the_steps_zeroed_before_the_decision_changes():
    weights = np.array([[0.55, 0.15, 0.15, 0.15]])
    by_weight = weights  # the heaviest first: step 0 goes first and the decision flips at once
    np.testing.assert_allclose(explanations.removed_to_flip(weighted, weights, by_weight), [0.25])
    last = np.array([[0.0, 3.0, 2.0, 1.0]])  # step 0 last: removing the others raises w_0
    np.testing.assert_allclose(explanations.removed_to_flip(weighted, weights, last), [1.0])


def test_adversarial_weights_keep_the_output_and_move_as_far_as_they_can():
    weights = np.array([[0.4, 0.3, 0.2, 0.1]])
    found, divergence = explanations.adversarial_weights(weighted, weights, epsilon=0.01)
    assert abs(weighted(found)[0] - 0.4) <= 0.01 + 1e-9
    assert 0.1 < divergence[0] <= np.log(2)
    # a model that ignores its weights lets them go anywhere: near the ceiling ln 2 is possible
    _, free = explanations.adversarial_weights(lambda w: np.zeros(len(w)), weights, epsilon=0.01)
    assert free[0] > divergence[0] and free[0] > 0.4


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: explanations.permutation_effect(weighted, [[0.5, 0.6, 0.0, 0.0]]), "sum to 1"),
        (lambda: explanations.adversarial_weights(weighted, [[0.25] * 4], epsilon=0.0), "epsilon"),
        (lambda: explanations.removed_to_flip(weighted, [[0.25] * 4], [[1, 2, 3]]), "ranking"),
        (lambda: explanations.heaviest_flips(weighted, [[1.0]]), "two steps"),
    ],
)
def test_decision_measures_refuse_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ------------------------------------------------------------------ the one interface
def test_outputs_of_several_classes_change_by_total_variation():
    p = np.array([[0.7, 0.2, 0.1]])
    q = np.array([[0.1, 0.2, 0.7]])
    np.testing.assert_allclose(explanations.output_change(p, q), [0.6])
    np.testing.assert_allclose(explanations.output_change([0.9], [0.6]), [0.3])  # binary: |Δp|
    with pytest.raises(ValueError, match="probabilities"):
        explanations.output_change(np.ones((1, 2, 2)), np.ones((1, 2, 2)))


def test_flow_from_a_query_is_the_flow_from_the_position_it_reads():
    layers = np.array([[[0.9, 0.1, 0.0], [0.3, 0.4, 0.3], [0.0, 0.2, 0.8]]] * 2)
    every = explanations.attention_flow(layers)
    np.testing.assert_allclose(explanations.attention_flow(layers, query=[0.0, 1.0, 0.0]), every[1])
    spread = explanations.attention_flow(layers, query=[0.5, 0.5, 0.0])
    capped = np.minimum(0.5, every[:2])  # what each of the query's two edges can pass on
    assert np.all(spread <= capped.sum(axis=0) + 1e-12)
    assert np.all(spread >= capped.max(axis=0) - 1e-12)
    with pytest.raises(ValueError, match="one weight per position"):
        explanations.attention_flow(layers, query=[0.5, 0.5])


class _Additive:
    """A model of the book's protocol worked by hand: logit = Σ_t a_t v_t, its weights uniform
    over the steps it may attend to, its input scaling the values v_t."""

    output_kind = "logit"

    def __init__(self, cannot=None, layers=None):
        self.cannot, self.layers = cannot or {}, layers

    def forward(self, params, inputs, *, keep=None, weights=None, scale=None):
        v = inputs if scale is None else inputs * scale
        if weights is None:
            a = np.ones(v.shape) if keep is None else np.where(keep, 1.0, 0.0)
            weights = a / a.sum(axis=1, keepdims=True)
        return Output((weights * v).sum(axis=1), weights, layers=self.layers)


def additive_subject(truth=None, **model_options):
    """Three steps whose values are 2, 0, −1, and 1, 3, 0.5, as a Subject."""
    values = np.array([[2.0, 0.0, -1.0], [1.0, 3.0, 0.5]])
    return explanations.Subject(
        _Additive(**model_options), None, values, truth=truth, name="additive"
    )


def test_subject_rankings_on_an_additive_model_worked_by_hand():
    subject = additive_subject(truth=[0, 1])
    np.testing.assert_allclose(
        subject.probabilities[:, 1], 1 / (1 + np.exp(-np.array([1 / 3, 1.5])))
    )
    assert list(subject.decision) == [1, 1]
    # the decision's log-odds is the logit: ∂p/∂a_t = p (1 − p) v_t, signed (Serrano & Smith),
    # and x_t ∂m/∂x_t = a_t v_t
    p = subject.probabilities[:, 1]
    values = np.array([[2, 0, -1], [1, 3, 0.5]])
    np.testing.assert_allclose(subject.importance("gradient"), (p * (1 - p))[:, None] * values)
    np.testing.assert_allclose(subject.importance("gradient × input"), np.abs(values) / 3.0)
    np.testing.assert_allclose(
        subject.importance("attention × gradient"), subject.importance("gradient") / 3.0
    )
    without_0 = 1 / (1 + np.exp(0.5))  # steps 1 and 2 left: (0 − 1) / 2
    assert subject.importance("leave one out")[0, 0] == pytest.approx(abs(p[0] - without_0))
    assert explanations.first_share(subject.importance("gradient"), subject.truth) == 1.0
    assert (
        explanations.first_share(subject.importance("attention"), subject.truth) == 0.0
    )  # all tied


def test_subject_says_why_it_cannot():
    subject = additive_subject(cannot={"weights": "no weights of its own"})
    assert subject.supports("gradient") == "no weights of its own"
    assert subject.supports("leave one out") is None
    assert "one layer" in subject.supports("rollout")
    assert subject.truth is None and "truth" in subject.cannot
    with pytest.raises(ValueError, match="no weights of its own"):
        subject.importance("attention × gradient")
    with pytest.raises(ValueError, match="no weights of its own"):
        subject.predict(subject.weights)
    with pytest.raises(ValueError, match="method"):
        subject.importance("saliency")
    with pytest.raises(ValueError, match="keep"):
        subject.keep_predict(np.ones((2, 4), dtype=bool))
    with pytest.raises(ValueError, match="layers"):
        additive_subject(layers=np.ones((2, 1, 3, 2)))


def test_frozen_weights_help_a_readout_only_when_they_point_at_the_cause():
    rng = np.random.RandomState(0)
    inputs = rng.normal(size=(400, 5, 1))
    labels = (inputs[:, 0, 0] > 0).astype(float)  # step 0 decides
    on_cause = np.zeros((400, 5))
    on_cause[:, 0] = 1.0
    even = np.full((400, 5), 0.2)
    train, test = slice(0, 300), slice(300, 400)

    def accuracy(weights):
        held = (weights[test], inputs[test], labels[test])
        return explanations.frozen_weights_accuracy(
            weights[train], inputs[train], labels[train], held
        )

    assert accuracy(on_cause) == 1.0  # the pooled input is the deciding reading itself
    assert 0.6 < accuracy(even) < 0.85  # the mean carries a fifth of it, diluted by noise
    with pytest.raises(ValueError, match="labels"):
        explanations.frozen_weights_accuracy(even, inputs, labels * 2, (even, inputs, labels))
    with pytest.raises(ValueError, match="inputs"):
        explanations.frozen_weights_accuracy(even, inputs[:, :4], labels, (even, inputs, labels))


def test_scorecard_pools_examples_and_gives_reasons_for_what_it_cannot():
    card = explanations.scorecard(additive_subject(truth=[0, 1]))
    assert card["values"]["first: gradient"] == 1.0 and card["values"]["first: attention"] == 0.0
    assert "same weight" in card["cannot"]["τ leave one out"]  # equal weights order nothing
    assert "one layer" in card["cannot"]["first: rollout"]
    assert 0.0 <= card["values"]["adversarial"] <= np.log(2)
    # pooled over two subjects: the gradient finds both causes of the first, neither of the
    # second (its causes are step 2, whose value is not the largest in either row)
    pooled = explanations.scorecard(
        [additive_subject(truth=[0, 1]), additive_subject(truth=[2, 2])]
    )
    assert pooled["values"]["first: gradient"] == 0.5
    blind = explanations.scorecard(additive_subject(cannot={"weights": "no weights of its own"}))
    assert blind["cannot"]["permutation"] == "no weights of its own"
    assert "permutation" not in blind["values"]
    assert "no one step known" in blind["cannot"]["first: attention"]  # no truth given
    with pytest.raises(ValueError, match="Subject"):
        explanations.scorecard([])


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: additive_subject().output(keep=np.ones((2, 3))), TypeError, "keep must be"),
        (lambda: additive_subject().output(keep=np.ones((1, 2, 3), bool)), ValueError, "keep"),
        (lambda: additive_subject().output(weights=np.ones((1, 2, 3))), ValueError, "weights"),
        (lambda: additive_subject().output(scale="2"), TypeError, "scale must be"),
        (lambda: additive_subject().predict(None), TypeError, "weights must be"),
        (lambda: explanations.attention_flow(np.full((1, 2, 2), 0.5), "query"), TypeError, "query"),
        (
            lambda: explanations.frozen_weights_accuracy(
                np.full((2, 2), 0.5), np.zeros((2, 2, 1)), [0, 1], "held out"
            ),
            TypeError,
            "heldout must be",
        ),
        (
            lambda: explanations.output_change(np.zeros((1, 1, 3)), np.zeros(3)),
            ValueError,
            "first must",
        ),
        (
            lambda: explanations.output_change(np.zeros(3), np.zeros((1, 1, 3))),
            ValueError,
            "second must",
        ),
        (lambda: explanations.scorecard(None), TypeError, "subjects must be"),
    ],
)
def test_a_subject_and_the_measures_refuse_what_they_cannot_read(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ------------------------------------------------------------------ the adversary's exact optimum
def exact_linear_adversary(u, b, w0, epsilon):
    """The largest JSD from w0 over weights w on the simplex whose output σ(u·w + b) is within
    epsilon of σ(u·w0 + b): the constraint keeps u·w between two planes, JSD is convex, so the
    maximum is at a vertex of the simplex cut by them, and every such vertex lies on an edge
    (two parallel planes are never active together).  Enumerated here, independently."""
    from scipy.special import expit, logit

    p0 = expit(u @ w0 + b)
    planes = [logit(q) - b for q in (p0 - epsilon, p0 + epsilon) if 0 < q < 1]
    t = len(u)
    vertices = [np.eye(t)[k] for k in range(t) if abs(expit(u[k] + b) - p0) <= epsilon]
    for i in range(t):
        for j in range(i + 1, t):
            for c in planes:
                if u[i] != u[j]:
                    lam = (c - u[j]) / (u[i] - u[j])  # λ e_i + (1 − λ) e_j on the plane
                    if 0 <= lam <= 1:
                        vertices.append(lam * np.eye(t)[i] + (1 - lam) * np.eye(t)[j])
    vertices = np.array(vertices)
    return float(explanations.jensen_shannon(vertices, np.broadcast_to(w0, vertices.shape)).max())


def linear_predict(u, b):
    return lambda w: 1 / (1 + np.exp(-(np.asarray(w) @ u + b)))


def test_the_adversary_finds_the_far_vertex_the_old_search_missed():
    u, w0 = np.array([1.0, 1.0, -1.0]), np.array([[0.9998, 1e-4, 1e-4]])
    found, divergence = explanations.adversarial_weights(linear_predict(u, 0.0), w0, 0.01)
    assert divergence[0] == pytest.approx(exact_linear_adversary(u, 0.0, w0[0], 0.01), abs=1e-6)
    assert divergence[0] > 0.69  # [0, 1, 0] is as good as [1, 0, 0] for the output
    assert abs(linear_predict(u, 0.0)(found) - linear_predict(u, 0.0)(w0))[0] <= 0.01


def test_the_adversary_reaches_the_exact_maximum_on_random_linear_models():
    rng = np.random.RandomState(0)
    for trial in range(32):
        t = 2 + trial % 7
        u, b = rng.normal(0, 3, t), rng.normal()
        w0 = rng.dirichlet(np.full(t, 0.5))[None]
        epsilon = [0.001, 0.01, 0.05][trial % 3]
        found, divergence = explanations.adversarial_weights(linear_predict(u, b), w0, epsilon)
        exact = exact_linear_adversary(u, b, w0[0], epsilon)
        assert divergence[0] == pytest.approx(exact, abs=1e-6), trial
        moved = abs(linear_predict(u, b)(found) - linear_predict(u, b)(w0))[0]
        assert moved <= epsilon
        np.testing.assert_allclose(found.sum(), 1.0)
        assert found.min() >= 0


def test_the_adversary_on_one_step_and_on_an_output_that_cannot_move():
    one = explanations.adversarial_weights(lambda w: np.full(len(w), 0.7), [[1.0]], 0.01)
    assert one[1][0] == 0.0
    # an output that ignores the weights: any weights do, and a one-hot is the farthest
    flat, divergence = explanations.adversarial_weights(
        lambda w: np.full(len(w), 0.7), [[0.5, 0.5]], 0.01
    )
    # JSD([1, 0], [½, ½]): half of KL to the mean [¾, ¼] from each
    by_hand = 0.5 * np.log(4 / 3) + 0.5 * (0.5 * np.log(2 / 3) + 0.5 * np.log(2))
    assert divergence[0] == pytest.approx(by_hand, abs=1e-12)


def test_the_gradient_ranking_is_serrano_and_smiths_signed_one():
    # step values [2, −1, 0.5]: raising weight 1 lowers the decision, so it ranks last, where
    # a ranking by the gradient's size would put it second
    values = np.array([[2.0, -1.0, 0.5]])

    subject = explanations.Subject(_Additive(), None, values, name="signed")
    order = np.argsort(-subject.importance("gradient"), axis=1)
    assert order.tolist() == [[0, 2, 1]]


def test_ties_count_against_the_method_in_every_ranking_measure():
    values = np.array([[2.0, 0.0, -1.0]])

    def predict(keep):  # the mean value of the steps kept, as a probability-like score
        return (keep * values).sum(axis=1) / keep.sum(axis=1)

    tied = np.zeros((1, 3))  # every step tied: the method could have chosen any
    full = predict(np.ones((1, 3), bool))[0]  # 1/3
    # removing step 0 leaves −0.5, step 1 leaves 0.5, step 2 leaves 1: the least removed is 2
    assert explanations.comprehensiveness(predict, tied, 1)[0] == pytest.approx(full - 1.0)
    # keeping one step alone: 2, 0 or −1; the least kept is step 2's −1
    assert explanations.sufficiency(predict, tied, 1)[0] == pytest.approx(full - (-1.0))
    assert explanations.rank_of_truth(tied, [0])[0] == 2
    # no tie: the earlier behaviour, the top step itself
    assert explanations.comprehensiveness(predict, [[3.0, 2.0, 1.0]], 1)[0] == pytest.approx(
        full + 0.5
    )
    two = explanations.comprehensiveness(predict, [[1.0, 1.0, 0.0]], 2)[0]  # both tied steps go
    assert two == pytest.approx(full - (-1.0))


# ------------------------------------------------------------------ the saliency baselines
class _Softmaxed(_Additive):
    """logit = Σ_t a_t v_t with a = softmax(v): the weights read the input, so holding them
    (Jain & Wallace's gradient) differs from letting the gradient flow through them."""

    def forward(self, params, inputs, *, keep=None, weights=None, scale=None):
        v = inputs if scale is None else inputs * scale
        if weights is None:
            z = np.where(keep, v, -np.inf) if keep is not None else v
            weights = np.exp(z - z.max(axis=1, keepdims=True))
            weights = weights / weights.sum(axis=1, keepdims=True)
        return Output((weights * v).sum(axis=1), weights, layers=self.layers)


def test_jain_and_wallaces_gradient_holds_the_weights():
    values = np.array([[2.0, 0.0, -1.0], [1.0, 3.0, 0.5]])
    subject = explanations.Subject(_Softmaxed(), None, values, name="softmaxed")
    a, p = subject.weights, subject.probabilities[:, 1]
    # held: ∂p/∂s_t = p (1 − p) a_t v_t
    held = subject.importance("gradient × input, weights held")
    np.testing.assert_allclose(held, np.abs((p * (1 - p))[:, None] * a * values), rtol=1e-7)
    # through the weights: ∂m/∂s_t = a_t v_t (1 + v_t − Σ_u a_u v_u)
    mean = (a * values).sum(axis=1, keepdims=True)
    through = subject.importance("gradient × input")
    np.testing.assert_allclose(through, np.abs(a * values * (1 + values - mean)), rtol=1e-7)
    assert not np.allclose(
        held / held.sum(1, keepdims=True), through / through.sum(1, keepdims=True)
    )
    blind = explanations.Subject(
        _Softmaxed(cannot={"weights": "no weights of its own"}), None, values, name="blind"
    )
    assert blind.supports("gradient × input, weights held") == "no weights of its own"
    card = explanations.scorecard(blind)
    assert card["cannot"]["τ gradient × input, weights held"] == "no weights of its own"


def test_integrated_gradients_of_a_linear_logit():
    # p = σ(Σ_t c_t s_t), c_t = a_t v_t: along s = α, ∂p/∂s_t = σ'(α C) c_t, C = Σ_t c_t, so
    # the trapezoidal rule gives c_t · trapezoid(σ'(α C)), and the integral c_t (p(1) − p(0)) / C
    subject = additive_subject()
    c = np.array([[2.0, 0.0, -1.0], [1.0, 3.0, 0.5]]) / 3.0
    total = c.sum(axis=1, keepdims=True)
    alpha = np.linspace(0, 1, explanations.IG_STEPS + 1)

    def slope(z):
        return np.exp(-z) / (1 + np.exp(-z)) ** 2

    rule = np.full(len(alpha), 1.0 / explanations.IG_STEPS)
    rule[[0, -1]] /= 2
    trapezoid = c * (slope(alpha[None] * total) * rule).sum(axis=1, keepdims=True)
    ig = subject.importance("integrated gradients")
    np.testing.assert_allclose(ig, trapezoid, rtol=1e-6, atol=1e-12)
    exact = c * (1 / (1 + np.exp(-total)) - 0.5) / total
    np.testing.assert_allclose(ig, exact, rtol=1e-3)
    # completeness: the steps add up to p(x) − p(0)
    p = subject.probabilities[:, 1]
    np.testing.assert_allclose(ig.sum(axis=1), p - 0.5, rtol=1e-3)


def test_integrated_gradients_are_complete_on_a_model_whose_weights_read_the_input():
    values = np.array([[2.0, 0.0, -1.0], [1.0, 3.0, 0.5]])
    subject = explanations.Subject(_Softmaxed(), None, values, name="softmaxed")
    ig = subject.importance("integrated gradients")
    own = subject.probabilities[np.arange(2), subject.decision]
    at_zero = explanations.softmax(subject._logits(scale=np.zeros(values.shape)))
    np.testing.assert_allclose(
        ig.sum(axis=1), own - at_zero[np.arange(2), subject.decision], rtol=0.05
    )


def test_keep_predict_runs_only_the_examples_whose_kept_steps_are_new():
    calls = []

    class Counting(_Softmaxed):
        def forward(self, params, inputs, **change):
            calls.append(len(inputs))
            return super().forward(params, inputs, **change)

    values = np.array([[2.0, 0.0, -1.0], [1.0, 3.0, 0.5], [0.5, -2.0, 1.0]])
    subject = explanations.Subject(Counting(), None, values, name="counting")
    fresh = explanations.Subject(_Softmaxed(), None, values, name="fresh")
    first = np.array([[True, True, False], [True, False, True], [False, True, True]])
    second = first.copy()
    second[1] = [True, True, False]  # only example 1's kept steps are new
    calls.clear()
    np.testing.assert_array_equal(subject.keep_predict(first), fresh.keep_predict(first))
    np.testing.assert_allclose(subject.keep_predict(second), fresh.keep_predict(second))
    np.testing.assert_array_equal(subject.keep_predict(first), fresh.keep_predict(first))
    assert calls == [3, 1]  # all three, then example 1 alone, then nothing


def test_the_adversarys_root_finder_lands_on_the_safe_side_in_a_few_calls():
    # f(x) = x³ + x − c on [0, 2]: one root each, found by every bracket in one batch of calls
    c = np.array([0.3, 1.0, 2.5, 9.0])
    calls = []

    def f(x):
        calls.append(1)
        return x**3 + x - c

    found = explanations._root(f, np.zeros(4), np.full(4, 2.0), -c, 10.0 - c)
    assert np.all(found**3 + found - c <= 0)  # never past the root
    roots = np.array([min(np.roots([1, 0, 1, -v]), key=lambda r: abs(r.imag)).real for v in c])
    np.testing.assert_allclose(found, roots, atol=1e-12)
    assert len(calls) < explanations.BISECTIONS / 2
