import re

import numpy as np
import pytest

import udhr_oracle as oracle
from gradcheck import numeric_gradient
from lib import udhr

# Sentences for the gradient checks: three lengths (so there is padding), and
# "and" twice in the first, so the embedding scatter-add meets a repeated token.
SMALL = [udhr.DISPLAY, udhr.tokenize("Everyone has the right to education."),
         udhr.tokenize("No one shall be held in slavery or servitude.")]


# --------------------------------------------------------------- section 1
def test_the_corpus_and_its_tokens():
    assert len(udhr.SENTENCES) == 16
    assert len(udhr.VOCAB) == 98 and udhr.VOCAB == sorted(set(udhr.VOCAB))
    assert udhr.DISPLAY in udhr.SENTENCES
    assert " ".join(udhr.DISPLAY) == "all human beings are born free and equal in dignity and rights"
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
    expected = [0.1 * state.randn(*shape) for shape in [(98, 24), (24, 24), (24, 24), (24, 24), (24, 98)]]
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
        array *= 3.0                       # larger weights: attention far from uniform
    grads = udhr.backward(params, batch, udhr.forward(params, batch))
    pick = np.random.RandomState(1)
    used = np.unique(batch.targets)
    assert set(grads.names()) == set(params.names())
    for name, array in params.arrays().items():
        entries = _random_entries(array.shape, pick, 150)
        if name == "E":                    # every number of the rows in use, plus random others
            rows = np.concatenate([udhr.TOKEN_ID[w] * 24 + np.arange(24) for w in ("and", "all", "education")])
            entries = np.union1d(entries, rows)
        probe = array.reshape(-1)[entries].copy()

        def loss():
            array.reshape(-1)[entries] = probe
            return udhr.forward(params, batch).loss
        numeric = numeric_gradient(loss, probe)
        analytic = getattr(grads, name).reshape(-1)[entries]
        np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7, err_msg=f"{query}: {name}")
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
    changed[5] = "slavery"                 # "free" -> "slavery"
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


@pytest.mark.parametrize("kwargs, message", [
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
])
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
    assert weight_lines[1] == "0.000000,0.000000,0.000000"          # the masked diagonal
    table = np.loadtxt(weights_path, delimiter=",", skiprows=1)
    np.testing.assert_allclose(table[:, 2], udhr.attention_weights(result).ravel(), atol=5e-7)
