import numpy as np
import pytest
from gradcheck import numeric_gradient

from attention_measured.core import attention


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


def test_infinite_scores_share_the_weight_equally():
    scores = np.array([[1.0, np.inf, 3.0, np.inf], [0.5, -2.0, np.inf, 1.0], [1.0, 2.0, 3.0, 4.0]])
    w = attention.softmax(scores)
    assert not np.isnan(w).any()
    np.testing.assert_array_equal(w[0], [0.0, 0.5, 0.0, 0.5])
    np.testing.assert_array_equal(w[1], [0.0, 0.0, 1.0, 0.0])
    np.testing.assert_array_equal(w[2], attention.softmax(scores[2:])[0])  # finite rows untouched
    # along another axis, and with a mask that hides one of the infinite scores
    np.testing.assert_allclose(attention.softmax(scores.T, axis=0), w.T, rtol=1e-15)
    mask = np.array([True, False, True, True])
    masked = attention.softmax(scores, mask)
    np.testing.assert_array_equal(masked[0], [0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(masked[1], [0.0, 0.0, 1.0, 0.0])
    assert masked[2, 1] == 0.0 and masked[2].sum() == pytest.approx(1.0)


def test_finite_scores_give_the_same_weights_as_before():
    scores = random((4, 7), 21) * 30
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    np.testing.assert_array_equal(
        attention.softmax(scores), e / np.einsum("...j->...", e)[..., None]
    )
    mask = random((4, 7), 22) > 0
    kept = np.where(mask, scores, -np.inf)
    e = np.exp(kept - kept.max(axis=-1, keepdims=True))
    np.testing.assert_array_equal(
        attention.softmax(scores, mask), e / np.einsum("...j->...", e)[..., None]
    )


@pytest.mark.parametrize("scores", [np.float64(3.0), 3.0, np.array(2.0)])
def test_softmax_of_a_single_number_is_refused(scores):
    with pytest.raises(ValueError, match="scores must have at least one axis"):
        attention.softmax(scores)


def test_softmax_refuses_a_non_boolean_mask():
    with pytest.raises(TypeError, match="boolean"):
        attention.softmax(np.zeros(3), np.array([1, 0, 1]))


def test_drop_each_step_renormalises_the_rest():
    scores = random((5, 6), 1)
    w = attention.softmax(scores)
    without = attention.drop_each_step(scores)
    assert without.shape == (5, 6, 6)
    for t in range(6):
        expected = np.delete(w, t, axis=-1) / (1 - w[:, t : t + 1])
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
            s = np.array([q[b, i] @ k[b, j] for j in range(5)]) / 2.0  # sqrt(4)
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


@pytest.mark.parametrize(
    "shapes, message",
    [
        (((3, 4), (5, 3), (5, 2)), "same size d"),
        (((3, 4), (5, 4), (6, 2)), "same number of steps"),
        (((4,), (5, 4), (5, 2)), "at least two"),
    ],
)
def test_sdpa_refuses_mismatched_shapes(shapes, message):
    q, k, v = (np.zeros(s) for s in shapes)
    with pytest.raises(ValueError, match=message):
        attention.scaled_dot_product_attention(q, k, v)


# ------------------------------------------------------------ Part III: heads, masks, positions
def reference_multi_head(queries, keys, W_Q, W_K, W_V, W_O, heads):
    """One head at a time, written out with explicit loops over heads and queries."""
    dk, dv = W_Q.shape[1] // heads, W_V.shape[1] // heads
    outputs = []
    for h in range(heads):
        q = queries @ W_Q[:, h * dk : (h + 1) * dk]
        k = keys @ W_K[:, h * dk : (h + 1) * dk]
        v = keys @ W_V[:, h * dv : (h + 1) * dv]
        rows = []
        for i in range(q.shape[0]):
            s = k @ q[i] / np.sqrt(dk)
            w = np.exp(s - s.max())
            rows.append((w / w.sum()) @ v)
        outputs.append(np.array(rows))
    return np.concatenate(outputs, axis=1) @ W_O


def mha_setup(seed=0, heads=2, n=3, m=4, d_in=5, dk=3, dv=2, d_out=4):
    r = np.random.RandomState(seed)
    return (
        r.normal(size=(2, n, d_in)),
        r.normal(size=(2, m, d_in)),
        r.normal(size=(d_in, heads * dk)),
        r.normal(size=(d_in, heads * dk)),
        r.normal(size=(d_in, heads * dv)),
        r.normal(size=(heads * dv, d_out)),
    )


def test_multi_head_matches_a_head_by_head_reference():
    queries, keys, W_Q, W_K, W_V, W_O = mha_setup()
    out, weights = attention.multi_head_attention(queries, keys, W_Q, W_K, W_V, W_O, heads=2)
    assert weights.shape == (2, 2, 3, 4)
    for b in range(2):
        np.testing.assert_allclose(
            out[b], reference_multi_head(queries[b], keys[b], W_Q, W_K, W_V, W_O, 2), rtol=1e-12
        )


def test_one_head_is_scaled_dot_product_attention_with_projections():
    queries, keys, W_Q, W_K, W_V, W_O = mha_setup(heads=1)
    out, weights = attention.multi_head_attention(queries, keys, W_Q, W_K, W_V, W_O, heads=1)
    expected, w = attention.scaled_dot_product_attention(queries @ W_Q, keys @ W_K, keys @ W_V)
    np.testing.assert_allclose(out, expected @ W_O, rtol=1e-12)
    np.testing.assert_allclose(weights[:, 0], w, rtol=1e-12)


def test_multi_head_backward_matches_finite_differences():
    args = list(mha_setup(seed=1))
    mask = np.array([[True, True, False, True]] * 3)
    direction = np.random.RandomState(2).normal(size=(2, 3, 4))

    def objective():
        return float(
            (attention.multi_head_attention(*args, heads=2, mask=mask)[0] * direction).sum()
        )

    _, weights = attention.multi_head_attention(*args, heads=2, mask=mask)
    grads = attention.multi_head_attention_backward(*args, 2, weights, direction)
    names = ["grad_queries", "grad_keys", "W_Q", "W_K", "W_V", "W_O"]
    for name, a in zip(names, args):
        np.testing.assert_allclose(
            grads[name], numeric_gradient(objective, a), atol=1e-6, err_msg=name
        )


def test_softmax_writes_into_out_with_and_without_a_mask():
    scores = random((3, 5), 7)
    mask = np.array([True, False, True, True, False])
    for m in (None, mask):
        expected = attention.softmax(scores, m)
        into = scores.copy()
        assert attention.softmax(into, m, out=into) is into  # in place over the scores
        np.testing.assert_array_equal(into, expected)
    with pytest.raises(ValueError, match="out must be a float array of shape"):
        attention.softmax(scores, out=np.empty((3, 4)))


def test_multi_head_biases_are_added_after_each_projection_and_have_gradients():
    args = list(mha_setup(seed=5))
    r = np.random.RandomState(6)
    biases = [r.normal(size=6), r.normal(size=6), r.normal(size=4), r.normal(size=4)]
    out, weights = attention.multi_head_attention(*args, heads=2, biases=biases)
    queries, keys, W_Q, W_K, W_V, W_O = args
    for b in range(2):  # the reference with each bias folded into its projection's input
        q, k, v = queries[b] @ W_Q + biases[0], keys[b] @ W_K + biases[1], keys[b] @ W_V + biases[2]
        heads = [
            attention.scaled_dot_product_attention(
                q[:, 3 * h : 3 * h + 3], k[:, 3 * h : 3 * h + 3], v[:, 2 * h : 2 * h + 2]
            )[0]
            for h in range(2)
        ]
        expected = np.concatenate(heads, axis=1) @ W_O + biases[3]
        np.testing.assert_allclose(out[b], expected, rtol=1e-12)
    direction = r.normal(size=out.shape)

    def objective():
        return float(
            (attention.multi_head_attention(*args, heads=2, biases=biases)[0] * direction).sum()
        )

    grads = attention.multi_head_attention_backward(*args, 2, weights, direction, biases=biases)
    for name, b in zip(["b_q", "b_k", "b_v", "b_o"], biases):
        np.testing.assert_allclose(grads[name], numeric_gradient(objective, b), atol=1e-6)
    for name, a in zip(["grad_queries", "grad_keys", "W_Q", "W_K", "W_V", "W_O"], args):
        np.testing.assert_allclose(grads[name], numeric_gradient(objective, a), atol=1e-6)
    with pytest.raises(ValueError, match="biases"):
        attention.multi_head_attention(*args, heads=2, biases=biases[:3])


def test_self_attention_without_positions_is_permutation_equivariant():
    x, _, W_Q, W_K, W_V, W_O = mha_setup(seed=3, n=6)
    order = np.random.RandomState(4).permutation(6)
    out, _ = attention.multi_head_attention(x, x, W_Q, W_K, W_V, W_O, heads=2)
    shuffled, _ = attention.multi_head_attention(
        x[:, order], x[:, order], W_Q, W_K, W_V, W_O, heads=2
    )
    np.testing.assert_allclose(shuffled, out[:, order], rtol=1e-12)


def test_masks_and_positions():
    causal = attention.causal_mask(4)
    assert causal[2, 2] and causal[2, 0] and not causal[0, 3]
    pad = attention.padding_mask([2, 4], 4)
    assert pad.shape == (2, 1, 4) and pad[0, 0].tolist() == [True, True, False, False]
    pe = attention.sinusoidal_positions(50, 8)
    np.testing.assert_allclose(pe[0], [0, 1] * 4)
    np.testing.assert_allclose(pe[:, 0], np.sin(np.arange(50)))
    np.testing.assert_allclose(pe[:, 7], np.cos(np.arange(50) / 10000 ** (6 / 8)))
    with pytest.raises(ValueError, match="size must be even"):
        attention.sinusoidal_positions(4, 3)
    with pytest.raises(TypeError, match="steps must be an integer"):
        attention.causal_mask(2.5)
    with pytest.raises(ValueError, match="split into 3 heads"):
        attention.split_heads(np.ones((2, 4)), 3)
    with pytest.raises(ValueError, match="lengths"):
        attention.padding_mask([5], 4)
    with pytest.raises(ValueError, match="lengths"):
        attention.padding_mask([-1], 4)
    with pytest.raises(ValueError, match="heads"):
        attention.multi_head_attention(
            np.zeros((1, 2, 5)),
            np.zeros((1, 2, 5)),
            np.zeros((5, 6)),
            np.zeros((5, 6)),
            np.zeros((5, 4)),
            np.zeros((4, 2)),
            heads=4,
        )
    shapes = [(1, 2, 4), (1, 2, 4), (4, 4), (4, 4), (4, 4), (4, 2)]
    for heads, error in ((2.5, TypeError), (True, TypeError), (0, ValueError)):
        with pytest.raises(error, match="heads must be an integer"):
            attention.multi_head_attention(*(np.zeros(s) for s in shapes), heads=heads)


@pytest.mark.parametrize("lengths", [[1.5], [2.0, 3.0], [True, False], ["2"]])
def test_padding_mask_refuses_lengths_that_are_not_whole_numbers(lengths):
    with pytest.raises(TypeError, match="lengths must hold integers"):
        attention.padding_mask(lengths, 3)


# ---------------------------------------------------------------- Part IV: tiled attention
@pytest.mark.parametrize("block", [1, 3, 7, 16, 64])
def test_tiled_attention_equals_the_plain_computation(block):
    # batch (2, 3), 13 queries, 37 keys: blocks that do not divide m, and one larger than m
    q, k, v = random((2, 3, 13, 5), 1), random((2, 3, 37, 5), 2), random((2, 3, 37, 4), 3)
    q *= 4  # large scores, so that later blocks raise the running maximum
    plain, _ = attention.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(attention.tiled_attention(q, k, v, block), plain, rtol=0, atol=1e-12)


def test_the_online_softmax_steps_end_at_the_softmax_and_rescale_when_the_maximum_rises():
    draw = np.random.default_rng(7)
    scores, values = np.array([0.0, 1.0, -np.inf, 3.0, 0.5]), draw.normal(size=(5, 2))
    steps = attention.online_softmax(scores, values, 2)
    assert len(steps) == 3
    assert [s.top[0] for s in steps] == [1.0, 3.0, 3.0]  # the largest score so far
    # after the first block: exp(0 - 1) + exp(1 - 1), and those two values weighted so
    assert steps[0].total[0] == pytest.approx(np.exp(-1.0) + 1.0, abs=1e-15)
    np.testing.assert_allclose(steps[0].acc, np.exp(-1.0) * values[0] + values[1], atol=1e-15)
    # the second block raised the maximum to 3: the past is multiplied by exp(1 - 3)
    assert steps[1].total[0] == pytest.approx((np.exp(-1.0) + 1.0) * np.exp(-2.0) + 1.0, abs=1e-15)
    weights = attention.softmax(scores, np.isfinite(scores))
    np.testing.assert_allclose(steps[-1].acc / steps[-1].total, weights @ values, atol=1e-15)


def test_the_online_softmax_of_many_queries_is_tiled_attentions_and_of_none_allowed_is_zero():
    draw = np.random.default_rng(8)
    q, k, v = draw.normal(size=(4, 3)), draw.normal(size=(9, 3)), draw.normal(size=(9, 2))
    for block in (1, 4, 9, 12):
        last = attention.online_softmax(q @ k.T / np.sqrt(3), v, block)[-1]
        np.testing.assert_allclose(
            last.acc / last.total, attention.tiled_attention(q, k, v, block), atol=1e-14
        )
    none = attention.online_softmax(np.full(3, -np.inf), v[:3], 2)[-1]
    assert none.top[0] == -np.inf and none.total[0] == 0 and not none.acc.any()


@pytest.mark.parametrize(
    "scores, values, block, says",
    [
        (np.zeros(0), np.zeros((0, 1)), 1, "scores must be"),
        (np.array([1.0, np.nan]), np.zeros((2, 1)), 1, "scores must be finite"),
        (np.array([1.0, np.inf]), np.zeros((2, 1)), 1, "scores must be finite"),
        (np.zeros(3), np.zeros(3), 1, "values must be"),
        (np.zeros(3), np.zeros((2, 1)), 1, "values must be"),
        (np.zeros(3), np.zeros((3, 1)), 0, "block"),
    ],
)
def test_the_online_softmax_refuses_bad_input_naming_it(scores, values, block, says):
    with pytest.raises(ValueError, match=says):
        attention.online_softmax(scores, values, block)


def test_tiled_attention_masks_and_gives_zeros_to_a_query_with_nothing_to_attend():
    q, k, v = random((2, 9, 4), 4), random((2, 9, 4), 5), random((2, 9, 3), 6)
    mask = attention.causal_mask(9) & attention.padding_mask([9, 5], 9)
    mask[1, 6:] = False  # padding queries of the second sequence: no key at all
    mask[0, 3, :] = False
    plain, _ = attention.scaled_dot_product_attention(q, k, v, mask)
    tiled = attention.tiled_attention(q, k, v, 2, mask)
    np.testing.assert_allclose(tiled, plain, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(tiled[1, 6:], 0.0)
    np.testing.assert_array_equal(tiled[0, 3], 0.0)
    # a block made only of masked keys, after allowed ones, changes nothing
    late = np.zeros((1, 9), dtype=bool)
    late[0, :2] = True
    np.testing.assert_allclose(
        attention.tiled_attention(q, k, v, 2, late),
        attention.scaled_dot_product_attention(q, k, v, late)[0],
        rtol=0,
        atol=1e-12,
    )


def test_tiled_attention_holds_block_sized_scores_only():
    import tracemalloc

    n, d, block = 1024, 8, 64
    q, k, v = random((n, d), 7), random((n, d), 8), random((n, d), 9)

    def peak(f):
        tracemalloc.start()
        f()
        top = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return top

    plain = peak(lambda: attention.scaled_dot_product_attention(q, k, v))
    tiled = peak(lambda: attention.tiled_attention(q, k, v, block))
    # the plain version holds at least one (n, n) array of float64 scores, 8 MiB here; the
    # tiled one a few (n, block) arrays, 0.5 MiB each
    assert plain >= n * n * 8
    assert tiled < 8 * n * block * 8 < plain / 2


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda q: attention.tiled_attention(q, q, q, 0), ValueError, "block"),
        (lambda q: attention.tiled_attention(q, q, q, 2.5), TypeError, "block"),
        (lambda q: attention.tiled_attention(q, q[:, :2], q, 2), ValueError, "same size d"),
        (lambda q: attention.tiled_attention(q, q, q, 2, np.ones((3, 3))), TypeError, "boolean"),
        (lambda q: attention.tiled_attention(q * np.inf, q, q, 2), ValueError, "finite"),
    ],
)
def test_tiled_attention_refuses_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call(random((4, 3), 10))


