"""The translators side by side on the translation task: trained runs, accuracy against
sentence length (greedy and beam search, exact match, word accuracy and BLEU), and alignments
(Part III, the Transformer and decoding; Part V, the recurrent encoder-decoders).

Every model trains for the same 300 Adam steps of 32 sentences, drawn in the same order, on
the same 1800 sentences of 5 to 22 words (:func:`~attention_measured.tasks.translation.book_data`);
the seed draws only the initial weights.  Each batch holds sentences of one length, except for
"Transformer, padded batches", whose batches mix lengths with padding.  The test set has 20
sentences of every length from 5 to 40.
"""

from __future__ import annotations

import time

import numpy as np

from ..core import checks
from ..core.training import Trained, trained
from ..machinery.blas import one_thread
from ..machinery.cache import remembered
from ..measures import bleu
from ..models import decoding
from ..models.recurrent import KINDS, EncoderDecoder
from ..models.transformer import Transformer
from ..tasks import translation

TRANSFORMERS = {
    "Transformer": {},
    "Transformer, pre-norm": {"norm_first": True},
    "Transformer, no positions": {"positions": False},
    "Transformer, no causal mask": {"causal": False},
    "Transformer, padded batches": {"mixed": True},
}

# stacks of layers, post-norm and pre-norm, for Part III's section on depth
STACKS = {
    "Transformer, 2 layers": {"layers": 2},
    "Transformer, 2 layers, pre-norm": {"layers": 2, "norm_first": True},
    "Transformer, 6 layers": {"layers": 6},
    "Transformer, 6 layers, pre-norm": {"layers": 6, "norm_first": True},
}
TRANSFORMERS.update(STACKS)


MODELS = KINDS + tuple(TRANSFORMERS)


# the one-layer models that differ in how they are built, not in how they are fed: the ones
# Part VI explains (its sweep leaves out the padded batches and the deeper stacks)
ARCHITECTURES = tuple(
    name for name in MODELS if name != "Transformer, padded batches" and name not in STACKS
)


RECURRENT_SIZES = {"embedding": 16, "hidden": 32, "units": 16, "batch": 32}


TRANSFORMER_SIZES = {"width": 32, "heads": 2, "feed_forward": 64, "layers": 1, "batch": 32}


STEPS = 300


LEARNING_RATES = {"recurrent": 0.02, "Transformer": 0.005}


SEEDS = (0, 1, 2)


def book_model(model: str):
    """The book's model named ``model`` (one of :data:`MODELS`), sized for the translation
    task."""
    name = checks.choice(model, "model", MODELS)
    vocabularies = len(translation.SOURCE_WORDS), len(translation.TARGET_WORDS)
    if name in TRANSFORMERS:
        return Transformer(*vocabularies, **{**TRANSFORMER_SIZES, **TRANSFORMERS[name]})
    return EncoderDecoder(name, *vocabularies, **RECURRENT_SIZES)


def learning_rate(name: str) -> float:
    """Adam's step size for ``name`` (one of :data:`MODELS`): 0.005 for the Transformers, 0.02
    for the recurrent models."""
    name = checks.choice(name, "name", MODELS)
    return LEARNING_RATES["Transformer" if name in TRANSFORMERS else "recurrent"]


@remembered
def _trained_and_timed(name: str, seed: int):
    """(params, loss curve, seconds the training took on the machine that ran it)."""
    train = translation.book_data()[0]
    start = time.perf_counter()
    _, params, curve = trained.uncached(
        book_model(name), checks.seed(seed), train, None, STEPS, learning_rate(name)
    )
    return params, curve, time.perf_counter() - start


def run(name: str, seed: int) -> Trained:
    """``name`` trained from ``seed``: (model, params, loss curve (300,)), remembered."""
    name = checks.choice(name, "name", MODELS)
    params, curve, _ = _trained_and_timed(name, seed)
    return Trained(book_model(name), params, curve)


def training_seconds(name: str, seed: int) -> float:
    """How long :func:`run` took to train ``name`` from ``seed``, on the machine that trained
    it (remembered with the result, so a second call does not train again)."""
    name = checks.choice(name, "name", MODELS)
    return _trained_and_timed(name, seed)[2]


BEAM = 4  # the beam beside greedy decoding on the length curves


MEASURES = ("exact", "words", "early", "first_error", "aligned", "bleu")


BEAM_MEASURES = ("exact", "words", "early", "bleu", "log_prob")


