"""Greedy decoding and beam search (Part IV, decoding): beam 1 is greedy decoding, a wider beam
never scores lower, an exhaustive beam finds the best sentence, and scores are the model's own
log-probabilities under teacher forcing."""

import itertools

import numpy as np
import pytest

from attention_measured.core.losses import log_softmax
from attention_measured.machinery import blas
from attention_measured.measures import bleu
from attention_measured.models import decoding
from attention_measured.models.recurrent import KINDS, EncoderDecoder
from attention_measured.models.transformer import Transformer
from attention_measured.tasks import translation

EOS = 2


def small_models():
    yield Transformer(7, 6, width=8, heads=2, feed_forward=8)
    for kind in KINDS:
        yield EncoderDecoder(kind, 7, 6, embedding=4, hidden=5, units=3)


def teacher_forced_log_prob(model, p, source, ids, lengths):
    logits = model.forward(p, (source, ids)).output
    chosen = np.take_along_axis(log_softmax(logits), ids[..., None], axis=-1)[..., 0]
    return np.array([row[:n].sum() for row, n in zip(chosen, lengths)])


@pytest.mark.parametrize("model", list(small_models()), ids=repr)
def test_beam_one_is_greedy_and_scores_are_teacher_forced(model):
    p = model.init(3) if isinstance(model, Transformer) else model.init(5)
    source = np.random.RandomState(0).randint(3, 7, (6, 5))
    greedy_ids, _ = model.greedy(p, source)
    found = decoding.beam_search(model, p, source, 1)
    for row, mine, n in zip(greedy_ids, found.ids, found.lengths):
        assert (row[:n] == mine[:n]).all() and (mine[n:] == EOS).all()
    assert np.allclose(
        found.log_prob, teacher_forced_log_prob(model, p, source, found.ids, found.lengths)
    )


@pytest.mark.parametrize("model", list(small_models()), ids=repr)
def test_a_wider_beam_never_scores_lower_than_greedy(model):
    source = np.random.RandomState(1).randint(3, 7, (8, 4))
    for seed in range(3):
        p = model.init(seed)
        greedy = decoding.greedy(model, p, source)
        for beam in (2, 3, 5):
            found = decoding.beam_search(model, p, source, beam)
            assert (found.log_prob >= greedy.log_prob - 1e-12).all()
            assert np.allclose(
                found.log_prob,
                teacher_forced_log_prob(model, p, source, found.ids, found.lengths),
            )


def test_an_exhaustive_beam_finds_the_most_likely_sentence():
    model = Transformer(7, 4, width=4, heads=1, feed_forward=4)
    p, steps = model.init(2), 3
    source = np.array([[3, 4, 5], [6, 5, 4]])
    best = np.full(len(source), -np.inf)
    for words in itertools.product(range(4), repeat=steps):  # every sentence of 3 words
        ids = np.array([words] * len(source))
        n = np.where((ids == EOS).any(axis=1), (ids == EOS).argmax(axis=1) + 1, steps)
        best = np.maximum(best, teacher_forced_log_prob(model, p, source, ids, n))
    found = decoding.beam_search(model, p, source, 4**steps, steps=steps)
    assert np.allclose(found.log_prob, best)
    assert (decoding.greedy(model, p, source, steps=steps).log_prob <= best + 1e-12).all()


def test_decoding_runs_on_one_blas_thread():
    from threadpoolctl import threadpool_info

    seen = []

    class Watched(Transformer):
        def decoder_next(self, p, state, words, t):
            seen.extend(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
            return super().decoder_next(p, state, words, t)

    model = Watched(7, 6, width=8, heads=2, feed_forward=8)
    decoding.beam_search(model, model.init(0), np.array([[3, 4]]), 2)
    assert seen and set(seen) == {1}
    inner = blas.one_thread(lambda: threadpool_info())
    assert all(i["num_threads"] == 1 for i in blas.one_thread(inner)() if i["user_api"] == "blas")


def test_bleu_is_sacrebleus_corpus_score_of_the_words():
    ids = translation.TARGET_IDS
    sentence = [ids[w] for w in "lo fuxo ruda na kani vidas".split()] + [ids["</s>"]]
    reference = np.array([sentence, sentence])
    assert bleu.bleu(reference, reference) == pytest.approx(100.0)
    wrong = reference.copy()
    wrong[0, 5] = ids["amas"]  # one sentence's last word wrong
    assert 0 < bleu.bleu(wrong, reference) < 100
    shorter = reference.copy()
    shorter[:, 3] = ids["</s>"]  # both outputs end after three words: no 4-gram is left
    assert bleu.bleu(shorter, reference) == 0


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m, p: decoding.beam_search(m, p, np.array([[3, 4]]), 0), ValueError, "beam"),
        (lambda m, p: decoding.beam_search(m, p, np.array([[3, 4]]), 1.5), TypeError, "beam"),
        (lambda m, p: decoding.beam_search(m, p, np.array([[3, 9]]), 2), ValueError, "source"),
        (lambda m, p: decoding.beam_search("model", p, np.array([[3]]), 2), TypeError, "model"),
        (
            lambda m, p: bleu.bleu(np.zeros((2, 3), int), np.zeros((3, 3), int)),
            ValueError,
            "one row per sentence",
        ),
    ],
)
def test_bad_decoding_input_is_refused(call, error, message):
    model = Transformer(7, 6, width=8, heads=2, feed_forward=8)
    with pytest.raises(error, match=message):
        call(model, model.init(0))


@pytest.mark.parametrize(
    "beam, source, error, message",
    [
        (0, "the fox sees a dog", ValueError, "beam"),
        ("4", "the fox sees a dog", TypeError, "beam"),
        (2, "the cat sees a dog", ValueError, "unknown"),
    ],
)
def test_translate_refuses_a_bad_beam_or_word_before_training(beam, source, error, message):
    from attention_measured.experiments import translation_runs

    with pytest.raises(error, match=message):
        translation_runs.translate("Transformer", 0, source, beam=beam)


def test_translation_of_reads_any_translator_and_refuses_what_is_not_one():
    from attention_measured.experiments import translation_runs

    model = translation_runs.book_model("Bahdanau")
    r = translation_runs.translation_of(model, model.init(3), "the dog sees a red bird", 2)
    assert len(r["forced_words"]) == len(r["reference"]) + 1 == 7
    assert r["weights"].shape == (7, 6) and r["forced"].shape == (7, 6)
    score = translation_runs.translation_measures(r)
    assert score["words"] == 6 and 0 <= score["on_truth"] <= score["still"] <= 6
    with pytest.raises(TypeError, match="model must be one of the book's translators"):
        translation_runs.translation_of("Bahdanau", model.init(3), "the dog sees a bird")
    with pytest.raises(ValueError, match="beam"):
        translation_runs.translation_of(model, model.init(3), "the dog sees a bird", 65)


def test_translation_measures_needs_attention_weights_and_counts_until_the_first_wrong_word():
    from attention_measured.experiments import translation_runs

    assert translation_runs.still_right(("a", "b", "c"), ("a", "x", "c")) == 1
    assert translation_runs.still_right(("a", "b"), ("a", "b", "c")) == 2
    fixed = translation_runs.book_model("fixed context")
    r = translation_runs.translation_of(fixed, fixed.init(0), "the dog sees a bird")
    with pytest.raises(ValueError, match="no attention weights"):
        translation_runs.translation_measures(r)
    with pytest.raises(TypeError, match="translation_of's result"):
        translation_runs.translation_measures({"output": ()})
