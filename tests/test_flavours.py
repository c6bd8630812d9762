import numpy as np
import pytest
from gradcheck import numeric_gradient

from attention_measured.core.attention import softmax
from attention_measured.core.params import Params
from attention_measured.models import aligner, flavours

N, n, m, D = 3, 2, 5, 4


def setup(name, seed=0, mask=None):
    rng = np.random.RandomState(seed)
    flavour = flavours.make(name)
    p = Params(flavour.init(rng, D, D, m))
    for k in p:  # move off zero-initialised biases so every path is exercised
        p[k] = np.asarray(p[k] + rng.normal(0, 0.3, np.shape(p[k])))
    h = rng.normal(size=(N, m, D))
    s = rng.normal(size=(N, n, D)) if flavour.needs_query else None
    direction = rng.normal(size=(N, n if flavour.needs_query else 1, D))
    return flavour, p, h, s, direction


@pytest.mark.parametrize("name", list(flavours.FLAVOURS))
def test_every_flavour_backward_matches_finite_differences(name):
    flavour, p, h, s, direction = setup(name)
    if name.startswith("local-p"):
        # keep the predicted centres away from the window's edges, where the weights jump
        p["lp_v"] *= 0.3

    def objective():
        return float((flavours.attend(flavour, p, h, s).context * direction).sum())

    att = flavours.attend(flavour, p, h, s)
    grads, grad_h, grad_s = flavours.attend_backward(flavour, p, h, s, att, direction)
    assert set(grads) == set(p)
    for k in p:
        np.testing.assert_allclose(
            grads[k], numeric_gradient(objective, p[k]), atol=1e-7, err_msg=k
        )
    np.testing.assert_allclose(grad_h, numeric_gradient(objective, h), atol=1e-7)
    if s is not None:
        np.testing.assert_allclose(grad_s, numeric_gradient(objective, s), atol=1e-7)


# a mask that hides a different step in each example, and one step of every query of example 2
MASK = np.ones((N, 1, m), dtype=bool)
MASK[0, 0, 1] = MASK[1, 0, 4] = MASK[2, 0, 0] = MASK[2, 0, 3] = False


@pytest.mark.parametrize(
    "name", ["feed-forward", "context vector", "additive", "general", "local-p (general)"]
)
def test_masked_attention_backward_matches_finite_differences(name):
    flavour, p, h, s, direction = setup(name, seed=1)
    if name.startswith("local-p"):
        p["lp_v"] *= 0.3  # centres away from the window's edges, where the weights jump

    def objective():
        return float((flavours.attend(flavour, p, h, s, mask=MASK).context * direction).sum())

    att = flavours.attend(flavour, p, h, s, mask=MASK)
    assert np.all(att.weights[~np.broadcast_to(MASK, att.weights.shape)] == 0)
    grads, grad_h, grad_s = flavours.attend_backward(flavour, p, h, s, att, direction)
    assert set(grads) == set(p)
    for k in p:
        np.testing.assert_allclose(
            grads[k], numeric_gradient(objective, p[k]), atol=1e-7, err_msg=k
        )
    numeric_h = numeric_gradient(objective, h)
    np.testing.assert_allclose(grad_h, numeric_h, atol=1e-7)
    if s is not None:
        np.testing.assert_allclose(grad_s, numeric_gradient(objective, s), atol=1e-7)
    # a masked step's hidden state reaches neither the weights nor the context
    hidden = ~MASK[:, 0, :]
    np.testing.assert_allclose(numeric_h[hidden], 0.0, atol=1e-9)
    np.testing.assert_allclose(grad_h[hidden], 0.0, atol=1e-12)


def test_weights_sum_to_one_and_respect_the_mask():
    flavour, p, h, s, _ = setup("additive")
    mask = np.ones((N, n, m), dtype=bool)
    mask[:, :, 1] = False
    att = flavours.attend(flavour, p, h, s, mask)
    np.testing.assert_allclose(att.weights.sum(-1), 1.0)
    assert np.all(att.weights[:, :, 1] == 0)


