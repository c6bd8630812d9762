"""Bad input, as properties: whatever wrong value a reader types into a public function the
pages call, the function answers at once with a TypeError or ValueError naming the argument.

Hypothesis draws the wrong values (any text, any integer out of range, any fraction, NaN,
infinity, None, True for a number, "False" for a flag); each function is called with one
argument replaced and the rest valid.  A missing check shows as a hang, a result, or an error
from deep inside numpy, each a failure here.  tools/probe.py surveys the whole public surface the
same way, with a fixed list of values; these are the properties that must hold.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_measured.book import plots
from attention_measured.core import checks, training
from attention_measured.experiments import cloze_runs, marked_step_runs, translation_runs
from attention_measured.machinery.cache import remembered
from attention_measured.measures import explanations
from attention_measured.models import aligner, decoding, single_query
from attention_measured.tasks import marked_step, reversal, stories, translation

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True)

OTHER_KINDS = st.one_of(st.text(max_size=8), st.just("False"), st.lists(st.none()))
WRONG_KINDS = st.one_of(OTHER_KINDS, st.none())


def counts(low: int, high: int = checks.MAX_COUNT, optional: bool = False):
    """Anything but an integer in [low, high]: out of range either way, a fraction, a bool, a
    non-finite float, or another kind (None too, unless the argument is ``optional``)."""
    return st.one_of(
        st.integers(max_value=low - 1),
        st.integers(min_value=high + 1, max_value=10**30),
        st.floats(allow_nan=True, allow_infinity=True).filter(
            lambda x: not (math.isfinite(x) and x.is_integer())
        ),
        st.booleans(),
        OTHER_KINDS if optional else WRONG_KINDS,
    )


def rates():
    """Anything but a positive finite number."""
    return st.one_of(
        st.floats(max_value=0.0),
        st.sampled_from([math.nan, math.inf, -math.inf]),
        st.booleans(),
        WRONG_KINDS,
    )


def flags():
    """Anything but True or False: "False" above all."""
    return st.one_of(st.integers(), st.floats(), WRONG_KINDS)


def names(options):
    """Any text but one of ``options``, or not text at all."""
    return st.one_of(st.text(max_size=12).filter(lambda t: t not in options), st.integers())


def refused(call, name: str) -> None:
    """``call()`` raises a TypeError or ValueError whose message names ``name``."""
    with pytest.raises((TypeError, ValueError)) as caught:
        call()
    assert name in str(caught.value), f"{name!r} not named in: {caught.value}"


@pytest.fixture(scope="module")
def lesson():
    train_set = marked_step.split(marked_step.make_sequences())[0]
    return single_query.SingleQuery(), train_set


@pytest.fixture(scope="module")
def translator():
    model = translation_runs.book_model("Transformer")
    source = np.array([[3, 4, 5, 6, 7]])
    return model, model.init(0), source


@SETTINGS
@given(bad=counts(1))
def test_a_count_of_sequences_is_an_integer_in_range(bad):
    refused(lambda: marked_step.make_sequences(n=bad), "n")


@SETTINGS
@given(bad=counts(0, 2**64 - 1))
def test_a_seed_is_an_integer_in_range(bad):
    refused(lambda: single_query.SingleQuery().init(bad), "seed")


@SETTINGS
@given(bad=counts(1, training.MAX_EPOCHS))
def test_fit_takes_a_number_of_epochs_in_range(bad, lesson):
    model, train_set = lesson
    params = model.init(1)
    refused(
        lambda: training.fit(model, params, train_set.inputs, train_set.labels, bad, 0.1), "epochs"
    )


@SETTINGS
@given(bad=rates())
def test_fit_takes_a_positive_learning_rate(bad, lesson):
    model, train_set = lesson
    params = model.init(1)
    refused(
        lambda: training.fit(model, params, train_set.inputs, train_set.labels, 2, bad),
        "learning_rate",
    )


@SETTINGS
@given(bad=names(training.OPTIMISERS))
def test_fit_knows_its_optimisers_by_name(bad, lesson):
    model, train_set = lesson
    params = model.init(1)
    refused(
        lambda: training.fit(
            model, params, train_set.inputs, train_set.labels, 2, 0.1, optimiser=bad
        ),
        "optimiser",
    )


@SETTINGS
@given(bad=counts(1, stories.MAX_STORIES))
def test_a_number_of_stories_is_bounded(bad):
    refused(lambda: stories.stories(n=bad), "n")


@SETTINGS
@given(bad=counts(1, translation.MAX_CLAUSES))
def test_a_sentence_has_one_to_four_clauses(bad):
    refused(lambda: translation.sentence(np.random.RandomState(0), bad), "clauses")


@SETTINGS
@given(bad=counts(1, translation.MAX_STEPS, optional=True))
def test_decoding_takes_a_bounded_number_of_steps(bad, translator):
    model, params, source = translator
    refused(lambda: decoding.greedy(model, params, source, steps=bad), "steps")
    refused(lambda: model.greedy(params, source, steps=bad), "steps")


@SETTINGS
@given(bad=counts(1, decoding.MAX_BEAM))
def test_a_beam_is_bounded(bad, translator):
    model, params, source = translator
    refused(lambda: decoding.beam_search(model, params, source, bad), "beam")


@SETTINGS
@given(bad=flags())
def test_a_flag_is_true_or_false(bad, translator):
    model, params, source = translator
    refused(lambda: model.greedy(params, source, cache=bad), "cache")
    refused(lambda: checks.array([1.0], "x", finite=bad), "finite")
    fig, ax = plots.figure()
    try:
        refused(lambda: plots.heatmap(ax, np.eye(2), "ab", "ab", colorbar=bad), "colorbar")
        refused(lambda: plots.distribution(ax, np.ones(3), {}, "x", log=bad), "log")
    finally:
        plots.plt.close(fig)


@SETTINGS
@given(bad=st.integers().filter(lambda i: not 0 <= i < len(translation.TARGET_WORDS)))
def test_a_decoder_reads_only_words_of_its_vocabulary(bad, translator):
    model, params, source = translator
    state = model.decoder_start(params, source)
    refused(lambda: model.decoder_next(params, state, np.array([bad]), 0), "words")
    refused(lambda: translation.shifted_right(np.array([[3, 4]]), bad), "first")


@SETTINGS
@given(bad=names(translation_runs.MODELS))
def test_a_translator_is_named_exactly(bad):
    refused(lambda: translation_runs.learning_rate(bad), "name")
    refused(lambda: translation_runs.book_model(bad), "model")
    refused(lambda: translation_runs.seen_exact(bad, 0), "name")


@SETTINGS
@given(bad=counts(2, aligner.MAX_DRAWS))
def test_gradient_noise_takes_a_bounded_number_of_draws(bad):
    model = aligner.Aligner("general", hard=True)
    tokens = reversal.reversal(n=4)
    refused(lambda: aligner.gradient_noise(model, model.init(0), tokens, draws=bad), "draws")


@SETTINGS
@given(bad=st.one_of(st.floats(min_value=1e-5), st.floats(max_value=-1e-5), rates()))
def test_a_nudge_moves_only_the_last_digits(bad):
    refused(lambda: cloze_runs.train(seed=0, epochs=1, nudge=bad), "nudge")


# ------------------------------------------------------------------ what a valid call must not do
def test_decoding_a_step_leaves_the_callers_state_as_it_was(translator):
    model, params, source = translator
    state = model.decoder_start(params, source)
    first = model.decoder_next(params, state, np.array([model.bos]), 0)[2]
    assert all(cache == {} for cache in state["kv"])  # the state passed in: still empty
    kept = {name: array.copy() for name, array in first["kv"][0].items()}
    model.decoder_next(params, first, np.array([3]), 1)
    for name, array in first["kv"][0].items():
        np.testing.assert_array_equal(array, kept[name])
    refused(lambda: model.decoder_next(params, first, np.array([3]), 5), "t must be")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the NaN it stops at
def test_a_training_that_diverges_says_so(lesson):
    model, train_set = lesson
    params = model.init(1)
    refused(
        lambda: training.fit(model, params, train_set.inputs, train_set.labels, 5, 1e300),
        "learning_rate",
    )


def test_parameters_holding_nan_are_refused_by_name(lesson):
    model, train_set = lesson
    params = model.init(1)
    params["query"][0] = np.nan
    refused(lambda: single_query.effective(params), "params['query']")
    refused(lambda: model.forward(params, train_set.inputs), "query")


def test_a_subject_knows_what_it_may_lack():
    subject = marked_step_runs.MODEL
    params = subject.init(marked_step_runs.INIT_SEEDS[0])
    heldout = marked_step.split(marked_step.make_sequences())[2]
    made = explanations.Subject(subject, params, heldout.inputs[:4], truth=heldout.markers[:4])
    assert made.check("replace") is None
    refused(lambda: made.check("no such thing"), "what")


def test_a_seed_of_any_integer_kind_finds_its_remembered_result(monkeypatch):
    monkeypatch.delenv("ATTENTION_MEASURED_CACHE", raising=False)  # a disk copy would hide the call
    calls = []

    @remembered
    def square(seed):
        calls.append(seed)
        return seed * seed

    assert square(3) == square(np.int64(3)) == square(np.int32(3)) == 9
    assert calls == [3]
