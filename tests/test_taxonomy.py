import numpy as np
import pytest
from gradcheck import check_model_gradients, numeric_gradient

from attention_measured.book import flavour_explorers
from attention_measured.core import training
from attention_measured.experiments import flavour_runs, scaling_runs
from attention_measured.measures import markers, removal
from attention_measured.models import (
    aligner,
    heads,
    hierarchical,
    memory_network,
    order_reader,
    reader,
)
from attention_measured.tasks import (
    addition,
    documents,
    marked_step,
    order,
    reversal,
    stories,
    two_patterns,
)


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
    data = addition.addition_problem(n=4, steps=6, seed=1)
    model = reader.Reader(flavour, steps=6, encoder=encoder, loss=loss)
    p = model.init(seed=2)
    targets = data.targets if loss == "mse" else (data.targets > 0.5).astype(float)
    check_model_gradients(p, lambda: model.loss_and_grads(p, data.inputs, targets))


def test_hierarchical_gradients():
    docs = documents.documents(n=3, sentences=2, words=3, vocabulary=5, seed=0)
    model = hierarchical.Hierarchical(vocabulary=5, hidden=3, units=2)
    p = model.init(seed=1)
    check_model_gradients(p, lambda: model.loss_and_grads(p, docs.tokens, docs.labels))


@pytest.mark.parametrize(
    "flavour", ["dot", "additive", "location", "local-m (general)", "local-p (general)"]
)
def test_aligner_gradients(flavour):
    tokens = reversal.reversal(n=3, length=4, vocabulary=5, seed=0)
    model = aligner.Aligner(flavour, vocabulary=5, length=4, hidden=3)
    p = model.init(seed=1)
    if flavour.startswith("local-p"):
        p["lp_v"] *= 0.2
    check_model_gradients(p, lambda: model.loss_and_grads(p, tokens))


def test_hard_attention_gradient_is_unbiased_but_noisy():
    tokens = reversal.reversal(n=20, length=4, vocabulary=5, seed=0)
    model = aligner.Aligner("general", vocabulary=5, length=4, hidden=3, hard=True)
    p = model.init(seed=1)
    noise = aligner.gradient_noise(model, p, tokens, draws=4000)
    assert noise["bias"] < 0.1 < 1 < noise["relative_variance"]


def test_hard_attention_readout_gradients_match_finite_differences_for_fixed_draws():
    # the draws do not depend on the readout, so with the same RandomState its gradient is exact
    tokens = reversal.reversal(n=3, length=4, vocabulary=5, seed=0)
    model = aligner.Aligner("dot", vocabulary=5, length=4, hidden=3, hard=True)
    p = model.init(seed=1)
    _, grads = model.loss_and_grads(p, tokens, np.random.RandomState(5))
    for k in ("out_W", "out_b"):
        numeric = numeric_gradient(
            lambda: model.loss_and_grads(p, tokens, np.random.RandomState(5))[0], p[k]
        )
        np.testing.assert_allclose(grads[k], numeric, atol=1e-7, err_msg=k)


def test_tasks_are_what_they_say():
    data = addition.addition_problem(n=50, steps=10, seed=0)
    values, flags = data.inputs[..., 0], data.inputs[..., 1]
    assert (
        np.all(flags.sum(1) == 2)
        and np.all(data.marked[:, 0] < 5)
        and np.all(data.marked[:, 1] >= 5)
    )
    np.testing.assert_allclose(data.targets, 0.5 + (values * flags).sum(1) / 4)
    docs = documents.documents(n=40, seed=0)
    triggers = (docs.tokens < 2).sum(axis=(1, 2))
    assert np.all(triggers == 1)
    assert np.all(
        docs.tokens[np.arange(40), docs.trigger[:, 0], docs.trigger[:, 1]] == 1 - docs.labels
    )
    train, same, moved = marked_step.shifted_lesson_data(6)
    assert train.marked.max() <= 6 and same.marked.max() <= 6 and moved.marked.min() >= 7
    assert len(same) + len(moved) == 180


