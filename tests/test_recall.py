"""Part II, section 4: what the trained head recalls, its baselines, and Part I's removal test."""

import re

import numpy as np
import pytest

from attention_measured.book import cloze_explorers
from attention_measured.core import attention
from attention_measured.experiments import cloze_runs
from attention_measured.measures import cloze_recall, removal
from attention_measured.models import cloze_head
from attention_measured.tasks import cloze

HEAD = cloze_head.Head()  # every head's forward pass: its parameters say which query

SMALL = [
    cloze.DISPLAY,
    cloze.tokenize("Everyone has the right to education."),
    cloze.tokenize("No one shall be held in slavery or servitude."),
]


@pytest.fixture(scope="module")
def trained():
    return cloze_runs.train(seed=0, epochs=300)


def _spiky_curve():
    """A falling curve: a wobbling spike at iteration 101, a bump at 201, a spike from 301 on."""
    curve = np.geomspace(1.0, 1e-3, 400)
    best = curve[99]
    curve[100:103] = best * np.array([30.0, 8.0, 20.0])  # wobbles across 10x: still one spike
    curve[103:130] = best * np.linspace(5.0, 1.5, 27)  # back below 2x at iteration 126
    curve[200] = curve[199] * 5.0  # a bump, under 10x
    curve[300:] = curve[299] * 12.0  # climbs and never comes back
    return curve


def test_loss_spikes_counts_each_excursion_once_at_its_start():
    curve = _spiky_curve()
    spikes = cloze_recall.loss_spikes(curve)
    assert spikes.dtype.kind == "i" and spikes.tolist() == [101, 301]
    assert cloze_recall.loss_spikes(curve, factor=4.0, recovery=2.0).tolist() == [101, 201, 301]
    assert cloze_recall.loss_spikes(np.geomspace(1.0, 1e-3, 50)).size == 0
    assert cloze_recall.loss_spikes([1e-3, 5.0, 1.0]).tolist() == [
        2
    ]  # the first iteration never spikes
    assert cloze_recall.loss_spikes([7.0]).size == 0


