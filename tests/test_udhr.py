"""Part II, sections 1 to 3: the corpus, the head written out by hand, and its training."""

import re

import cloze_head_oracle as oracle
import numpy as np
import pytest
from gradcheck import numeric_gradient

from attention_measured.core import training
from attention_measured.core.params import Params
from attention_measured.experiments import cloze_runs
from attention_measured.measures import cloze_recall
from attention_measured.models import cloze_head
from attention_measured.tasks import cloze

HEAD = cloze_head.Head()  # every head's forward pass: its parameters say which query

# Sentences for the gradient checks: three lengths (so there is padding), and
# "and" twice in the first, so the embedding scatter-add meets a repeated token.
SMALL = [
    cloze.DISPLAY,
    cloze.tokenize("Everyone has the right to education."),
    cloze.tokenize("No one shall be held in slavery or servitude."),
]


# --------------------------------------------------------------- section 1
def test_the_corpus_and_its_tokens():
    assert len(cloze.SENTENCES) == 16
    assert len(cloze.VOCAB) == 98 and cloze.VOCAB == sorted(set(cloze.VOCAB))
    assert cloze.DISPLAY in cloze.SENTENCES
    assert (
        " ".join(cloze.DISPLAY) == "all human beings are born free and equal in dignity and rights"
    )
    assert cloze.tokenize("Life, liberty -- and SECURITY.") == [
        "life",
        "liberty",
        "and",
        "security",
    ]
    assert cloze.MAX_LEN == 19


def test_encode_accepts_strings_and_token_lists():
    ids = cloze.encode("All human beings are born free and equal in dignity and rights.")
    assert ids == cloze.encode(cloze.DISPLAY)
    assert cloze.decode(ids) == cloze.DISPLAY
    assert cloze.decode(np.array(ids)) == cloze.DISPLAY
    assert cloze.decode([0, len(cloze.VOCAB) - 1]) == [cloze.VOCAB[0], cloze.VOCAB[-1]]


def test_unknown_words_are_named_and_the_vocabulary_is_pointed_to():
    with pytest.raises(ValueError, match="VOCAB") as info:
        cloze.encode("Everyone has the right to unicorns and dragons.")
    assert "'unicorns'" in str(info.value) and "'dragons'" in str(info.value)


@pytest.mark.parametrize("sentence", ["Everyone.", ["everyone"], []])
def test_a_sentence_needs_two_tokens(sentence):
    with pytest.raises(ValueError, match="attend to itself"):
        cloze.encode(sentence)


@pytest.mark.parametrize("ids", [[-1], [98], [3, 98]])
def test_decode_refuses_ids_outside_the_vocabulary(ids):
    with pytest.raises(ValueError, match="ids must hold integers between 0 and 97"):
        cloze.decode(ids)


@pytest.mark.parametrize("ids", [[1.0, 2.0], [True, False], ["all"]])
def test_decode_refuses_ids_that_are_not_integers(ids):
    with pytest.raises(TypeError, match="ids must hold integers"):
        cloze.decode(ids)


def test_decode_refuses_a_table_of_ids():
    with pytest.raises(ValueError, match="ids must be one-dimensional"):
        cloze.decode([[1, 2], [3, 4]])


def test_check_sentences_turns_strings_into_token_lists():
    got = cloze.check_sentences(["Everyone has the right to education.", ["no", "one"]])
    assert got == [["everyone", "has", "the", "right", "to", "education"], ["no", "one"]]
    with pytest.raises(TypeError, match="sentences must be a list"):
        cloze.check_sentences("everyone has the right")
    with pytest.raises(TypeError, match="sentences must be a list"):
        cloze.check_sentences(None)
    with pytest.raises(ValueError, match="at least one sentence"):
        cloze.check_sentences([])
    with pytest.raises(ValueError, match="VOCAB"):
        cloze.check_sentences([["no", "unicorns"]])