def test_bad_arguments():
    with pytest.raises(ValueError, match="encoder"):
        reader.Reader("dot", encoder="relu")
    with pytest.raises(ValueError, match="inputs must have shape"):
        reader.Reader("dot").forward(reader.Reader("dot").init(), np.zeros((2, 12, 3)))
    with pytest.raises(ValueError, match="steps"):
        addition.addition_problem(steps=1)
    with pytest.raises(ValueError, match="later steps"):
        marked_step.shifted_lesson_data(11)
    model = aligner.Aligner("dot", vocabulary=3, length=4)
    with pytest.raises(ValueError, match="tokens must hold integers between 0 and 2"):
        model.forward(model.init(), np.full((1, 4), 3))
    with pytest.raises(ValueError, match=r"tokens must be token ids shaped \(any, 4\)"):
        model.forward(model.init(), np.zeros((1, 5), dtype=int))
    with pytest.raises(TypeError, match="tokens must hold integers"):
        model.forward(model.init(), np.zeros((1, 4)))
    with pytest.raises(ValueError, match="hard=True"):
        aligner.gradient_noise(aligner.Aligner("dot"), None, None)


def test_expected_loss_gradient_is_the_derivative_of_the_expected_loss():
    tokens = reversal.reversal(n=3, length=4, vocabulary=5, seed=0)
    model = aligner.Aligner("general", vocabulary=5, length=4, hidden=3, hard=True)
    p = model.init(seed=1)
    for k in ("queries", "gen_W"):
        p[k] = p[k] * 2.0  # weights far from uniform
    exact, loss_k = model.expected_loss_gradient(p, tokens)
    n, L = tokens.shape
    # everything written out here: hidden states, scores, and the loss of output i copying step k
    h = p["embedding"][tokens] + p["positions"]  # (N, L, D)
    scores = np.einsum("is,sd,nkd->nik", p["queries"], p["gen_W"], h)
    np.testing.assert_allclose(
        model.forward(p, tokens).parts["attention"].scores, scores, rtol=1e-12
    )
    targets = tokens[:, ::-1]
    copy_loss = np.empty((n, L, L))
    for a in range(n):
        for k in range(L):
            z = h[a, k] @ p["out_W"].T + p["out_b"]
            log_total = z.max() + np.log(np.exp(z - z.max()).sum())
            for i in range(L):
                copy_loss[a, i, k] = log_total - z[targets[a, i]]
    np.testing.assert_allclose(loss_k, copy_loss, rtol=1e-12)

    def expected_loss():  # the mean over outputs of sum_k a_k loss_k, a = softmax(scores)
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return float(((e / e.sum(axis=-1, keepdims=True)) * copy_loss).sum(axis=-1).mean())

    numeric = numeric_gradient(expected_loss, scores)
    assert exact.shape == (n, L, L) and np.abs(numeric).max() > 1e-3
    np.testing.assert_allclose(exact, numeric, atol=1e-9)


@pytest.mark.parametrize("loss", ["bce", "mse"])
def test_removal_effects_drop_one_step_and_renormalise_the_rest(loss):
    data = addition.addition_problem(n=5, steps=6, seed=3)
    model = reader.Reader("general", steps=6, loss=loss)
    p = model.init(seed=4)
    p["query"] = p["query"] * 3.0
    p_all, p_without = removal.removal_effects(model, p, data.inputs)
    assert p_all.shape == (5,) and p_without.shape == (5, 6)
    h = data.inputs @ p["enc_E"].T + p["enc_c"]  # the linear encoder, written out
    scores = np.einsum("s,sd,ntd->nt", p["query"], p["gen_W"], h)
    link = (lambda z: 1 / (1 + np.exp(-z))) if loss == "bce" else (lambda z: z)
    for i in range(5):
        w = np.exp(scores[i] - scores[i].max())
        assert p_all[i] == pytest.approx(link((w / w.sum()) @ h[i] @ p["readout"] + p["bias"]))
        for t in range(6):
            kept = np.delete(w, t) / np.delete(w, t).sum()
            out = link(kept @ np.delete(h[i], t, axis=0) @ p["readout"] + p["bias"])
            assert p_without[i, t] == pytest.approx(out, rel=1e-10, abs=1e-15)


def test_the_removal_test_reads_one_number_per_example_of_any_model():
    model = reader.Reader("dot")
    p = model.init(0)
    with pytest.raises(TypeError, match="model must follow the book's protocol"):
        removal.removal_effects((model, p), p, np.zeros((2, 12, 2)))
    with pytest.raises(ValueError, match="the removal test reads one number per example"):
        removal.removal_effects(
            aligner.Aligner("dot"), aligner.Aligner("dot").init(0), np.zeros((2, 8), int)
        )
    with pytest.raises(ValueError, match="inputs must have shape"):
        removal.removal_effects(model, p, np.zeros((2, 12, 3)))


