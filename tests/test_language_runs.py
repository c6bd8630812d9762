"""Part VII's training: a two-layer attention-only model grows an induction circuit on the
copying task, and removing its heads shows which carry the copying."""

import numpy as np
import pytest

from attention_measured.experiments import language_runs


@pytest.fixture(scope="module")
def trained():
    return language_runs.train(0)


def test_a_previous_token_head_and_induction_heads_form_and_the_repeat_is_predicted(trained):
    run, history = trained
    assert history.steps[0] == 0 and history.steps[-1] == language_runs.STEPS
    assert history.repeated[0] > 3.0 and history.repeated[-1] < 1.0
    # the first half is random tokens: nothing to learn there beyond the tokens' frequencies
    assert history.first_half[-1] > np.log(language_runs.VOCABULARY) - 0.5
    previous, induction = history.previous[-1], history.induction[-1]
    assert previous[0].max() > 0.9 and induction[1].max() > 0.5
    # the phase change: the repeat's loss falls with the previous-token head's rise
    start = np.argmax(history.previous[:, 0].max(axis=1) > 0.5)
    assert 0 < start < len(history.steps) - 1
    assert history.repeated[start - 1] > 2.0


def test_removing_the_previous_token_head_undoes_the_copying(trained):
    run, history = trained
    head = int(np.argmax(history.previous[-1][0]))
    whole = language_runs.measure(run.model, run.params)
    without = language_runs.measure(run.model, run.params, ablate=[(0, head)])
    other = language_runs.measure(run.model, run.params, ablate=[(0, 1 - head)])
    assert without["repeated"] > whole["repeated"] + 1.5
    assert other["repeated"] < whole["repeated"] + 0.5
    both = language_runs.measure(run.model, run.params, ablate=[(1, 0), (1, 1)])
    assert both["repeated"] > 3.0


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="positions"):
        language_runs.train(0, positions="absolute")
    with pytest.raises(ValueError, match="steps"):
        language_runs.train(0, steps=0)
    with pytest.raises(TypeError, match="model"):
        language_runs.measure(None, None)


def test_record_scores_given_losses_and_weights_as_measure_does_and_refuses_bad_shapes(trained):
    run, _ = trained
    data = language_runs.held_out()
    losses = run.model.losses(run.params, data.tokens)
    weights = run.model.forward(run.params, data.tokens).parts["weights"]
    mine = language_runs.record(losses, weights, data)
    theirs = language_runs.measure(run.model, run.params)
    assert mine.keys() == theirs.keys()
    for key in mine:
        np.testing.assert_array_equal(mine[key], theirs[key])
    # the repeated stretch's loss is read where data.repeated says, not elsewhere
    shifted = language_runs.record(np.roll(losses, 5, axis=1), weights, data)
    assert shifted["repeated"] != mine["repeated"]
    with pytest.raises(ValueError, match="losses"):
        language_runs.record(losses[:, 1:], weights, data)
    with pytest.raises(ValueError, match="weights"):
        language_runs.record(losses, [w[:, :, 1:] for w in weights], data)
    with pytest.raises(TypeError, match="data"):
        language_runs.record(losses, weights, data.tokens)


def test_the_copying_carries_at_the_training_length_and_carried_refuses_bad_lengths(trained):
    run, _ = trained
    at = language_runs.carried(run, [language_runs.LENGTH], n=64)
    assert at.shape == (1,) and at[0] > 0.8
    for bad, message in [
        ([language_runs.CONTEXT + 1], "lengths"),
        ([3], "lengths"),
        ("32", "lengths must be a list"),
    ]:
        with pytest.raises((ValueError, TypeError), match=message):
            language_runs.carried(run, bad)
    with pytest.raises(TypeError, match="run must be"):
        language_runs.carried(run.params, [32])


def test_learned_positions_past_the_training_length_keep_their_first_draws():
    run, _ = language_runs.train(0, positions="learned", steps=3)
    first = run.model.init(0)["positions"]
    table = run.params["positions"]
    assert table.shape == (language_runs.CONTEXT, run.model.width)
    np.testing.assert_array_equal(table[language_runs.LENGTH :], first[language_runs.LENGTH :])
    assert not np.allclose(table[: language_runs.LENGTH], first[: language_runs.LENGTH])


def test_a_model_trained_with_a_start_token_reads_it_and_a_null_key_leaves_weight_unspent():
    run, history = language_runs.train(0, start=True, null_key=True, steps=2)
    assert run.model.vocabulary == language_runs.VOCABULARY + 1 and run.model.null_key
    data = language_runs.held_out(start=True)
    assert (data.tokens[:, 0] == language_runs.START).all()
    assert data.tokens.shape[1] == language_runs.LENGTH
    weights = run.model.forward(run.params, data.tokens).parts["weights"]
    assert (weights[0].sum(axis=-1) < 1).all()  # the null key takes a share of every row
    assert history.on_first.shape == (2, 2, 2)