@pytest.mark.parametrize(
    "curve, kwargs, error, message",
    [
        (np.ones((2, 3)), {}, ValueError, "loss_curve must have 1 axes"),
        ("1, 2", {}, TypeError, "loss_curve must be an array of numbers"),
        ([1.0, 0.0, 2.0], {}, ValueError, "loss_curve must hold positive numbers"),
        ([1.0, float("nan")], {}, ValueError, "loss_curve must hold finite numbers"),
        ([1.0, 2.0], {"factor": 2.0, "recovery": 2.0}, ValueError, "factor > recovery >= 1"),
        ([1.0, 2.0], {"recovery": 0.5}, ValueError, "factor > recovery >= 1"),
        ([1.0, 2.0], {"factor": "10"}, TypeError, "factor must be a number"),
        ([1.0, 2.0], {"recovery": float("inf")}, ValueError, "recovery must be a finite number"),
    ],
)
def test_loss_spikes_refuses_bad_input(curve, kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        cloze_recall.loss_spikes(curve, **kwargs)


def test_folds_hold_out_every_sentence_but_the_display_one_exactly_once():
    assert len(cloze_runs.FOLDS) == 5 and all(len(fold) == 3 for fold in cloze_runs.FOLDS)
    held = [i for fold in cloze_runs.FOLDS for i in fold]
    assert sorted(held) == list(range(1, 16))
    assert cloze.SENTENCES[cloze_runs.ALWAYS_TRAINED] == cloze.DISPLAY
    assert cloze_runs.ALWAYS_TRAINED not in held
    assert cloze_runs.FOLDS[0] == (1, 6, 11)  # start, middle and end of the corpus


# Worked by hand.  Counts: the 3; no, one, right 2; the rest 1.  Sentences holding
# "no": the first two; "shall": the first; "life": the third.
TINY_TRAINING = [
    ["no", "one", "shall", "be", "held"],
    ["no", "one", "has", "the", "right"],
    ["the", "right", "to", "life", "the"],
]


def test_the_baselines_on_a_case_worked_by_hand():
    assert cloze_recall.most_frequent_token(TINY_TRAINING) == "the"
    assert (
        cloze_recall.most_frequent_token([["no", "one"], ["one", "no"]]) == "no"
    )  # a tie: alphabet
    # position 0 ("no"): shall + life give 1 to nine tokens -> most frequent, "the";
    # position 1 ("shall"): no + life give 2 to no, one, the, right -> "the" (3 occurrences);
    # position 2 ("life"): no + shall give 3 to no and one (2 each) -> alphabet, "no".
    assert cloze_recall.cooccurrence_guesses(TINY_TRAINING, ["no", "shall", "life"]) == [
        "the",
        "the",
        "no",
    ]
    # nothing held out co-occurs with anything: every seen token scores 0, unseen ones never guessed
    assert cloze_recall.cooccurrence_guesses(TINY_TRAINING, ["education", "liberty"]) == [
        "the",
        "the",
    ]
    with pytest.raises(ValueError, match="VOCAB"):
        cloze_recall.cooccurrence_guesses(TINY_TRAINING, ["no", "unicorns"])
    with pytest.raises(ValueError, match="at least one sentence"):
        cloze_recall.most_frequent_token([])


def test_positional_guesses_by_hand():
    training = [["no", "one", "shall"], ["no", "one", "has"], ["everyone", "has", "the", "right"]]
    # position 0: "no" twice; 1: "one" twice; 2: "shall", "has" and "the" once each, and "has"
    # wins the tie by occurring twice overall; 3: "right"; 4: nobody that long, so the overall
    # favourite: "has", "no" and "one" occur twice, alphabetical "has"
    assert cloze_recall.positional_guesses(training, 5) == ["no", "one", "has", "right", "has"]
    assert cloze_recall.positional_guesses(training, 1) == ["no"]
    with pytest.raises(ValueError, match="length must be an integer of at least 1"):
        cloze_recall.positional_guesses(training, 0)
    with pytest.raises(TypeError, match="length must be an integer"):
        cloze_recall.positional_guesses(training, 2.0)


def test_swapped_queries_come_from_the_next_token_within_each_sentence():
    batch = cloze.make_batch([["everyone", "has", "the", "right"], ["no", "one", "shall"]])
    ids = {w: cloze.TOKEN_ID[w] for w in ["everyone", "has", "the", "right", "no", "one", "shall"]}
    expected_next = [
        [ids["has"], ids["the"], ids["right"], ids["everyone"]],
        [ids["one"], ids["shall"], ids["no"], 0],
    ]
    expected_prev = [
        [ids["right"], ids["everyone"], ids["has"], ids["the"]],
        [ids["shall"], ids["no"], ids["one"], 0],
    ]
    assert cloze_recall.swapped_query_ids(batch, "next").tolist() == expected_next
    assert cloze_recall.swapped_query_ids(batch, "previous").tolist() == expected_prev
    with pytest.raises(ValueError, match="unknown swap 'random'"):
        cloze_recall.swapped_query_ids(batch, "random")


def test_the_swap_only_moves_the_queries(trained):
    params = trained.params
    batch = cloze.make_batch(SMALL)
    plain = HEAD.forward(params, batch)
    same = HEAD.forward(
        params, batch, query_ids=batch.ids
    )  # the true tokens as query ids: no change
    np.testing.assert_allclose(same.parts["probs"], plain.parts["probs"], rtol=0, atol=1e-12)
    swapped = HEAD.forward(params, batch, query_ids=cloze_recall.swapped_query_ids(batch))
    for part in ("keys", "values"):
        assert np.array_equal(swapped.parts[part], plain.parts[part])
    want = float(np.mean(swapped.parts["probs"].argmax(axis=-1) == batch.targets))
    assert cloze_recall.swapped_top1(trained, SMALL) == want
    # the trained head names almost every token, and almost none once its query sees another token
    assert cloze_recall.top1_accuracy(trained) > 0.9 > 0.2 > cloze_recall.swapped_top1(trained)


def test_the_swap_is_refused_for_queries_that_never_read_their_token():
    for query in ("mask", "position"):
        params = cloze_head.Head(query).init(0)
        with pytest.raises(ValueError, match="never reads the token"):
            cloze_recall.swapped_top1(params, SMALL)
        batch = cloze.make_batch(SMALL)
        with pytest.raises(ValueError, match="no token to swap"):
            HEAD.forward(params, batch, query_ids=batch.ids)
    params, batch = cloze_head.Head().init(0), cloze.make_batch(SMALL)
    with pytest.raises(ValueError, match="shaped like the batch"):
        HEAD.forward(params, batch, query_ids=batch.ids[:, :2])
    with pytest.raises(ValueError, match="query_ids must hold integers between 0 and 97"):
        HEAD.forward(params, batch, query_ids=batch.ids + 200)
    with pytest.raises(ValueError, match="remembers its sentences"):
        cloze_recall.swapped_top1(params)


@pytest.mark.parametrize("query", cloze_head.QUERIES)
def test_removal_effects_match_a_direct_recomputation(trained, query):
    params = trained.params if query == "token" else cloze_head.Head(query).init(5)
    p, p_without = HEAD.removal_effects(params, cloze.DISPLAY)
    assert p.shape == (12,) and p_without.shape == (12, 12)
    rows = np.arange(12)
    np.testing.assert_array_equal(p_without[rows, rows], p)  # no query attends to itself
    ids = np.array(cloze.encode(cloze.DISPLAY))
    fwd = HEAD.forward(params, cloze.make_batch([cloze.DISPLAY]))
    np.testing.assert_array_equal(p, fwd.parts["probs"][rows, ids])
    effects = removal.effects(p, p_without)
    assert np.all(np.diag(effects) == 0.0)
    scores = fwd.parts["queries"][0] @ fwd.parts["keys"][0].T / np.sqrt(cloze_head.WIDTH)
    for i, j in [(3, 7), (6, 10), (11, 0)]:
        allowed = np.ones(12, dtype=bool)
        allowed[[i, j]] = False
        weights = attention.softmax(scores[i], allowed)
        by_hand = attention.softmax(weights @ fwd.parts["values"][0] @ params.W_O)[ids[i]]
        assert p_without[i, j] == pytest.approx(by_hand, rel=1e-10, abs=1e-15)
        assert effects[i, j] == pytest.approx(abs(by_hand - p[i]), abs=1e-12)


@pytest.mark.parametrize("tokens", [cloze.DISPLAY, ["everyone", "has"]])
def test_the_analytic_removal_test_equals_the_generic_one(trained, tokens):
    batch = cloze.make_batch([tokens])
    n = len(tokens)

    def output(keep=None):  # the probability of each position's true token
        probs = HEAD.forward(trained.params, batch, keep=keep).parts["probs"]
        return probs[np.arange(n), batch.targets]

    without = np.empty((n, n))
    for t in range(n):  # key t dropped from every row: each position reads its own row
        keep = np.ones((1, n, n), dtype=bool)
        keep[..., t] = False
        without[:, t] = output(keep)
    generic = output(), without
    for a, b in zip(HEAD.removal_effects(trained.params, tokens), generic):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-15)
    with pytest.raises(TypeError, match="keep must be boolean"):
        HEAD.forward(trained.params, batch, keep=np.ones((1, n, n)))