@remembered
@one_thread
def length_curve(name: str, seed: int) -> dict[str, np.ndarray]:
    """Greedy translations of the test set by one trained model, measured per source length.

    Returns "lengths" (5 to 40) and, per length n:

    - "exact": the share of sentences translated exactly, </s> included;
    - "words": the share of the n + 1 target positions right;
    - "early": the share of outputs that write </s> before position n;
    - "first_error": the mean position of the first wrong word, as a share of n (1 when the n
      words are right);
    - "aligned": the share of target words whose heaviest attention weight, under teacher
      forcing, falls on the source word they translate (NaN for the fixed context);
    - "bleu": corpus-level BLEU of the outputs against the references (:func:`bleu.bleu`).
    """
    model, params, _ = run(name, seed)
    test = translation.book_data()[1]
    lengths = np.array(sorted(test))
    out = {key: [] for key in MEASURES}
    for n in lengths:
        corpus = test[n]
        ids, _ = model.greedy(params, corpus.source)
        for key, value in _scores(ids, corpus, n).items():
            out[key].append(value)
        right = ids == corpus.target
        wrong = ~right[:, :n]
        first = np.where(wrong.any(axis=1), wrong.argmax(axis=1), n)
        out["first_error"].append((first / n).mean())
        if name == "fixed context":
            out["aligned"].append(np.nan)
        else:
            weights = model.forward(params, (corpus.source, corpus.target)).weights
            out["aligned"].append((weights[:, :-1].argmax(axis=-1) == corpus.alignment).mean())
    return {"lengths": lengths, **{key: np.array(values) for key, values in out.items()}}


@remembered
@one_thread
def seen_exact(name: str, seed: int) -> float:
    """The share of test sentences of the lengths seen in training (5 to 22 words) that
    ``name``, trained from ``seed``, translates exactly by greedy decoding, </s> included: the
    mean over those lengths of :func:`length_curve`'s "exact", without decoding the longer
    sentences or measuring the rest (Part III, "Stacking layers", for the deep stacks)."""
    name = checks.choice(name, "name", MODELS)
    model, params, _ = run(name, seed)
    test = translation.book_data()[1]
    seen = [n for n in sorted(test) if n <= translation.TRAIN_LENGTHS[1]]
    exact = [
        (model.greedy(params, test[n].source)[0] == test[n].target).all(axis=1).mean() for n in seen
    ]
    return float(np.mean(exact))


def _scores(ids, corpus, n: int) -> dict[str, float]:
    """Exact match, word accuracy, early </s> and BLEU of outputs ids (N, n + 1) of one test
    length."""
    right = ids == corpus.target
    return {
        "exact": right.all(axis=1).mean(),
        "words": right.mean(),
        "early": (ids[:, :n] == translation.TARGET_IDS[translation.EOS]).any(axis=1).mean(),
        "bleu": bleu.bleu(ids, corpus.target),
    }


@remembered
@one_thread
def beam_curve(name: str, seed: int, beam: int = BEAM) -> dict[str, np.ndarray]:
    """Beam search of width ``beam`` beside greedy decoding on the test set, per source length.

    Returns "lengths" (5 to 40) and, per length, beam search's "exact", "words", "early" and
    "bleu" (as in :func:`length_curve`), its mean "log_prob" per sentence, and greedy
    decoding's, "greedy log_prob" (:mod:`decoding`).
    """
    beam = checks.integer(beam, "beam", 1)
    model, params, _ = run(name, seed)
    test = translation.book_data()[1]
    lengths = np.array(sorted(test))
    out = {key: [] for key in BEAM_MEASURES + ("greedy log_prob",)}
    for n in lengths:
        corpus = test[n]
        found = decoding.beam_search(model, params, corpus.source, beam)
        for key, value in _scores(found.ids, corpus, n).items():
            out[key].append(value)
        out["log_prob"].append(found.log_prob.mean())
        out["greedy log_prob"].append(decoding.greedy(model, params, corpus.source).log_prob.mean())
    return {"lengths": lengths, **{key: np.array(values) for key, values in out.items()}}


def length_curves(names=MODELS, seeds=SEEDS, beam: int | None = None) -> dict:
    """:func:`length_curve` of every model and seed, or with ``beam`` :func:`beam_curve`,
    stacked: {"lengths": (L,), name: {measure: (seeds, L)}}."""
    seeds = checks.seeds(seeds)
    if beam is None:
        curves = {name: [length_curve(name, seed) for seed in seeds] for name in names}
    else:
        curves = {name: [beam_curve(name, seed, beam) for seed in seeds] for name in names}
    low, high = translation.TEST_LENGTHS
    out = {"lengths": np.arange(low, high + 1)}
    for name, runs in curves.items():
        out[name] = {key: np.array([r[key] for r in runs]) for key in runs[0] if key != "lengths"}
    return out


