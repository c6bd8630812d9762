"""Part VII's language model by hand: its backward pass by finite differences, RoPE's relative
positions, the causal mask, the removal of heads, the copying task and the head scores."""

import itertools

import numpy as np
import pytest

from attention_measured.core.params import Params
from attention_measured.measures import induction
from attention_measured.models.language_model import POSITIONS, LanguageModel, rotate
from attention_measured.tasks.repeats import repeats, with_start

CONFIGURATIONS = list(itertools.product(POSITIONS, [(False, False), (True, False), (True, True)]))


@pytest.mark.parametrize("positions, blocks", CONFIGURATIONS)
def test_every_gradient_matches_finite_differences(positions, blocks):
    mlp, norm = blocks
    model = LanguageModel(7, 8, 8, 2, 2, positions, mlp=mlp, norm=norm, feed_forward=6)
    params, tokens = model.init(1), repeats(3, 8, 7, seed=2).tokens
    assert_gradients(model, params, tokens, list(params))


def assert_gradients(model, params, tokens, names, h=1e-6):
    """The backward pass against central differences at two random entries of each name."""
    _, grads = model.loss_and_grads(params, tokens)
    rng = np.random.RandomState(0)
    for name in names:
        for _ in range(2):
            at = tuple(rng.randint(0, n) for n in params[name].shape)
            moved = []
            for sign in (1, -1):
                changed = Params({k: v.copy() for k, v in params.items()})
                changed[name][at] += sign * h
                moved.append(model.loss_and_grads(changed, tokens)[0])
            numeric = (moved[0] - moved[1]) / (2 * h)
            assert grads[name][at] == pytest.approx(numeric, abs=2e-8), (name, at)


def test_rotary_scores_depend_only_on_the_distance_between_positions():
    rng = np.random.RandomState(3)
    q, k = rng.normal(size=(1, 8)), rng.normal(size=(1, 8))
    scores = {}
    for t, s in [(5, 2), (13, 10), (40, 37), (2, 5), (9, 12)]:
        scores[(t, s)] = float((rotate(q, [t]) @ rotate(k, [s]).T)[0, 0])
    assert scores[(5, 2)] == pytest.approx(scores[(13, 10)], abs=1e-12)
    assert scores[(5, 2)] == pytest.approx(scores[(40, 37)], abs=1e-12)
    assert scores[(2, 5)] == pytest.approx(scores[(9, 12)], abs=1e-12)
    assert scores[(5, 2)] != pytest.approx(scores[(2, 5)])
    x = rng.normal(size=(3, 6, 8))
    np.testing.assert_allclose(rotate(rotate(x, np.arange(6)), -np.arange(6)), x, atol=1e-15)
    np.testing.assert_allclose(
        np.linalg.norm(rotate(x, np.arange(6)), axis=-1), np.linalg.norm(x, axis=-1)
    )


@pytest.mark.parametrize("positions", POSITIONS)
def test_no_position_reads_a_later_token(positions):
    model = LanguageModel(9, 10, 8, 2, 2, positions, mlp=True, norm=True)
    params = model.init(0)
    tokens = repeats(2, 10, 9, seed=1).tokens
    changed = tokens.copy()
    changed[:, 6:] = (changed[:, 6:] + 1) % 9
    before, after = (model.forward(params, t).output for t in (tokens, changed))
    np.testing.assert_array_equal(before[:, :6], after[:, :6])
    assert not np.allclose(before[:, 6:], after[:, 6:])
    weights = model.forward(params, tokens).parts["weights"][0]
    assert np.all(np.triu(weights[0, 0], 1) == 0)


def test_with_every_head_removed_an_attention_only_model_reads_the_token_alone():
    model = LanguageModel(9, 10, 8, 2, 2, "none")
    params, tokens = model.init(0), repeats(2, 10, 9, seed=1).tokens
    every = [(layer, head) for layer in range(2) for head in range(2)]
    logits = model.forward(params, tokens, ablate=every).output
    np.testing.assert_allclose(logits, params["embed"][tokens] @ params["unembed"], atol=1e-14)
    one = model.forward(params, tokens, ablate=[(1, 0)]).output
    assert not np.allclose(one, model.forward(params, tokens).output)