# --------------------------------------------------------------- section 2
def test_initial_weights_are_drawn_in_the_demos_order():
    state = np.random.RandomState(0)
    expected = [
        0.1 * state.randn(*shape) for shape in [(98, 24), (24, 24), (24, 24), (24, 24), (24, 98)]
    ]
    for query in cloze_head.QUERIES:
        params = cloze_head.Head(query).init(0)
        assert isinstance(params, Params)
        for name, want in zip(["E", "W_Q", "W_K", "W_V", "W_O"], expected):
            assert np.array_equal(params[name], want), (query, name)
    # a variant's extra array is drawn last, after the demo's five
    mask = cloze_head.Head("mask").init(0).mask_embedding
    np.testing.assert_array_equal(mask, 0.1 * state.randn(24))
    assert cloze_head.Head("position").init(0).positions.shape == (cloze.MAX_LEN, 24)
    assert list(cloze_head.Head("token").init(0)) == ["E", "W_Q", "W_K", "W_V", "W_O"]
    assert list(cloze_head.Head("mask").init(0))[-1] == "mask_embedding"
    assert cloze_head.Head("token").init(0).size == 98 * 24 * 2 + 3 * 24 * 24


@pytest.mark.parametrize("query", cloze_head.QUERIES)
def test_query_kind_reads_the_kind_back_from_the_parameters(query):
    assert cloze_head.query_kind(cloze_head.Head(query).init(3)) == query


def test_head_params_takes_a_training_result_or_params():
    params = cloze_head.Head().init(0)
    result = training.Trained(cloze_head.Head(), params, np.ones(1))
    assert cloze_head.head_params(result) is params and cloze_head.head_params(params) is params
    with pytest.raises(TypeError, match="model must be a trained head"):
        cloze_head.head_params(training.Trained("another model", params, np.ones(1)))
    with pytest.raises(TypeError, match="model must be a trained head"):
        cloze_head.head_params({"E": params.E})
    with pytest.raises(TypeError, match="inputs must be a Batch or a list of sentences"):
        HEAD.forward(params, 42)


def test_no_global_random_state_is_touched():
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    cloze_runs.train(seed=5, epochs=2, query="position")
    assert np.array_equal(np.random.get_state()[1], before)


def test_seed_zero_starts_at_the_demos_loss():
    result = cloze_runs.train(seed=0, epochs=1)
    assert round(float(result.curve[0]), 4) == 4.5846
    assert result.curve.shape == (1,)


@pytest.mark.parametrize("seed", [0, 3])
def test_vectorised_training_equals_the_loop_oracle(seed):
    curve, params = oracle.train(cloze.SENTENCES, seed=seed, epochs=80)
    result = cloze_runs.train(seed=seed, epochs=80)
    np.testing.assert_allclose(result.curve, curve, rtol=0, atol=1e-6)
    for name in oracle.NAMES:
        np.testing.assert_allclose(result.params[name], params[name], rtol=0, atol=1e-8)


def _random_entries(shape, rng, count):
    """All entries of a small array, else ``count`` random ones (flat indices)."""
    size = int(np.prod(shape))
    return np.arange(size) if size <= 600 else rng.choice(size, count, replace=False)


@pytest.mark.parametrize("query", cloze_head.QUERIES)
def test_backward_matches_finite_differences_for_every_array(query):
    batch = cloze.make_batch(SMALL)
    params = cloze_head.Head(query).init(7)
    for array in params.arrays().values():
        array *= 3.0  # larger weights: attention far from uniform
    grads = HEAD.summed_loss_and_grads(params, batch)[1]
    pick = np.random.RandomState(1)
    used = np.unique(batch.targets)
    assert list(grads) == list(params)
    for name, array in params.arrays().items():
        entries = _random_entries(array.shape, pick, 150)
        if name == "E":  # every number of the rows in use, plus random others
            rows = np.concatenate(
                [cloze.TOKEN_ID[w] * 24 + np.arange(24) for w in ("and", "all", "education")]
            )
            entries = np.union1d(entries, rows)
        probe = array.reshape(-1)[entries].copy()

        def loss(array=array, entries=entries, probe=probe):
            array.reshape(-1)[entries] = probe
            return HEAD.forward(params, batch).parts["loss"]  # the loss the page reports

        numeric = numeric_gradient(loss, probe)
        analytic = grads[name].reshape(-1)[entries]
        np.testing.assert_allclose(
            analytic, numeric, rtol=1e-5, atol=1e-7, err_msg=f"{query}: {name}"
        )
        assert np.abs(analytic).max() > 1e-3, f"{query}: {name} has no gradient to check"
    unused = np.setdiff1d(np.arange(len(cloze.VOCAB)), used)
    assert not grads.E[unused].any()


