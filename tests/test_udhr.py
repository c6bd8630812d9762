import re

import numpy as np
import pytest
import udhr_oracle as oracle
from gradcheck import numeric_gradient

from attention_measured import attention, udhr

# Sentences for the gradient checks: three lengths (so there is padding), and
# "and" twice in the first, so the embedding scatter-add meets a repeated token.
SMALL = [
    udhr.DISPLAY,
    udhr.tokenize("Everyone has the right to education."),
    udhr.tokenize("No one shall be held in slavery or servitude."),
]


# --------------------------------------------------------------- section 1
def test_the_corpus_and_its_tokens():
    assert len(udhr.SENTENCES) == 16
    assert len(udhr.VOCAB) == 98 and udhr.VOCAB == sorted(set(udhr.VOCAB))
    assert udhr.DISPLAY in udhr.SENTENCES
    assert (
        " ".join(udhr.DISPLAY) == "all human beings are born free and equal in dignity and rights"
    )
    assert udhr.tokenize("Life, liberty -- and SECURITY.") == ["life", "liberty", "and", "security"]
    assert udhr.MAX_LEN == 19


def test_encode_accepts_strings_and_token_lists():
    ids = udhr.encode("All human beings are born free and equal in dignity and rights.")
    assert ids == udhr.encode(udhr.DISPLAY)
    assert udhr.decode(ids) == udhr.DISPLAY


def test_unknown_words_are_named_and_the_vocabulary_is_pointed_to():
    with pytest.raises(ValueError, match="VOCAB") as info:
        udhr.encode("Everyone has the right to unicorns and dragons.")
    assert "'unicorns'" in str(info.value) and "'dragons'" in str(info.value)


@pytest.mark.parametrize("sentence", ["Everyone.", ["everyone"], []])
def test_a_sentence_needs_two_tokens(sentence):
    with pytest.raises(ValueError, match="attend to itself"):
        udhr.encode(sentence)


# --------------------------------------------------------------- section 2
def test_initial_weights_are_drawn_in_the_demos_order():
    state = np.random.RandomState(0)
    expected = [
        0.1 * state.randn(*shape) for shape in [(98, 24), (24, 24), (24, 24), (24, 24), (24, 98)]
    ]
    for query in udhr.QUERIES:
        params = udhr.init_params(0, query)
        for name, want in zip(["E", "W_Q", "W_K", "W_V", "W_O"], expected):
            assert np.array_equal(getattr(params, name), want), (query, name)
    assert udhr.init_params(0, "mask").mask_embedding.shape == (24,)
    assert udhr.init_params(0, "position").positions.shape == (udhr.MAX_LEN, 24)
    assert udhr.init_params(0, "token").names() == ["E", "W_Q", "W_K", "W_V", "W_O"]


def test_no_global_random_state_is_touched():
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    udhr.train(seed=5, epochs=2, query="position")
    assert np.array_equal(np.random.get_state()[1], before)


def test_seed_zero_starts_at_the_demos_loss():
    result = udhr.train(seed=0, epochs=1)
    assert round(float(result.loss_curve[0]), 4) == 4.5846
    assert result.loss_curve.shape == (1,)


@pytest.mark.parametrize("seed", [0, 3])
def test_vectorised_training_equals_the_loop_oracle(seed):
    curve, params = oracle.train(udhr.SENTENCES, seed=seed, epochs=80)
    result = udhr.train(seed=seed, epochs=80)
    np.testing.assert_allclose(result.loss_curve, curve, rtol=0, atol=1e-6)
    for name in oracle.NAMES:
        np.testing.assert_allclose(getattr(result.params, name), params[name], rtol=0, atol=1e-8)


def _random_entries(shape, rng, count):
    """All entries of a small array, else ``count`` random ones (flat indices)."""
    size = int(np.prod(shape))
    return np.arange(size) if size <= 600 else rng.choice(size, count, replace=False)