def test_a_hand_built_induction_pattern_scores_one_and_the_task_holds_its_answer():
    task = repeats(5, 16, 10, seed=4)
    n, length = task.tokens.shape
    rows, at = np.nonzero(task.repeated)
    # the answer sits where the source says: after the earlier copy of the current token
    np.testing.assert_array_equal(
        task.tokens[rows, at + 1], task.tokens[rows, task.source[rows, at]]
    )
    np.testing.assert_array_equal(
        task.tokens[rows, at], task.tokens[rows, task.source[rows, at] - 1]
    )
    weights = np.zeros((n, 2, length, length))
    weights[:, :, 0, 0] = 1.0
    t = np.arange(1, length)
    weights[:, 0, t, t - 1] = 1.0  # head 0 reads the previous token
    weights[:, 1, t, 0] = 1.0
    weights[rows, 1, at, 0] = 0.0
    weights[rows, 1, at, task.source[rows, at]] = 1.0  # head 1 reads the token after the copy
    assert induction.previous_token_score(weights)[0] == 1.0
    assert induction.induction_score(weights, task.source)[1] == 1.0
    assert induction.induction_score(weights, task.source)[0] < 0.2
    assert induction.duplicate_token_score(weights, task.source)[1] == 0.0


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: LanguageModel(positions="absolute"), ValueError, "positions"),
        (lambda: LanguageModel(width=6, heads=2), ValueError, "even width"),
        (
            lambda: LanguageModel(8, 4).forward(LanguageModel(8, 4).init(0), np.zeros((1, 5), int)),
            ValueError,
            "context",
        ),
        (
            lambda: LanguageModel(8, 4).losses(LanguageModel(8, 4).init(0), np.full((1, 3), 8)),
            ValueError,
            "tokens",
        ),
        (
            lambda: LanguageModel(8, 4).forward(
                LanguageModel(8, 4).init(0), np.zeros((1, 3), int), ablate=[(0, 2)]
            ),
            ValueError,
            "head",
        ),
        (
            lambda: LanguageModel(8, 4).forward(
                LanguageModel(8, 4).init(0), np.zeros((1, 3), int), ablate=[0]
            ),
            TypeError,
            "ablate",
        ),
        (
            lambda: LanguageModel(8, 4).forward(
                LanguageModel(8, 4).init(0), np.zeros((1, 3), int), weights=np.ones((1, 3, 3))
            ),
            ValueError,
            "ablate",
        ),
        (lambda: rotate(np.ones((2, 3)), [0, 1]), ValueError, "even"),
        (lambda: repeats(2, 16, 10, longest=9), ValueError, "half"),
        (lambda: repeats(0), ValueError, "n"),
        (lambda: induction.previous_token_score(np.ones((2, 3, 3))), ValueError, "weights"),
        (
            lambda: induction.induction_score(np.ones((1, 1, 4, 4)), np.full((1, 4), -1)),
            ValueError,
            "no position",
        ),
        (
            lambda: induction.induction_score(np.ones((1, 1, 4, 4)), np.array([[-1, 3, -1, -1]])),
            ValueError,
            "later",
        ),
        (
            lambda: induction.induction_score(np.ones((1, 1, 4, 4)), np.full((2, 4), 1)),
            ValueError,
            "source",
        ),
    ],
)
def test_bad_input_is_refused_by_name(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("positions", POSITIONS)
@pytest.mark.parametrize("null_key", [False, True])
def test_decoding_through_the_cache_gives_the_full_passes_logits(positions, null_key):
    model = LanguageModel(9, 12, 8, 2, 2, positions, mlp=True, norm=True, null_key=null_key)
    params, tokens = model.init(3), repeats(3, 10, 9, seed=2).tokens
    full = model.forward(params, tokens).output
    cache = model.empty_cache(3)
    for t in range(10):
        logits, cache = model.next_logits(params, cache, tokens[:, t])
        np.testing.assert_allclose(logits, full[:, t], atol=1e-12)
    assert cache.length == 10 and cache.keys[0].shape == (3, 2, 10, 4)


def test_a_null_key_lets_a_head_give_less_than_all_its_weight_and_its_gradients_hold():
    model = LanguageModel(7, 8, 8, 2, 2, "rotary", mlp=True, norm=True, null_key=True)
    params, tokens = model.init(1), repeats(3, 8, 7, seed=2).tokens
    total = model.forward(params, tokens).parts["weights"][0].sum(axis=-1)
    assert np.all(total < 1) and np.all(total > 0)
    _, grads = model.loss_and_grads(params, tokens)
    for name in ("0.W_Q", "1.W_K", "embed"):
        at = (1, 2)
        moved = []
        for sign in (1, -1):
            changed = Params({k: v.copy() for k, v in params.items()})
            changed[name][at] += sign * 1e-6
            moved.append(model.loss_and_grads(changed, tokens)[0])
        assert grads[name][at] == pytest.approx((moved[0] - moved[1]) / 2e-6, abs=2e-8)


def test_sampling_reads_the_cache_and_obeys_temperature_and_top_k():
    model = LanguageModel(9, 16, 8, 2, 2, "rotary")
    params, prompt = model.init(0), repeats(4, 6, 9, seed=3).tokens
    greedy = model.generate(params, prompt, 5, temperature=0)
    assert greedy.shape == (4, 11) and np.array_equal(greedy[:, :6], prompt)
    for t in range(6, 11):  # each greedy token is the full pass's most likely one
        best = model.forward(params, greedy[:, :t]).output[:, -1].argmax(axis=1)
        np.testing.assert_array_equal(greedy[:, t], best)
    once, again = (model.generate(params, prompt, 5, 1.0, top_k=2, seed=7) for _ in range(2))
    np.testing.assert_array_equal(once, again)
    first = model.forward(params, prompt).output[:, -1]
    allowed = np.argsort(first, axis=1)[:, -2:]
    assert all(once[i, 6] in allowed[i] for i in range(4))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m, p: m.generate(p, np.zeros((1, 3), int), 14), ValueError, "steps"),
        (
            lambda m, p: m.generate(p, np.zeros((1, 3), int), 2, temperature=-1),
            ValueError,
            "temperature",
        ),
        (lambda m, p: m.generate(p, np.zeros((1, 3), int), 2, top_k=0), ValueError, "top_k"),
        (lambda m, p: m.next_logits(p, None, [0]), TypeError, "cache"),
        (lambda m, p: m.next_logits(p, m.empty_cache(2), [0]), ValueError, "tokens"),
        (lambda m, p: m.empty_cache(0), ValueError, "n"),
    ],
)
def test_decoding_refuses_bad_input_by_name(call, error, message):
    model = LanguageModel(9, 16, 8, 2, 2, "rotary")
    with pytest.raises(error, match=message):
        call(model, model.init(0))