def test_removing_the_only_key_leaves_a_uniform_guess(trained):
    tokens = ["everyone", "has"]
    p, p_without = HEAD.removal_effects(trained.params, tokens)
    p_true = cloze_head.predict(trained, tokens)[[0, 1], cloze.encode(tokens)]
    np.testing.assert_allclose(p, p_true, rtol=1e-15)
    np.testing.assert_allclose(p_without, [[p_true[0], 1 / 98], [1 / 98, p_true[1]]], atol=1e-15)
    with pytest.raises(TypeError, match="params must be the model's Params"):
        HEAD.removal_effects("model", tokens)
    with pytest.raises(ValueError, match="VOCAB"):
        HEAD.removal_effects(trained.params, ["everyone", "unicorns"])


def test_sentence_report_reads_the_removal_effect_of_the_heaviest_key():
    report = cloze_explorers.sentence_report(15)  # "everyone has the right to education"
    run = cloze_runs.train(0)
    tokens = report["tokens"]
    assert tokens == cloze.SENTENCES[15]
    p, p_without = HEAD.removal_effects(run.params, tokens)
    rows = np.arange(len(tokens))
    np.testing.assert_array_equal(report["heaviest"], report["weights"].argmax(axis=1))
    np.testing.assert_allclose(report["effect"], np.abs(p_without[rows, report["heaviest"]] - p))
    np.testing.assert_allclose(report["p_true"], p, rtol=1e-12)


@pytest.fixture(scope="module")
def heldout():
    return cloze_runs.heldout_experiment(seed=1, epochs=3, queries=("token", "mask"))