@pytest.mark.parametrize("query", udhr.QUERIES)
def test_backward_matches_finite_differences_for_every_array(query):
    batch = udhr.make_batch(SMALL)
    params = udhr.init_params(7, query)
    for array in params.arrays().values():
        array *= 3.0  # larger weights: attention far from uniform
    grads = udhr.backward(params, batch, udhr.forward(params, batch))
    pick = np.random.RandomState(1)
    used = np.unique(batch.targets)
    assert set(grads.names()) == set(params.names())
    for name, array in params.arrays().items():
        entries = _random_entries(array.shape, pick, 150)
        if name == "E":  # every number of the rows in use, plus random others
            rows = np.concatenate(
                [udhr.TOKEN_ID[w] * 24 + np.arange(24) for w in ("and", "all", "education")]
            )
            entries = np.union1d(entries, rows)
        probe = array.reshape(-1)[entries].copy()

        def loss(array=array, entries=entries, probe=probe):
            array.reshape(-1)[entries] = probe
            return udhr.forward(params, batch).loss

        numeric = numeric_gradient(loss, probe)
        analytic = getattr(grads, name).reshape(-1)[entries]
        np.testing.assert_allclose(
            analytic, numeric, rtol=1e-5, atol=1e-7, err_msg=f"{query}: {name}"
        )
        assert np.abs(analytic).max() > 1e-3, f"{query}: {name} has no gradient to check"
    unused = np.setdiff1d(np.arange(len(udhr.VOCAB)), used)
    assert not grads.E[unused].any()


def test_padding_does_not_change_a_sentence():
    params = udhr.init_params(2, "token")
    alone = udhr.forward(params, udhr.make_batch([SMALL[1]]))
    padded = udhr.forward(params, udhr.make_batch(SMALL))
    n = len(SMALL[1])
    np.testing.assert_allclose(padded.weights[1, :n, :n], alone.weights[0], atol=1e-15)
    assert not padded.weights[1, n:].any() and not padded.weights[1, :, n:].any()


@pytest.mark.parametrize("query, blind", [("token", False), ("mask", True), ("position", True)])
def test_only_the_token_query_sees_the_token_it_predicts(query, blind):
    params = udhr.init_params(4, query)
    changed = list(udhr.DISPLAY)
    changed[5] = "slavery"  # "free" -> "slavery"
    before, after = udhr.predict(params, udhr.DISPLAY)[5], udhr.predict(params, changed)[5]
    assert np.allclose(before, after, rtol=0, atol=1e-15) == blind


# --------------------------------------------------------------- sections 3 and 4
@pytest.fixture(scope="module")
def trained():
    return udhr.train(seed=0, epochs=300)


def test_training_lowers_the_loss_and_reads_the_display_sentence(trained):
    assert trained.loss_curve[-1] < trained.loss_curve[0] - 3
    weights = udhr.attention_weights(trained, udhr.DISPLAY)
    assert weights.shape == (12, 12)
    assert np.all(np.diag(weights) == 0.0)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)
    probs = udhr.predict(trained, udhr.DISPLAY)
    assert probs.shape == (12, 98)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert udhr.top1_accuracy(trained) == udhr.top1_accuracy(trained, udhr.SENTENCES) > 0.9


def test_held_out_sentences_can_be_scored():
    fold = udhr.SENTENCES[:12]
    result = udhr.train(seed=1, epochs=20, query="mask", sentences=fold)
    assert result.sentences == fold and result.query == "mask" and result.seed == 1
    score = udhr.top1_accuracy(result, udhr.SENTENCES[12:])
    assert 0.0 <= score <= 1.0
    with pytest.raises(ValueError, match="VOCAB"):
        udhr.top1_accuracy(result, ["everyone has the right to cake"])