def _minus_log_true(params, batch):
    """-log p(true token) at every real position, computed here from the arrays, step by step."""
    root = np.sqrt(cloze_head.WIDTH)
    losses = []
    for ids, valid in zip(batch.ids, batch.valid):
        ids = ids[valid]
        x = params.E[ids]
        kind = cloze_head.query_kind(params)
        if kind == "token":
            q = x @ params.W_Q
        elif kind == "mask":
            q = np.tile(params.mask_embedding @ params.W_Q, (len(ids), 1))
        else:
            q = params.positions[: len(ids)] @ params.W_Q
        s = q @ (x @ params.W_K).T / root
        np.fill_diagonal(s, -np.inf)
        a = np.exp(s - s.max(axis=1, keepdims=True))
        a /= a.sum(axis=1, keepdims=True)
        scores = a @ (x @ params.W_V) @ params.W_O
        top = scores.max(axis=1)
        log_total = top + np.log(np.exp(scores - top[:, None]).sum(axis=1))
        losses.append(log_total - scores[np.arange(len(ids)), ids])
    return np.concatenate(losses)


@pytest.mark.parametrize("query", cloze_head.QUERIES)
def test_the_reported_loss_is_the_summed_minus_log_of_the_true_tokens(query):
    batch = cloze.make_batch(SMALL)
    params = cloze_head.Head(query).init(4)
    fwd = HEAD.forward(params, batch)
    rows = np.arange(batch.n_predicted)
    assert fwd.parts["loss"] == pytest.approx(
        -np.log(fwd.parts["probs"][rows, batch.targets]).sum(), rel=1e-12
    )
    assert fwd.parts["loss"] == pytest.approx(_minus_log_true(params, batch).sum(), rel=1e-12)
    loss, grads = HEAD.summed_loss_and_grads(params, batch)
    assert loss == fwd.parts["loss"]
    # Head, what the training loop calls: the mean per token, the gradient averaged over sentences
    mean, averaged = cloze_head.Head().loss_and_grads(params, batch)
    assert mean == pytest.approx(fwd.parts["loss"] / batch.n_predicted, rel=1e-15)
    for name in params:
        np.testing.assert_allclose(averaged[name], grads[name] / len(SMALL), rtol=1e-15)


def test_the_loss_stays_exact_where_the_true_token_is_almost_impossible():
    batch = cloze.make_batch([["everyone", "has", "the"]])
    params = cloze_head.Head().init(2)
    params.W_O *= 20000.0  # probabilities below 1e-350 underflow to 0: their log would be -inf
    fwd = HEAD.forward(params, batch)
    by_hand = _minus_log_true(params, batch)
    assert by_hand.max() > 800 and fwd.parts["probs"][np.arange(3), batch.targets].min() == 0.0
    assert np.isfinite(fwd.parts["loss"])
    assert fwd.parts["loss"] == pytest.approx(by_hand.sum(), rel=1e-12)


def test_finite_differences_of_the_reported_loss_on_a_tiny_batch():
    batch = cloze.make_batch([["everyone", "has", "the"], ["no", "one"]])
    params = cloze_head.Head("position").init(9)
    for array in params.values():
        array *= 5.0
    grads = HEAD.summed_loss_and_grads(params, batch)[1]
    for name in ("W_Q", "W_K", "W_V", "positions"):
        numeric = numeric_gradient(lambda: HEAD.forward(params, batch).parts["loss"], params[name])
        np.testing.assert_allclose(grads[name], numeric, rtol=1e-5, atol=1e-7, err_msg=name)
    rows = [cloze.TOKEN_ID[w] for w in ("everyone", "has", "the", "no", "one")]
    numeric = numeric_gradient(lambda: HEAD.forward(params, batch).parts["loss"], params.E)
    np.testing.assert_allclose(grads.E[rows], numeric[rows], rtol=1e-5, atol=1e-7)