def test_reader_run_is_a_trained_model_that_measure_reads():
    run = flavour_runs.reader_run("dot", 0)
    assert isinstance(run, training.Trained) and run.model.flavour.name == "dot"
    heldout = marked_step.lesson_data()[1]
    result = markers.measure(run.model, run.params, heldout)
    assert result == flavour_runs.reader_measures("dot", 0)
    # the accuracy of the trained model, counted here
    prob = run.model.predict(run.params, heldout.inputs)
    assert result["accuracy"] == np.mean((prob > 0.5) == (heldout.labels == 1))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: flavour_runs.reader_run("dot", -1),
            ValueError,
            "seed must be an integer between 0",
        ),
        (lambda: flavour_runs.reader_run("dot", 1.5), TypeError, "seed must be an integer"),
        (lambda: flavour_runs.reader_run("cosine", 0), ValueError, "flavour must be one of"),
        (
            lambda: training.trained(
                reader.Reader("dot", steps=4), 1.5, np.zeros((2, 4, 2)), np.zeros(2), 1, 0.05
            ),
            TypeError,
            "seed must be an integer",
        ),
        (lambda: reader.Reader(3), TypeError, "flavour must be a flavour's name"),
        (lambda: reader.Reader("dot", hidden=0), ValueError, "hidden"),
        (lambda: aligner.Aligner("dot", hard=1), TypeError, "hard must be True or False"),
    ],
)
def test_part_three_refuses_bad_seeds_and_settings(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda seed: addition.addition_problem(10, 5, seed=seed),
        lambda seed: documents.documents(seed=seed),
        lambda seed: reversal.reversal(5, seed=seed),
        lambda seed: two_patterns.two_patterns(10, seed=seed),
        lambda seed: order.order_task(10, seed=seed),
        lambda seed: scaling_runs.scaling_at_init(seed=seed),
        lambda seed: stories.stories(5, seed=seed),
        lambda seed: reader.Reader("dot").init(seed),
        lambda seed: hierarchical.Hierarchical().init(seed),
        lambda seed: aligner.Aligner("general").init(seed),
        lambda seed: heads.HeadsReader(2).init(seed),
        lambda seed: order_reader.OrderReader("learned").init(seed),
        lambda seed: memory_network.MemoryNetwork().init(seed),
    ],
)
def test_part_three_generators_and_initialisers_refuse_a_seed_that_is_not_an_integer(call):
    # None would draw fresh randomness from the operating system: a page that could not be rerun
    for bad in (None, 1.5, "0"):
        with pytest.raises(TypeError, match="seed must be an integer"):
            call(bad)
    with pytest.raises(ValueError, match="seed must be an integer between 0 and"):
        call(-1)


def test_a_reader_takes_part_fives_changes():
    run = flavour_runs.reader_run("general", 0)
    x = marked_step.lesson_data()[1].inputs[:20]
    own = run.model.forward(run.params, x)
    weights = own.weights
    same = run.model.forward(run.params, x, weights=weights).output
    np.testing.assert_allclose(same, own.output, rtol=1e-10, atol=1e-12)
    scale = np.ones(x.shape[:2])
    scale[:, 3] = 0.5
    halved = x.copy()
    halved[:, 3] *= 0.5
    np.testing.assert_allclose(
        run.model.forward(run.params, x, scale=scale).output,
        run.model.forward(run.params, halved).output,
    )
    with pytest.raises(TypeError, match="keep must be boolean"):
        run.model.forward(run.params, x, keep=np.ones(x.shape[:2]))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: reader.Reader("multiplicative"), ValueError, "flavour must be one of"),
        (lambda: aligner.Aligner("nearest"), ValueError, "flavour must be one of"),
        (
            lambda: aligner.gradient_noise("hard", {}, np.zeros((2, 8), int)),
            TypeError,
            "model must be an Aligner",
        ),
        (lambda: removal.removal_effects("reader", {}, np.zeros((2, 12, 2))), TypeError, "model"),
        (lambda: markers.measure("reader", {}, np.zeros((2, 12, 2))), TypeError, "model"),
        (lambda: flavour_explorers.flavour_report("dot", seeds=[]), ValueError, "seeds must be"),
        (lambda: flavour_runs.side_by_side("dot"), TypeError, "flavours must be"),
    ],
)
def test_part_three_names_the_model_and_the_flavour_it_refuses(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_an_aligner_checks_its_rng_and_baseline():
    model = aligner.Aligner("dot", hard=True)
    p, tokens = model.init(0), np.zeros((2, 8), int)
    with pytest.raises(TypeError, match="rng must be a numpy RandomState"):
        model.loss_and_grads(p, tokens, rng="seed 0")
    with pytest.raises(TypeError, match="baseline must be a number"):
        model.loss_and_grads(p, tokens, rng=np.random.RandomState(0), baseline="0.5")