def test_the_progress_bar_leaves_the_numbers_alone(capsys):
    quiet = udhr.train(seed=2, epochs=3)
    shown = udhr.train(seed=2, epochs=3, progress=True)
    assert np.array_equal(quiet.loss_curve, shown.loss_curve)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"epochs": 0}, "epochs must be a positive integer"),
        ({"epochs": 2.5}, "epochs must be a positive integer"),
        ({"epochs": True}, "epochs must be a positive integer"),
        ({"query": "keys"}, "unknown query 'keys'; choose one of 'token', 'mask', 'position'"),
        ({"seed": 1.5}, "seed must be an integer"),
        ({"seed": "0"}, "seed must be an integer"),
        ({"seed": -1}, "seed must be an integer"),
        ({"sentences": []}, "at least one sentence"),
        ({"sentences": "all human beings"}, "list of token lists"),
        ({"sentences": [["free"]]}, "attend to itself"),
    ],
)
def test_bad_training_input_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        udhr.train(**{"epochs": 1, **kwargs})


def test_loss_rows_keep_the_first_and_every_twentieth_iteration():
    rows = udhr.loss_csv_rows(np.arange(4000.0))
    assert len(rows) == 201
    assert rows[:3] == [(1, 0.0), (20, 19.0), (40, 39.0)] and rows[-1] == (4000, 3999.0)


def test_csv_files(tmp_path):
    curve = np.linspace(4.5846, 0.01, 4000)
    result = udhr.TrainingResult(curve, udhr.init_params(0), "token", 0, udhr.SENTENCES)
    loss_path, weights_path = udhr.write_csvs(result, tmp_path / "out")
    assert loss_path.name == "attention_loss.csv" and weights_path.name == "attention_weights.csv"
    number = r"-?\d+\.\d{6}"
    loss_lines = loss_path.read_text().splitlines()
    assert loss_lines[0] == "iter,loss" and len(loss_lines) == 1 + 201
    assert loss_lines[1] == "1.000000,4.584600" and loss_lines[2].startswith("20.000000,")
    assert all(re.fullmatch(f"{number},{number}", line) for line in loss_lines[1:])
    weight_lines = weights_path.read_text().splitlines()
    assert weight_lines[0] == "q,k,w" and len(weight_lines) == 1 + 144
    assert all(re.fullmatch(f"{number},{number},{number}", line) for line in weight_lines[1:])
    assert weight_lines[1] == "0.000000,0.000000,0.000000"  # the masked diagonal
    table = np.loadtxt(weights_path, delimiter=",", skiprows=1)
    np.testing.assert_allclose(table[:, 2], udhr.attention_weights(result).ravel(), atol=5e-7)


# --------------------------------------------------------------- section 4: what the memory remembers
def test_a_zero_nudge_changes_nothing_and_a_small_one_changes_the_curve():
    plain = udhr.train(seed=0, epochs=30)
    zero = udhr.train(seed=0, epochs=30, nudge=0.0)
    assert np.array_equal(plain.loss_curve, zero.loss_curve)
    for name, array in plain.params.arrays().items():
        assert np.array_equal(array, getattr(zero.params, name)), name
    nudged = udhr.train(seed=0, epochs=30, nudge=1e-6)
    assert not np.array_equal(plain.loss_curve, nudged.loss_curve)
    assert abs(nudged.loss_curve[0] - plain.loss_curve[0]) < 1e-5  # a tiny push, not a new start


@pytest.mark.parametrize("nudge", [float("nan"), float("inf"), "1e-12", True, None])
def test_a_bad_nudge_is_refused(nudge):
    with pytest.raises(ValueError, match="nudge must be a finite real number"):
        udhr.train(epochs=1, nudge=nudge)


def _spiky_curve():
    """A falling curve with a wobbling spike at iteration 101, a bump at 201 and a spike from 301 on."""
    curve = np.geomspace(1.0, 1e-3, 400)
    best = curve[99]
    curve[100:103] = best * np.array([30.0, 8.0, 20.0])  # wobbles across 10x: still one spike
    curve[103:130] = best * np.linspace(5.0, 1.5, 27)  # back below 2x at iteration 126
    curve[200] = curve[199] * 5.0  # a bump, under 10x
    curve[300:] = curve[299] * 12.0  # climbs and never comes back
    return curve