def test_padding_does_not_change_a_sentence():
    params = cloze_head.Head("token").init(2)
    alone = HEAD.forward(params, cloze.make_batch([SMALL[1]]))
    padded = HEAD.forward(params, cloze.make_batch(SMALL))
    n = len(SMALL[1])
    np.testing.assert_allclose(padded.weights[1, :n, :n], alone.weights[0], atol=1e-15)
    assert not padded.weights[1, n:].any() and not padded.weights[1, :, n:].any()


@pytest.mark.parametrize("query, blind", [("token", False), ("mask", True), ("position", True)])
def test_only_the_token_query_sees_the_token_it_predicts(query, blind):
    params = cloze_head.Head(query).init(4)
    changed = list(cloze.DISPLAY)
    changed[5] = "slavery"  # "free" -> "slavery"
    before, after = (
        cloze_head.predict(params, cloze.DISPLAY)[5],
        cloze_head.predict(params, changed)[5],
    )
    assert np.allclose(before, after, rtol=0, atol=1e-15) == blind


# --------------------------------------------------------------- section 3
@pytest.fixture(scope="module")
def trained():
    return cloze_runs.train(seed=0, epochs=300)


def test_training_lowers_the_loss_and_reads_the_display_sentence(trained):
    assert trained.curve[-1] < trained.curve[0] - 3
    weights = cloze_head.attention_weights(trained, cloze.DISPLAY)
    assert weights.shape == (12, 12)
    assert np.all(np.diag(weights) == 0.0)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)
    probs = cloze_head.predict(trained, cloze.DISPLAY)
    assert probs.shape == (12, 98)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert (
        cloze_recall.top1_accuracy(trained)
        == cloze_recall.top1_accuracy(trained, cloze.SENTENCES)
        > 0.9
    )


def test_the_loss_curve_is_the_mean_loss_per_token_before_each_step():
    result = cloze_runs.train(seed=4, epochs=3, query="mask")
    batch = cloze.make_batch(cloze.SENTENCES)
    start = HEAD.forward(cloze_head.Head("mask").init(4), batch).parts["loss"] / batch.n_predicted
    assert result.curve[0] == pytest.approx(start, rel=1e-12)
    assert len(result.curve) == 3 and result.model.query == "mask"
    assert isinstance(result, training.Trained)  # the one shape of every training


def test_held_out_sentences_can_be_scored():
    fold = cloze.SENTENCES[:12]
    result = cloze_runs.train(seed=1, epochs=20, query="mask", sentences=fold)
    assert result.model.sentences == fold and result.model.query == "mask"
    held = cloze.SENTENCES[12:]
    # the share of held-out positions whose most probable token is the true one, counted here
    right = total = 0
    for tokens in held:
        probs = cloze_head.predict(result.params, tokens)
        right += sum(cloze.VOCAB[i] == w for i, w in zip(probs.argmax(axis=1), tokens))
        total += len(tokens)
    assert cloze_recall.top1_accuracy(result, held) == right / total
    assert cloze_recall.top1_accuracy(result) == cloze_recall.top1_accuracy(result.params, fold)
    with pytest.raises(ValueError, match="VOCAB"):
        cloze_recall.top1_accuracy(result, ["everyone has the right to cake"])