@one_thread
def translate(name: str, seed: int, source, beam: int = 1) -> dict:
    """One trained model's translation of one source sentence (words or a string), greedy
    (``beam`` 1) or by beam search of width ``beam`` (:mod:`decoding`): :func:`translation_of`
    with the model ``name`` trained from ``seed``."""
    checks.choice(name, "name", MODELS)
    checks.integer(beam, "beam", 1, decoding.MAX_BEAM)
    translation.translate(source)  # an unknown word or a broken sentence is refused untrained
    model, params, _ = run(name, seed)
    return translation_of(model, params, source, beam)


@one_thread
def translation_of(model, params, source, beam: int = 1) -> dict:
    """A translator's (``model``, ``params``) translation of one source sentence (words or a
    string), greedy (``beam`` 1) or by beam search of width ``beam`` (Part III, decoding).

    Returns "source" and "output" words, the "reference" translation and its "alignment",
    the "log_prob", the model's log-probability of the output and its </s>, the "weights"
    (steps, source words) where each output word looked, and the "forced" weights (n + 1,
    source words) where each word of the reference and its </s> looked when the model was
    given the true previous words, with the "forced_words" it then predicts (n + 1,) (the
    weights None for the fixed context).  The output is read up to its first </s>; decoding
    stops after the source length + 1 words.  The page's translator (``book/js``) computes the
    same in the reader's browser.
    """
    if not hasattr(model, "greedy") or not hasattr(model, "forward"):
        raise TypeError(f"model must be one of the book's translators, got {model!r}")
    beam = checks.integer(beam, "beam", 1, decoding.MAX_BEAM)
    pair = translation.translate(source)
    source_ids = translation.encode_source(pair.source)[None, :]
    decoded = decoding.beam_search(model, params, source_ids, beam)
    if beam == 1:
        ids, weights = model.greedy(params, source_ids)
    else:
        ids = decoded.ids
        weights = model.forward(params, (source_ids, ids)).weights
    target_ids = np.array([[translation.TARGET_IDS[w] for w in (*pair.target, translation.EOS)]])
    forced = model.forward(params, (source_ids, target_ids))
    return {
        "source": pair.source,
        "output": translation.decode_target(ids[0]),
        "reference": pair.target,
        "alignment": pair.alignment,
        "log_prob": float(decoded.log_prob[0]),
        "weights": None if weights is None else weights[0],
        "forced": None if forced.weights is None else forced.weights[0],
        "forced_words": tuple(translation.TARGET_WORDS[i] for i in forced.output[0].argmax(-1)),
    }


def still_right(output, reference) -> int:
    """How many output words come before the first that differs from the reference (or before
    either ends) (Part III): after a wrong word, the model translates its own words, not the
    reference's."""
    wrong = [i for i, (a, b) in enumerate(zip(output, reference)) if a != b]
    return wrong[0] if wrong else min(len(output), len(reference))


def translation_measures(r: dict) -> dict[str, int | bool]:
    """What :func:`translation_of`'s result ``r`` scores (Part III, alignments): "exact", the
    output is the reference; "right", of its "words", the reference's n words, how many the
    output has in place; "still", the output words before the first wrong one; "on_truth", of
    those, the ones whose heaviest weight falls on the source word they translate; "forced", of
    the n words, the ones whose heaviest weight does so when the model is given the true
    previous words."""
    if not isinstance(r, dict) or not {"output", "reference", "weights", "forced"} <= r.keys():
        raise TypeError("r must be translation_of's result")
    if r["weights"] is None:
        raise ValueError("r is the fixed context's translation, which has no attention weights")
    reference, output = r["reference"], r["output"]
    alignment = np.array(r["alignment"])
    still = still_right(output, reference)
    heaviest = np.asarray(r["weights"])[:still].argmax(axis=1)
    n = len(reference)
    return {
        "exact": tuple(output) == tuple(reference),
        "right": int(sum(a == b for a, b in zip(output, reference))),
        "words": n,
        "still": still,
        "on_truth": int(np.sum(heaviest == alignment[:still])),
        "forced": int(np.sum(np.asarray(r["forced"])[:n].argmax(axis=1) == alignment)),
    }