def test_what_the_forward_pass_keeps_gives_the_backward_pass_to_the_last_bit():
    args = list(mha_setup(seed=7))
    r = np.random.RandomState(8)
    biases = [r.normal(size=6), r.normal(size=6), r.normal(size=4), r.normal(size=4)]
    kept = {}
    out, weights = attention.multi_head_attention(*args, heads=2, biases=biases, kept=kept)
    assert set(kept) == {"q", "k", "v", "merged"}
    np.testing.assert_array_equal(out, attention.multi_head_attention(*args, 2, biases=biases)[0])
    direction = r.normal(size=out.shape)
    again = attention.multi_head_attention_backward(*args, 2, weights, direction, biases=biases)
    read = attention.multi_head_attention_backward(
        *args, 2, weights, direction, biases=biases, kept=kept
    )
    assert set(read) == set(again)
    for name in again:
        np.testing.assert_array_equal(read[name], again[name], err_msg=name)
    with pytest.raises(TypeError, match="kept must be a dict to fill"):
        attention.multi_head_attention(*args, heads=2, kept=[])


def test_multi_head_attention_names_the_argument_of_the_wrong_shape():
    rng = np.random.RandomState(0)
    x, W = rng.normal(size=(2, 3, 4)), [rng.normal(size=(4, 4)) for _ in range(4)]
    out, weights = attention.multi_head_attention(x, x, *W, 2)
    with pytest.raises(TypeError, match="mask must be boolean"):
        attention.multi_head_attention(x, x, *W, 2, mask="causal")
    for args, name in (
        ((x[0], x), "queries"),  # the queries lack the batch axis the weights have
        ((x, x[..., :3]), "keys"),
    ):
        with pytest.raises(ValueError, match=name):
            attention.multi_head_attention_backward(*args, *W, 2, weights, out)
    with pytest.raises(ValueError, match="grad_output"):
        attention.multi_head_attention_backward(x, x, *W, 2, weights, out[None])
    q = k = v = x
    weights = attention.scaled_dot_product_attention(q, k, v)[1]
    with pytest.raises(ValueError, match="q .* and k"):
        attention.scaled_dot_product_attention_backward(q[None], k, v, weights, out)
    with pytest.raises(ValueError, match="grad_output"):
        attention.scaled_dot_product_attention_backward(q, k, v, weights, out[None])