def test_a_full_cache_is_refused():
    model = LanguageModel(9, 3, 8, 2, 1, "none")
    params, cache = model.init(0), model.empty_cache(1)
    for _ in range(3):
        _, cache = model.next_logits(params, cache, [1])
    with pytest.raises(ValueError, match="context"):
        model.next_logits(params, cache, [1])


def test_a_start_token_moves_every_source_one_place_and_sinks_are_weighed_at_position_zero():
    data = repeats(3, 12, 8, seed=1)
    started = with_start(data, 8)
    assert started.tokens.shape == (3, 13) and (started.tokens[:, 0] == 8).all()
    np.testing.assert_array_equal(started.tokens[:, 1:], data.tokens)
    t, s = np.nonzero(data.source >= 0)
    np.testing.assert_array_equal(started.source[t, s + 1], data.source[t, s] + 1)
    assert (started.source[:, 0] == -1).all()
    # a head that puts 0.9 on position 0 from every query but the first, another 0.2
    L = 5
    w = np.zeros((1, 2, L, L))
    w[0, :, 0, 0] = 1.0
    for q in range(1, L):
        for h, share in enumerate([0.9, 0.2]):
            w[0, h, q, 0] = share
            w[0, h, q, 1 : q + 1] = (1 - share) / q
    where = np.ones((1, L), dtype=bool)
    np.testing.assert_allclose(induction.first_position_weight(w, where), [0.9, 0.2])
    with pytest.raises(ValueError, match="where must choose"):
        induction.first_position_weight(w, np.eye(1, L, dtype=bool))
    with pytest.raises(TypeError, match="data must be Repeats"):
        with_start(data.tokens, 8)


@pytest.mark.parametrize("kv_heads, window", [(1, None), (2, None), (4, 3), (2, 5)])
def test_shared_keys_and_a_window_pass_finite_differences_and_decode_through_the_cache(
    kv_heads, window
):
    model = LanguageModel(7, 10, 16, 4, 2, "rotary", kv_heads=kv_heads, window=window)
    params, tokens = model.init(1), repeats(3, 10, 7, seed=2).tokens
    assert params["0.W_K"].shape == (16, 4 * kv_heads)
    assert_gradients(model, params, tokens, ["0.W_K", "1.W_V", "1.W_Q", "embed"])
    full = model.forward(params, tokens).output
    cache = model.empty_cache(3)
    for t in range(10):
        logits, cache = model.next_logits(params, cache, tokens[:, t])
        np.testing.assert_allclose(logits, full[:, t], atol=1e-12)
    assert cache.keys[0].shape == (3, kv_heads, 10, 4)  # the cache holds G heads, not H


def test_shared_heads_equal_full_heads_whose_keys_and_values_are_copied():
    shared = LanguageModel(7, 10, 16, 4, 1, "rotary", kv_heads=2)
    full = LanguageModel(7, 10, 16, 4, 1, "rotary")
    p = shared.init(0)
    q = Params({k: v.copy() for k, v in p.items()})
    for name in ("0.W_K", "0.W_V"):  # block g of 2 serves query heads 2g and 2g + 1
        blocks = np.split(p[name], 2, axis=1)
        q[name] = np.concatenate([blocks[0], blocks[0], blocks[1], blocks[1]], axis=1)
    tokens = repeats(2, 10, 7, seed=1).tokens
    np.testing.assert_allclose(
        shared.forward(p, tokens).output, full.forward(q, tokens).output, atol=1e-13
    )


def test_a_window_lets_a_query_read_only_the_last_w_positions():
    model = LanguageModel(7, 10, 8, 2, 1, "rotary", window=3)
    allowed = model.allowed(6)
    assert allowed[5].tolist() == [False, False, False, True, True, True]
    weights = model.forward(model.init(0), repeats(2, 10, 7, seed=1).tokens).parts["weights"]
    t, s = np.nonzero(~model.allowed(10))
    assert np.all(weights[0][:, :, t, s] == 0)
    for bad, message in [({"kv_heads": 3}, "kv_heads must divide"), ({"window": 0}, "window")]:
        with pytest.raises(ValueError, match=message):
            LanguageModel(7, 10, 8, 2, 1, "rotary", **bad)
