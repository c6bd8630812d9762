import numpy as np
import pytest
from gradcheck import numeric_gradient

from attention_measured import flavours, taxonomy
from attention_measured.attention import softmax

N, n, m, D = 3, 2, 5, 4


def setup(name, seed=0, mask=None):
    rng = np.random.RandomState(seed)
    flavour = flavours.make(name)
    p = flavours.Params(flavour.init(rng, D, D, m))
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


def test_feed_forward_scores_stay_inside_minus_one_and_one():
    flavour, p, h, _, _ = setup("feed-forward")
    p["ff_w"] *= 100
    e = flavour.scores(p, h, None)[0]
    assert e.max() <= 1 and e.min() >= -1


def test_location_ignores_the_hidden_states():
    flavour, p, h, s, _ = setup("location")
    np.testing.assert_array_equal(flavour.scores(p, h, s)[0], flavour.scores(p, h * 0 + 7, s)[0])


def test_local_m_attends_only_near_its_own_position():
    flavour, p, h, s, _ = setup("local-m (general)")
    w = flavours.attend(flavour, p, h, s).weights
    far = np.abs(np.arange(m) - np.arange(n)[:, None]) > flavour.half_width
    assert np.all(w[:, far] == 0)


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="unknown flavour"):
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
        taxonomy.Aligner("local-p (general)", hard=True)


def test_reinforce_is_unbiased_for_the_expected_loss():
    rng = np.random.RandomState(3)
    weights = softmax(rng.normal(size=(4, 6)))
    losses = rng.normal(size=(4, 6))
    exact = weights * (losses - (weights * losses).sum(-1, keepdims=True))
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
