import numpy as np
import pytest

from gradcheck import numeric_gradient
from lib import attention


def random(shape, seed):
    return np.random.RandomState(seed).normal(size=shape)


def test_softmax_sums_to_one_and_survives_large_scores():
    w = attention.softmax(np.array([[1000.0, 1001.0, 999.0], [0.0, 0.0, 0.0]]))
    np.testing.assert_allclose(w.sum(-1), 1.0)
    np.testing.assert_allclose(w[1], 1 / 3)
    assert np.all(np.isfinite(w))


def test_masked_steps_get_zero_and_a_fully_masked_row_is_zero():
    scores = random((2, 4), 0)
    mask = np.array([[True, False, True, True], [False, False, False, False]])
    w = attention.softmax(scores, mask)
    assert w[0, 1] == 0.0
    np.testing.assert_allclose(w[0].sum(), 1.0)
    np.testing.assert_array_equal(w[1], 0.0)


def test_softmax_refuses_a_non_boolean_mask():
    with pytest.raises(ValueError, match="boolean"):
        attention.softmax(np.zeros(3), np.array([1, 0, 1]))


def test_drop_each_step_renormalises_the_rest():
    scores = random((5, 6), 1)
    w = attention.softmax(scores)
    without = attention.drop_each_step(scores)
    assert without.shape == (5, 6, 6)
    for t in range(6):
        expected = np.delete(w, t, axis=-1) / (1 - w[:, t:t + 1])
        np.testing.assert_allclose(np.delete(without[:, t], t, axis=-1), expected, rtol=1e-12)
        np.testing.assert_array_equal(without[:, t, t], 0.0)


def test_softmax_backward_matches_finite_differences():
    scores, upstream = random((3, 5), 2), random((3, 5), 3)
    grad = attention.softmax_backward(attention.softmax(scores), upstream)
    numeric = numeric_gradient(lambda: np.sum(attention.softmax(scores) * upstream), scores)
    np.testing.assert_allclose(grad, numeric, atol=1e-8)


def test_sdpa_matches_a_direct_computation_and_torch_scaling():
    q, k, v = random((2, 3, 4), 4), random((2, 5, 4), 5), random((2, 5, 6), 6)
    out, w = attention.scaled_dot_product_attention(q, k, v)
    for b in range(2):
        for i in range(3):
            s = np.array([q[b, i] @ k[b, j] for j in range(5)]) / 2.0   # sqrt(4)
            e = np.exp(s - s.max())
            np.testing.assert_allclose(w[b, i], e / e.sum())
            np.testing.assert_allclose(out[b, i], (e / e.sum()) @ v[b])


def test_sdpa_mask_is_true_where_attention_is_allowed():
    q, k, v = random((1, 2, 3), 7), random((1, 4, 3), 8), random((1, 4, 2), 9)
    causal = np.tril(np.ones((2, 4), dtype=bool))
    _, w = attention.scaled_dot_product_attention(q, k, v, causal)
    assert np.all(w[~np.broadcast_to(causal, w.shape)] == 0)
    assert w[0, 0, 0] == 1.0


def test_sdpa_backward_matches_finite_differences():
    q, k, v = random((2, 3, 4), 10), random((2, 5, 4), 11), random((2, 5, 3), 12)
    mask = random((3, 5), 13) > -0.5
    upstream = random((2, 3, 3), 14)
    out, w = attention.scaled_dot_product_attention(q, k, v, mask)
    grads = attention.scaled_dot_product_attention_backward(q, k, v, w, upstream)

    def objective():
        return np.sum(attention.scaled_dot_product_attention(q, k, v, mask)[0] * upstream)
    for grad, x in zip(grads, (q, k, v)):
        np.testing.assert_allclose(grad, numeric_gradient(objective, x), atol=1e-7)


@pytest.mark.parametrize("shapes, message", [
    (((3, 4), (5, 3), (5, 2)), "same size d"),
    (((3, 4), (5, 4), (6, 2)), "same number of steps"),
    (((4,), (5, 4), (5, 2)), "at least two"),
])
def test_sdpa_refuses_mismatched_shapes(shapes, message):
    q, k, v = (np.zeros(s) for s in shapes)
    with pytest.raises(ValueError, match=message):
        attention.scaled_dot_product_attention(q, k, v)