def test_concat_is_the_additive_score_with_its_matrix_split():
    cat, p, h, s, _ = setup("concat")
    W = p["cat_W"]
    additive = {"add_W": W[:, :D], "add_U": W[:, D:], "add_v": p["cat_v"]}
    np.testing.assert_allclose(
        cat.scores(p, h, s)[0], flavours.Additive().scores(additive, h, s)[0]
    )


@pytest.mark.parametrize("name", ["feed-forward", "feed-forward, bias per position"])
def test_feed_forward_scores_are_tanh_of_w_dot_h_plus_b(name):
    flavour, p, h, _, _ = setup(name)
    e = flavour.scores(p, h, None)[0]
    assert e.shape == (N, 1, m)
    w, b = p["ff_w"], np.broadcast_to(p["ff_b"], (m,))
    for i in range(N):
        for t in range(m):
            by_hand = np.tanh(sum(w[d] * h[i, t, d] for d in range(D)) + b[t])
            assert e[i, 0, t] == pytest.approx(by_hand, rel=1e-12, abs=1e-15)


def test_context_vector_scores_written_out():
    flavour, p, h, _, _ = setup("context vector")
    e = flavour.scores(p, h, None)[0]
    W, b, u = p["ctx_W"], p["ctx_b"], p["ctx_u"]
    for i in range(N):
        for t in range(m):
            hidden = [np.tanh(W[a] @ h[i, t] + b[a]) for a in range(len(u))]
            assert e[i, 0, t] == pytest.approx(float(np.dot(u, hidden)), rel=1e-12)


def test_local_p_weights_written_out_for_one_query():
    flavour, p, h, s, _ = setup("local-p (general)", seed=2)
    att = flavours.attend(flavour, p, h, s)
    W, v = p["lp_W"], p["lp_v"]
    outside = []
    for i, j in [(0, 0), (2, 1)]:
        centre = (m - 1) / (1 + np.exp(-(v @ np.tanh(W @ s[i, j]))))
        scores = [s[i, j] @ p["gen_W"] @ h[i, t] for t in range(m)]
        inside = [t for t in range(m) if abs(t - centre) <= flavour.half_width]
        total = sum(np.exp(scores[t]) for t in inside)
        sigma = flavour.half_width / 2
        for t in range(m):
            want = (
                np.exp(scores[t]) / total * np.exp(-((t - centre) ** 2) / (2 * sigma**2))
                if t in inside
                else 0.0
            )
            assert att.weights[i, j, t] == pytest.approx(want, rel=1e-10, abs=1e-15)
        outside.append(m - len(inside))
    assert max(outside) > 0  # the window cut something off


def test_location_ignores_the_hidden_states():
    flavour, p, h, s, _ = setup("location")
    np.testing.assert_array_equal(flavour.scores(p, h, s)[0], flavour.scores(p, h * 0 + 7, s)[0])