def test_heldout_experiment_scores_every_held_out_position(heldout):
    assert heldout["folds"] == cloze_runs.FOLDS and heldout["queries"] == ("token", "mask")
    lengths = [sum(len(cloze.SENTENCES[i]) for i in fold) for fold in cloze_runs.FOLDS]
    assert heldout["positions"].tolist() == lengths
    assert (
        set(heldout["per_fold"])
        == set(heldout["mean"])
        == {"token", "mask", "token_swapped", "most_frequent", "positional", "cooccurrence"}
    )
    for method, per_fold in heldout["per_fold"].items():
        assert per_fold.shape == (5,), method
        hits = per_fold * heldout["positions"]  # a count of positions right in each fold
        np.testing.assert_allclose(hits, np.round(hits), rtol=0, atol=1e-9, err_msg=method)
        pooled = float(per_fold @ heldout["positions"] / sum(lengths))
        assert heldout["mean"][method] == pytest.approx(pooled)
    # fold 2 by hand: the same training, the same scores
    fold = cloze_runs.FOLDS[2]
    training = [s for i, s in enumerate(cloze.SENTENCES) if i not in fold]
    held = [cloze.SENTENCES[i] for i in fold]
    result = cloze_runs.train(seed=1, epochs=3, query="token", sentences=training)
    assert heldout["per_fold"]["token"][2] == cloze_recall.top1_accuracy(result, held)
    assert heldout["per_fold"]["token_swapped"][2] == cloze_recall.swapped_top1(result, held)
    frequent = cloze_recall.most_frequent_token(training)
    targets = [w for s in held for w in s]
    assert heldout["per_fold"]["most_frequent"][2] == np.mean([w == frequent for w in targets])
    guesses = [w for s in held for w in cloze_recall.cooccurrence_guesses(training, s)]
    assert heldout["per_fold"]["cooccurrence"][2] == np.mean(np.array(guesses) == np.array(targets))
    by_position = [w for s in held for w in cloze_recall.positional_guesses(training, len(s))]
    assert heldout["per_fold"]["positional"][2] == np.mean(
        np.array(by_position) == np.array(targets)
    )
    seen = {w for s in training for w in s}
    assert heldout["unseen_share"][2] == np.mean([w not in seen for w in targets])
    # pooled over the folds, counted here sentence by sentence
    unseen = total = 0
    for f in cloze_runs.FOLDS:
        known = {w for i, s in enumerate(cloze.SENTENCES) if i not in f for w in s}
        unseen += sum(w not in known for i in f for w in cloze.SENTENCES[i])
        total += sum(len(cloze.SENTENCES[i]) for i in f)
    assert heldout["unseen_share_mean"] == pytest.approx(unseen / total, rel=1e-15)


def test_heldout_experiment_without_the_token_query_has_no_swap(capsys):
    quiet = cloze_runs.heldout_experiment(seed=2, epochs=1, queries=("mask",))
    shown = cloze_runs.heldout_experiment(seed=2, epochs=1, queries=("mask",), progress=True)
    assert set(quiet["per_fold"]) == {"mask", "most_frequent", "positional", "cooccurrence"}
    for method in quiet["per_fold"]:
        assert np.array_equal(quiet["per_fold"][method], shown["per_fold"][method])


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"queries": ()}, ValueError, "each once"),
        ({"queries": ("token", "token")}, ValueError, "each once"),
        ({"queries": "token"}, ValueError, "tuple of query names"),
        ({"queries": ("keys",)}, ValueError, "query must be one of"),
        ({"progress": "yes"}, TypeError, "progress must be True or False"),
        ({"epochs": 0}, ValueError, "epochs must be an integer of at least 1"),
        ({"seed": -1}, ValueError, "seed must be an integer between 0 and"),
        ({"nudge": float("nan")}, ValueError, "nudge must be a finite number"),
    ],
)
def test_heldout_experiment_refuses_bad_input(kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        cloze_runs.heldout_experiment(**{"epochs": 1, **kwargs})


def test_the_bounds_hold_with_a_margin_over_every_stored_run():
    stored = cloze_runs.stored_bounds()
    grid = {(q, n) for q in cloze_runs.BOUND_QUERIES for n in cloze_runs.BOUND_NUDGES}
    assert len(stored["runs"]) == 2 and stored["arithmetic"].keys() == stored["runs"].keys()
    for runs in stored["runs"].values():
        assert {(r["query"], r["nudge"]) for r in runs} == grid and len(runs) == len(grid)
    assert stored["runs made"] == 2 * len(grid)
    assert stored["worst final loss"] <= cloze_runs.LOSS_CEILING - 0.1
    assert stored["worst recall"] >= cloze_runs.RECALL_FLOOR + 0.05


def test_a_bound_run_is_the_trained_heads_own_loss_and_recall():
    (run,) = cloze_runs.bound_runs(["token"], [0.0])
    trained = cloze_runs.train(seed=0)
    assert run == {
        "query": "token",
        "nudge": 0.0,
        "final loss": float(trained.curve[-1]),
        "recall": cloze_recall.top1_accuracy(trained),
    }


def test_bound_runs_refuse_what_they_cannot_run():
    with pytest.raises(ValueError, match="queries must hold at least one entry"):
        cloze_runs.bound_runs([], [0.0])
    with pytest.raises(ValueError):
        cloze_runs.bound_runs(["a query"], [0.0])