def test_loss_spikes_counts_each_excursion_once_at_its_start():
    curve = _spiky_curve()
    spikes = udhr.loss_spikes(curve)
    assert spikes.dtype.kind == "i" and spikes.tolist() == [101, 301]
    assert udhr.loss_spikes(curve, factor=4.0, recovery=2.0).tolist() == [101, 201, 301]
    assert udhr.loss_spikes(np.geomspace(1.0, 1e-3, 50)).size == 0
    assert udhr.loss_spikes([1e-3, 5.0, 1.0]).tolist() == [2]  # the first iteration never spikes
    assert udhr.loss_spikes([7.0]).size == 0


@pytest.mark.parametrize(
    "curve, kwargs, message",
    [
        (np.ones((2, 3)), {}, "one-dimensional"),
        ("1, 2", {}, "one-dimensional"),
        ([1.0, 0.0, 2.0], {}, "positive finite"),
        ([1.0, float("nan")], {}, "positive finite"),
        ([1.0, 2.0], {"factor": 2.0, "recovery": 2.0}, "factor > recovery >= 1"),
        ([1.0, 2.0], {"recovery": 0.5}, "factor > recovery >= 1"),
        ([1.0, 2.0], {"factor": "10"}, "factor must be a finite real number"),
    ],
)
def test_loss_spikes_refuses_bad_input(curve, kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        udhr.loss_spikes(curve, **kwargs)


def test_folds_hold_out_every_sentence_but_the_display_one_exactly_once():
    assert len(udhr.FOLDS) == 5 and all(len(fold) == 3 for fold in udhr.FOLDS)
    held = [i for fold in udhr.FOLDS for i in fold]
    assert sorted(held) == list(range(1, 16))
    assert udhr.SENTENCES[udhr.ALWAYS_TRAINED] == udhr.DISPLAY and udhr.ALWAYS_TRAINED not in held


# Worked by hand.  Counts: the 3; no, one, right 2; the rest 1.  Sentences holding
# "no": the first two; "shall": the first; "life": the third.
TINY_TRAINING = [
    ["no", "one", "shall", "be", "held"],
    ["no", "one", "has", "the", "right"],
    ["the", "right", "to", "life", "the"],
]


def test_the_baselines_on_a_case_worked_by_hand():
    assert udhr.most_frequent_token(TINY_TRAINING) == "the"
    assert udhr.most_frequent_token([["no", "one"], ["one", "no"]]) == "no"  # a tie: alphabet
    # position 0 ("no"): shall + life give 1 to nine tokens -> most frequent, "the";
    # position 1 ("shall"): no + life give 2 to no, one, the, right -> "the" (3 occurrences);
    # position 2 ("life"): no + shall give 3 to no and one (2 each) -> alphabet, "no".
    assert udhr.cooccurrence_guesses(TINY_TRAINING, ["no", "shall", "life"]) == ["the", "the", "no"]
    # nothing held out co-occurs with anything: every seen token scores 0, unseen ones are never guessed
    assert udhr.cooccurrence_guesses(TINY_TRAINING, ["education", "liberty"]) == ["the", "the"]
    with pytest.raises(ValueError, match="VOCAB"):
        udhr.cooccurrence_guesses(TINY_TRAINING, ["no", "unicorns"])
    with pytest.raises(ValueError, match="at least one sentence"):
        udhr.most_frequent_token([])


def test_swapped_queries_come_from_the_next_token_within_each_sentence():
    batch = udhr.make_batch([["everyone", "has", "the", "right"], ["no", "one", "shall"]])
    ids = {w: udhr.TOKEN_ID[w] for w in ["everyone", "has", "the", "right", "no", "one", "shall"]}
    expected_next = [
        [ids["has"], ids["the"], ids["right"], ids["everyone"]],
        [ids["one"], ids["shall"], ids["no"], 0],
    ]
    expected_prev = [
        [ids["right"], ids["everyone"], ids["has"], ids["the"]],
        [ids["shall"], ids["no"], ids["one"], 0],
    ]
    assert udhr.swapped_query_ids(batch, "next").tolist() == expected_next
    assert udhr.swapped_query_ids(batch, "previous").tolist() == expected_prev
    with pytest.raises(ValueError, match="unknown swap 'random'"):
        udhr.swapped_query_ids(batch, "random")


def test_the_swap_only_moves_the_queries(trained):
    params = trained.params
    batch = udhr.make_batch(SMALL)
    plain = udhr.forward(params, batch)
    same = udhr.forward(params, batch, batch.ids)  # the true tokens as query ids: no change
    np.testing.assert_allclose(same.probs, plain.probs, rtol=0, atol=1e-12)
    swapped = udhr.forward(params, batch, udhr.swapped_query_ids(batch))
    assert np.array_equal(swapped.keys, plain.keys) and np.array_equal(swapped.values, plain.values)
    want = float(np.mean(swapped.probs.argmax(axis=-1) == batch.targets))
    assert udhr.swapped_top1(trained, SMALL) == want
    # the trained head names almost every token, and almost none once its query sees another token
    assert udhr.top1_accuracy(trained) > 0.9 > 0.2 > udhr.swapped_top1(trained)


def test_the_swap_is_refused_for_queries_that_never_read_their_token():
    for query in ("mask", "position"):
        params = udhr.init_params(0, query)
        with pytest.raises(ValueError, match="never reads the token"):
            udhr.swapped_top1(params, SMALL)
        batch = udhr.make_batch(SMALL)
        with pytest.raises(ValueError, match="no token to swap"):
            udhr.forward(params, batch, batch.ids)
    params, batch = udhr.init_params(0), udhr.make_batch(SMALL)
    with pytest.raises(ValueError, match="shaped like the batch"):
        udhr.forward(params, batch, batch.ids[:, :2])
    with pytest.raises(ValueError, match="must lie in"):
        udhr.forward(params, batch, batch.ids + 200)
    with pytest.raises(ValueError, match="remembers its own"):
        udhr.swapped_top1(params)


@pytest.mark.parametrize("query", udhr.QUERIES)
def test_removal_effects_match_a_direct_recomputation(trained, query):
    params = trained.params if query == "token" else udhr.init_params(5, query)
    effects = udhr.removal_effects(params, udhr.DISPLAY)
    assert effects.shape == (12, 12) and np.all(np.diag(effects) == 0.0) and np.all(effects >= 0)
    ids = np.array(udhr.encode(udhr.DISPLAY))
    fwd = udhr.forward(params, udhr.make_batch([udhr.DISPLAY]))
    scores = fwd.queries[0] @ fwd.keys[0].T / np.sqrt(udhr.WIDTH)
    for i, j in [(3, 7), (6, 10), (11, 0)]:
        allowed = np.ones(12, dtype=bool)
        allowed[[i, j]] = False
        weights = attention.softmax(scores[i], allowed)
        p_without = attention.softmax(weights @ fwd.values[0] @ params.W_O)[ids[i]]
        assert effects[i, j] == pytest.approx(abs(p_without - fwd.probs[i, ids[i]]), abs=1e-12)


def test_removing_the_only_key_leaves_a_uniform_guess(trained):
    tokens = ["everyone", "has"]
    effects = udhr.removal_effects(trained, tokens)
    p_true = udhr.predict(trained, tokens)[[0, 1], udhr.encode(tokens)]
    np.testing.assert_allclose(
        effects, [[0, abs(1 / 98 - p_true[0])], [abs(1 / 98 - p_true[1]), 0]], atol=1e-15
    )
    with pytest.raises(ValueError, match="TrainingResult"):
        udhr.removal_effects("model", tokens)
    with pytest.raises(ValueError, match="VOCAB"):
        udhr.removal_effects(trained, ["everyone", "unicorns"])


@pytest.fixture(scope="module")
def heldout():
    return udhr.heldout_experiment(seed=1, epochs=3, queries=("token", "mask"))


def test_heldout_experiment_scores_every_held_out_position(heldout):
    assert heldout["folds"] == udhr.FOLDS and heldout["queries"] == ("token", "mask")
    lengths = [sum(len(udhr.SENTENCES[i]) for i in fold) for fold in udhr.FOLDS]
    assert heldout["positions"].tolist() == lengths
    assert (
        set(heldout["per_fold"])
        == set(heldout["mean"])
        == {"token", "mask", "token_swapped", "most_frequent", "positional", "cooccurrence"}
    )
    for method, per_fold in heldout["per_fold"].items():
        assert per_fold.shape == (5,) and np.all((0 <= per_fold) & (per_fold <= 1)), method
        pooled = float(per_fold @ heldout["positions"] / sum(lengths))
        assert heldout["mean"][method] == pytest.approx(pooled)
    # fold 2 by hand: the same training, the same scores
    fold = udhr.FOLDS[2]
    training = [s for i, s in enumerate(udhr.SENTENCES) if i not in fold]
    held = [udhr.SENTENCES[i] for i in fold]
    result = udhr.train(seed=1, epochs=3, query="token", sentences=training)
    assert heldout["per_fold"]["token"][2] == udhr.top1_accuracy(result, held)
    assert heldout["per_fold"]["token_swapped"][2] == udhr.swapped_top1(result, held)
    frequent = udhr.most_frequent_token(training)
    targets = [w for s in held for w in s]
    assert heldout["per_fold"]["most_frequent"][2] == np.mean([w == frequent for w in targets])
    guesses = [w for s in held for w in udhr.cooccurrence_guesses(training, s)]
    assert heldout["per_fold"]["cooccurrence"][2] == np.mean(np.array(guesses) == np.array(targets))
    seen = {w for s in training for w in s}
    assert heldout["unseen_share"][2] == np.mean([w not in seen for w in targets])
    assert 0 < heldout["unseen_share_mean"] < 1


def test_heldout_experiment_without_the_token_query_has_no_swap(capsys):
    quiet = udhr.heldout_experiment(seed=2, epochs=1, queries=("mask",))
    shown = udhr.heldout_experiment(seed=2, epochs=1, queries=("mask",), progress=True)
    assert set(quiet["per_fold"]) == {"mask", "most_frequent", "positional", "cooccurrence"}
    for method in quiet["per_fold"]:
        assert np.array_equal(quiet["per_fold"][method], shown["per_fold"][method])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"queries": ()}, "each once"),
        ({"queries": ("token", "token")}, "each once"),
        ({"queries": "token"}, "tuple of query names"),
        ({"queries": ("keys",)}, "unknown query 'keys'"),
        ({"progress": "yes"}, "progress must be True or False"),
        ({"epochs": 0}, "epochs must be a positive integer"),
        ({"seed": -1}, "seed must be an integer"),
    ],
)
def test_heldout_experiment_refuses_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        udhr.heldout_experiment(**{"epochs": 1, **kwargs})


def test_positional_guesses_by_hand():
    training = [["no", "one", "shall"], ["no", "one", "has"], ["everyone", "has", "the", "right"]]
    # position 0: "no" twice; 1: "one" twice; 2: "shall", "has" and "the" once each, and "has" wins the
    # tie by occurring twice overall; 3: "right"; 4: nobody that long, so the overall favourite: "has",
    # "no" and "one" occur twice, alphabetical "has"
    assert udhr.positional_guesses(training, 5) == ["no", "one", "has", "right", "has"]
    with pytest.raises(ValueError, match="length"):
        udhr.positional_guesses(training, 0)