def test_local_m_attends_only_near_its_own_position():
    flavour, p, h, s, _ = setup("local-m (general)")
    w = flavours.attend(flavour, p, h, s).weights
    far = np.abs(np.arange(m) - np.arange(n)[:, None]) > flavour.half_width
    assert np.all(w[:, far] == 0)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: flavours.LocalM(flavours.General(), half_width=-3), ValueError, "half_width"),
        (lambda: flavours.LocalM(flavours.General(), half_width=1.5), TypeError, "half_width"),
        (lambda: flavours.LocalM("general"), TypeError, "inner must be a Flavour"),
        (lambda: flavours.LocalP(flavours.General(), units=0), ValueError, "units"),
        (lambda: flavours.ContextVector(units=2.7), TypeError, "units must be an integer"),
        (lambda: flavours.Additive(units=0), ValueError, "units must be an integer of at least 1"),
        (lambda: flavours.Concat(units="8"), TypeError, "units must be an integer"),
        (lambda: flavours.FeedForward(per_position=1), TypeError, "per_position"),
        (lambda: flavours.make("multiplicative-ish"), ValueError, "name must be one of"),
    ],
)
def test_flavours_refuse_bad_settings(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize(
    "weights, error, message",
    [
        ([[0.2, 0.8], [np.nan, 1.0]], ValueError, "weights must hold finite numbers"),
        ([[0.2, np.inf]], ValueError, "weights must hold finite numbers"),
        ([[0.5, -0.1, 0.6]], ValueError, "non-negative"),
        ([[0.5, 0.5], [0.0, 0.0]], ValueError, "positive sum in every row"),
        (np.zeros((2, 0)), ValueError, "at least one step"),
        ("weights", TypeError, "weights must be an array of numbers"),
    ],
)
def test_sample_steps_refuses_weights_it_cannot_draw_from(weights, error, message):
    with pytest.raises(error, match=message):
        flavours.sample_steps(weights, np.random.RandomState(0))


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="name must be one of"):
        flavours.make("multiplicative-ish")
    flavour, p, h, s, _ = setup("dot")
    with pytest.raises(ValueError, match="needs queries"):
        flavours.attend(flavour, p, h, None)
    with pytest.raises(ValueError, match="one size"):
        flavours.attend(flavour, p, h, s[..., :2])
    with pytest.raises(ValueError, match=r"\(N, m, D\)"):
        flavours.attend(flavour, p, h[0], s)
    ff, p, h, _, _ = setup("feed-forward, bias per position")
    with pytest.raises(ValueError, match="built for 5 steps"):
        flavours.attend(ff, p, h[:, :4], None)
    with pytest.raises(ValueError, match="window"):
        aligner.Aligner("local-p (general)", hard=True)


def test_reinforce_is_unbiased_for_the_expected_loss():
    rng = np.random.RandomState(3)
    weights = softmax(rng.normal(size=(4, 6)))
    losses = rng.normal(size=(4, 6))
    # the exact gradient of E[loss] = sum_k softmax(scores)_k loss_k, by finite differences
    scores = np.log(weights)

    def expected_loss():
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return float(((e / e.sum(axis=-1, keepdims=True)) * losses).sum())

    exact = numeric_gradient(expected_loss, scores)
    chosen = np.array([flavours.sample_steps(weights, rng) for _ in range(40000)])  # (draws, 4)
    advantage = np.take_along_axis(losses, chosen.T, axis=1).T
    estimate = flavours.reinforce_scores_gradient(weights, chosen, advantage).mean(axis=0)
    np.testing.assert_allclose(estimate, exact, atol=0.02)


def test_sample_steps_follows_the_weights():
    rng = np.random.RandomState(0)
    weights = np.array([0.1, 0.0, 0.6, 0.3])
    draws = flavours.sample_steps(np.broadcast_to(weights, (20000, 4)), rng)
    np.testing.assert_allclose(np.bincount(draws, minlength=4) / 20000, weights, atol=0.01)
    assert np.all(draws != 1)


def test_checking_the_parameters_leaves_the_cache_key_unchanged():
    # a model's pickle keys the remembered trainings: checking p must not add to it
    import pickle

    from attention_measured.models import reader

    reader = reader.Reader(flavours.make("general"))
    before = pickle.dumps(reader)
    reader.forward(reader.init(0), np.zeros((2, 12, 2)))
    assert reader.flavour.names and pickle.dumps(reader) == before
    with pytest.raises(ValueError, match="p lacks 'gen_W'"):
        reader.flavour.scores({}, np.zeros((2, 12, 3)), np.zeros((2, 1, 3)))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: flavours.Additive(prefix=3), TypeError, "prefix must be text"),
        (lambda: flavours.General(prefix="my prefix"), ValueError, "prefix must hold letters"),
        (
            lambda: flavours.attend(flavours.make("mean pooling"), {}, np.zeros((1, 3, 2)), "s"),
            TypeError,
            "s must be an array",
        ),
    ],
)
def test_a_prefix_and_unused_queries_are_checked(call, error, message):
    with pytest.raises(error, match=message):
        call()