def test_the_progress_bar_leaves_the_numbers_alone(capsys):
    quiet = cloze_runs.train(seed=2, epochs=3)
    shown = cloze_runs.train(seed=2, epochs=3, progress=True)
    assert np.array_equal(quiet.curve, shown.curve)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"epochs": 0}, ValueError, "epochs must be an integer between 1 and 100000, got 0"),
        ({"epochs": 2.5}, TypeError, "epochs must be an integer"),
        ({"epochs": True}, TypeError, "epochs must be an integer"),
        (
            {"query": "keys"},
            ValueError,
            "query must be one of 'token', 'mask', 'position', got 'keys'",
        ),
        ({"seed": 1.5}, TypeError, "seed must be an integer"),
        ({"seed": "0"}, TypeError, "seed must be an integer"),
        ({"seed": -1}, ValueError, "seed must be an integer between 0 and"),
        ({"sentences": []}, ValueError, "at least one sentence"),
        ({"sentences": "all human beings"}, TypeError, "list of token lists"),
        ({"sentences": [["free"]]}, ValueError, "attend to itself"),
    ],
)
def test_bad_training_input_is_refused(kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        cloze_runs.train(**{"epochs": 1, **kwargs})


def test_loss_rows_keep_the_first_and_every_twentieth_iteration():
    rows = cloze_runs.loss_csv_rows(np.arange(4000.0))
    assert len(rows) == 201
    assert rows[:3] == [(1, 0.0), (20, 19.0), (40, 39.0)] and rows[-1] == (4000, 3999.0)
    with pytest.raises(ValueError, match="loss_curve must have 1 axes"):
        cloze_runs.loss_csv_rows(np.ones((2, 2)))


def test_csv_files(tmp_path):
    curve = np.linspace(4.5846, 0.01, 4000)
    result = training.Trained(cloze_head.Head(), cloze_head.Head().init(0), curve)
    loss_path, weights_path = cloze_runs.write_csvs(result, tmp_path / "out")
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
    np.testing.assert_allclose(table[:, 2], cloze_head.attention_weights(result).ravel(), atol=5e-7)
    with pytest.raises(TypeError, match="result must be a trained head"):
        cloze_runs.write_csvs(result.params, tmp_path)


# --------------------------------------------------------------- the nudge of section 4
def test_a_zero_nudge_changes_nothing_and_a_small_one_changes_the_curve():
    plain = cloze_runs.train(seed=0, epochs=30)
    zero = cloze_runs.train(seed=0, epochs=30, nudge=0.0)
    assert np.array_equal(plain.curve, zero.curve)
    for name, array in plain.params.arrays().items():
        assert np.array_equal(array, zero.params[name]), name
    nudged = cloze_runs.train(seed=0, epochs=30, nudge=1e-6)
    assert not np.array_equal(plain.curve, nudged.curve)
    assert abs(nudged.curve[0] - plain.curve[0]) < 1e-5  # a tiny push, not a new start


@pytest.mark.parametrize(
    "nudge, error, message",
    [
        (float("nan"), ValueError, "nudge must be a finite number"),
        (float("inf"), ValueError, "nudge must be a finite number"),
        ("1e-12", TypeError, "nudge must be a number"),
        (True, TypeError, "nudge must be a number"),
        (None, TypeError, "nudge must be a number"),
    ],
)
def test_a_bad_nudge_is_refused(nudge, error, message):
    with pytest.raises(error, match=message):
        cloze_runs.train(epochs=1, nudge=nudge)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: HEAD.forward(Params(), cloze.make_batch([cloze.DISPLAY])),
            ValueError,
            "params",
        ),
        (lambda: cloze.encode(None), TypeError, "sentence_or_tokens must be"),
        (lambda: cloze.encode([1, 2]), TypeError, "sentence_or_tokens must hold"),
        (
            lambda: cloze_runs.write_csvs(cloze_runs.train(epochs=1), None),
            TypeError,
            "directory must be",
        ),
        (lambda: cloze_runs.train(epochs=1, progress="yes"), TypeError, "progress must be"),
    ],
)
def test_part_two_names_what_it_refuses(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_a_remembered_training_still_checks_its_progress_flag():
    cloze_runs.train(epochs=1)
    with pytest.raises(TypeError, match="progress must be True or False"):
        cloze_runs.train(epochs=1, progress=0)
