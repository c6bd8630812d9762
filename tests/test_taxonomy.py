import numpy as np
import pytest
from gradcheck import numeric_gradient

from attention_measured import taxonomy


def check_model_gradients(model, p, loss_and_grads):
    _, grads = loss_and_grads()
    assert set(grads) == set(p)
    for k in p:
        numeric = numeric_gradient(lambda: loss_and_grads()[0], p[k])
        np.testing.assert_allclose(grads[k], numeric, atol=1e-7, err_msg=k)


@pytest.mark.parametrize(
    "flavour,encoder,loss",
    [
        ("feed-forward", "linear", "bce"),
        ("feed-forward, bias per position", "tanh", "mse"),
        ("context vector", "tanh", "bce"),
        ("additive", "linear", "mse"),
        ("general", "linear", "bce"),
        ("location", "tanh", "bce"),
        ("local-p (general)", "linear", "bce"),
        ("mean pooling", "tanh", "mse"),
    ],
)
def test_reader_gradients(flavour, encoder, loss):
    data = taxonomy.addition_problem(n=4, steps=6, seed=1)
    model = taxonomy.Reader(flavour, steps=6, encoder=encoder, loss=loss)
    p = model.init(seed=2)
    targets = data.targets if loss == "mse" else (data.targets > 0.5).astype(float)
    check_model_gradients(model, p, lambda: model.loss_and_grads(p, data.inputs, targets))


def test_hierarchical_gradients():
    docs = taxonomy.documents(n=3, sentences=2, words=3, vocabulary=5, seed=0)
    model = taxonomy.Hierarchical(vocabulary=5, hidden=3, units=2)
    p = model.init(seed=1)
    check_model_gradients(model, p, lambda: model.loss_and_grads(p, docs.tokens, docs.labels))


@pytest.mark.parametrize(
    "flavour", ["dot", "additive", "location", "local-m (general)", "local-p (general)"]
)
def test_aligner_gradients(flavour):
    tokens = taxonomy.reversal(n=3, length=4, vocabulary=5, seed=0)
    model = taxonomy.Aligner(flavour, vocabulary=5, length=4, hidden=3)
    p = model.init(seed=1)
    if flavour.startswith("local-p"):
        p["lp_v"] *= 0.2
    check_model_gradients(model, p, lambda: model.loss_and_grads(p, tokens))


def test_hard_attention_gradient_is_unbiased_but_noisy():
    tokens = taxonomy.reversal(n=20, length=4, vocabulary=5, seed=0)
    model = taxonomy.Aligner("general", vocabulary=5, length=4, hidden=3, hard=True)
    p = model.init(seed=1)
    noise = taxonomy.gradient_noise(model, p, tokens, draws=4000)
    assert noise["bias"] < 0.1 < 1 < noise["relative_variance"]


def test_hard_attention_readout_gradients_match_finite_differences_for_fixed_draws():
    # the draws do not depend on the readout, so with the same RandomState its gradient is exact
    tokens = taxonomy.reversal(n=3, length=4, vocabulary=5, seed=0)
    model = taxonomy.Aligner("dot", vocabulary=5, length=4, hidden=3, hard=True)
    p = model.init(seed=1)
    _, grads = model.loss_and_grads(p, tokens, np.random.RandomState(5))
    for k in ("out_W", "out_b"):
        numeric = numeric_gradient(
            lambda: model.loss_and_grads(p, tokens, np.random.RandomState(5))[0], p[k]
        )
        np.testing.assert_allclose(grads[k], numeric, atol=1e-7, err_msg=k)


def test_tasks_are_what_they_say():
    data = taxonomy.addition_problem(n=50, steps=10, seed=0)
    values, flags = data.inputs[..., 0], data.inputs[..., 1]
    assert (
        np.all(flags.sum(1) == 2)
        and np.all(data.marked[:, 0] < 5)
        and np.all(data.marked[:, 1] >= 5)
    )
    np.testing.assert_allclose(data.targets, 0.5 + (values * flags).sum(1) / 4)
    docs = taxonomy.documents(n=40, seed=0)
    triggers = (docs.tokens < 2).sum(axis=(1, 2))
    assert np.all(triggers == 1)
    assert np.all(
        docs.tokens[np.arange(40), docs.trigger[:, 0], docs.trigger[:, 1]] == 1 - docs.labels
    )
    train, same, moved = taxonomy.shifted_lesson_data(6)
    assert train.marked.max() <= 6 and same.marked.max() <= 6 and moved.marked.min() >= 7
    assert len(same) + len(moved) == 180


def test_bad_arguments():
    with pytest.raises(ValueError, match="encoder"):
        taxonomy.Reader("dot", encoder="relu")
    with pytest.raises(ValueError, match="inputs must have shape"):
        taxonomy.Reader("dot").forward(taxonomy.Reader("dot").init(), np.zeros((2, 12, 3)))
    with pytest.raises(ValueError, match="steps"):
        taxonomy.addition_problem(steps=1)
    with pytest.raises(ValueError, match="later steps"):
        taxonomy.shifted_lesson_data(11)
    with pytest.raises(ValueError, match="ids below"):
        taxonomy.Aligner("dot", vocabulary=3, length=4).forward(
            taxonomy.Aligner("dot", 3, 4).init(), np.full((1, 4), 3)
        )
    with pytest.raises(ValueError, match="hard=True"):
        taxonomy.gradient_noise(taxonomy.Aligner("dot"), None, None)
