"""Part V: every model of the book behind one interface, :class:`explanations.Subject`.

Each function below takes a trained model of Parts I to IV and the held-out examples it is
explained on, and returns the Subject (or, where examples differ in length, one Subject per
length) that :mod:`~.measures.explanations` measures.  The true cause of each example is known
by construction, except where the page says why it is not:

- :func:`lesson_subject`       Part I's network: the marked step (section 5's 100 seeds);
- :func:`flavour_subject`      Part III, section 4: each flavour on Part I's task;
- :func:`heads_subject`        Part III, section 6: one head of the one- or two-head model;
- :func:`memory_subject`       Part III, section 8: the supporting fact of a story;
- :func:`udhr_subjects`        Part II: no step of the sentence is the cause (see its docstring);
- :func:`translation_subjects` Part IV: the source word each target word translates.

Each model's own forward pass takes Part V's three changes, ``keep``, ``weights`` and ``scale``
(:func:`lesson.forward`, :meth:`taxonomy.Reader.forward`, :meth:`selfattention.HeadsReader.forward`,
:meth:`memory.MemoryNetwork.forward`, :func:`udhr.read`,
:meth:`recurrent.EncoderDecoder.logits_at` and :meth:`transformer.Transformer.logits_at`): the
functions here only choose the examples and hand the changes on.  :data:`MODELS` names every
model, :func:`subjects` builds any of them by name and seed.
"""

from __future__ import annotations

import functools

import numpy as np

from ..core import checks
from ..core.params import Params
from ..machinery.cache import remembered
from ..measures.explanations import Subject
from ..models import cloze_head, single_query
from ..tasks import cloze, marked_step, stories, translation
from . import (
    cloze_runs,
    flavour_runs,
    head_runs,
    marked_step_runs,
    story_runs,
    translation_runs,
)

LESSON_SEEDS = tuple(
    range(marked_step_runs.INIT_SEEDS[0], marked_step_runs.INIT_SEEDS[0] + 100)
)  # Part I, section 5's 100 init seeds


def _binary(logit: np.ndarray) -> np.ndarray:
    """A logit (N,) as the scores of two classes, (N, 2): label 0 scores 0."""
    return np.stack([np.zeros_like(logit), logit], axis=1)


def _rows(values: np.ndarray, rows) -> np.ndarray:
    """The examples ``rows`` of a per-example array, or all of them."""
    return values if rows is None else values[rows]


def _scaled(inputs: np.ndarray, scale) -> np.ndarray:
    return inputs if scale is None else inputs * np.asarray(scale, dtype=float)[..., None]


@remembered
def _lesson_stack():
    """Part I's held-out set and its network trained from each of :data:`LESSON_SEEDS`."""
    train_set, _, heldout = marked_step.split(marked_step.make_sequences())
    return heldout, marked_step_runs.train_runs(LESSON_SEEDS, train_set).params


def lesson_network(seed: int = LESSON_SEEDS[0]) -> Params:
    """Part I's network trained from ``seed``, one of :data:`LESSON_SEEDS` (the lesson's runs 1
    and 2 are the first two), as section 5 trains all 100 at once."""
    if seed not in LESSON_SEEDS:
        raise ValueError(
            f"seed must be one of Part I's 100 seeds, {LESSON_SEEDS[0]} to {LESSON_SEEDS[-1]}"
        )
    return _lesson_stack()[1].select(LESSON_SEEDS.index(seed))


def lesson_subject(seed: int = LESSON_SEEDS[0]) -> Subject:
    """Part I's network trained from ``seed`` (one of :data:`LESSON_SEEDS`; the lesson's runs 1
    and 2 are the first two) on its 180 held-out sequences: logit = r·Σ_t a_t x_t + b."""
    params = lesson_network(seed)
    heldout = _lesson_stack()[0]
    x = heldout.inputs  # (N, T, C)

    def logits(rows=None, **change):  # keep, weights or scale, as single_query.forward takes them
        return _binary(single_query.forward(params, _rows(x, rows), **change).logit)

    weights = single_query.forward(params, x).weights
    runs = {s: f"Part I, run {i + 1}" for i, s in enumerate(marked_step_runs.INIT_SEEDS)}
    name = runs.get(seed, f"Part I, seed {seed}")
    return Subject(name, weights, logits, truth=heldout.markers)


def flavour_subject(flavour: str, seed: int = 0) -> Subject:
    """One flavour of Part III, section 4, trained from ``seed`` on Part I's task, on its 180
    held-out sequences: output = w·Σ_t a_t h_t + b.  Local-p's weights are explained as
    shares of their total (its Gaussian window leaves them summing to less than 1)."""
    model, p, _ = flavour_runs.lesson_run(flavour, seed)
    heldout = marked_step.lesson_data()[1]
    x = heldout.inputs

    own = model.forward(p, x).attention.weights[:, 0]
    # local-p's Gaussian scales its softmax, so its weights sum to less than 1: the subject
    # explains each step's share, and weights put in its place keep the example's total
    total = own.sum(axis=1, keepdims=True)

    def logits(rows=None, weights=None, **change):  # as the Reader's forward takes them
        if weights is not None:
            weights = np.asarray(weights) * _rows(total, rows)
        return _binary(model.forward(p, _rows(x, rows), weights=weights, **change).output)

    return Subject(f"{flavour}, seed {seed}", own / total, logits, truth=heldout.marked[:, 0])


def heads_subject(choice: str, seed: int = 0) -> Subject:
    """One head (``choice`` in selfattention.HEAD_CHOICES) of Part III, section 6's models on
    its 180 held-out sequences.  The other head, if any, keeps its own weights throughout: a
    change reaches only the head explained."""
    heads, head = head_runs.HEAD_CHOICES[checks.choice(choice, "choice", head_runs.HEAD_CHOICES)]
    model, p, _ = head_runs.heads_run(heads, seed)
    heldout = head_runs.heads_data()[1]
    x = heldout.inputs

    def logits(weights=None, keep=None, scale=None, rows=None):
        xs = _rows(x, rows)
        # always the head-by-head path (a scale of one changes nothing), so that every change
        # is measured against the same arithmetic
        scale = np.ones(xs.shape[:2]) if scale is None else scale
        if keep is not None:  # the other heads keep every step
            keep = np.stack([keep if h == head else np.ones_like(keep) for h in range(heads)], 1)
        if weights is not None:  # the other heads keep their own weights
            own = model.forward(p, xs, scale=scale)[1].copy()
            own[:, head] = weights
            weights = own
        return _binary(model.forward(p, xs, keep=keep, weights=weights, scale=scale)[0])

    weights = model.forward(p, x)[1][:, head]
    return Subject(f"{choice}, seed {seed}", weights, logits, truth=heldout.marked[:, 0])


def memory_subject(seed: int = 0) -> Subject:
    """Part III, section 8's one-hop memory network on its 500 one-fact test stories; the
    true cause is the supporting fact.  Each story fills every slot, so every step is real."""
    model, p, _ = story_runs.memory_run(1, 1, seed)
    test = story_runs.memory_data(1)[1]
    memories, questions, used = stories.encode(test)

    def logits(rows=None, keep=None, weights=None, scale=None):  # one hop: its weights (1, N, M)
        allowed = _rows(used, rows) if keep is None else _rows(used, rows) & keep
        weights = None if weights is None else np.asarray(weights)[None]
        return model.forward(
            p, _rows(memories, rows), _rows(questions, rows), allowed, weights, scale
        )[0]

    weights = model.forward(p, memories, questions, used)[1][0]
    return Subject(f"memory network, seed {seed}", weights, logits, truth=test.facts[:, 0])


UDHR_NO_TRUTH = (
    "the head names a token from its own query, built from that very token (Part II, section "
    "4), so no other token of the sentence is the cause to be found"
)


def udhr_subjects(seed: int = 0) -> list[Subject]:
    """Part II's head (the book's "token" query) trained from ``seed`` on the 16 sentences,
    explained at every position of every sentence: one Subject per sentence, its T steps the
    sentence's other tokens (a token may not attend to itself).  No truth: see
    :data:`UDHR_NO_TRUTH`."""
    params = cloze_runs.train(checks.seed(seed)).params
    return [_udhr_sentence(params, tokens, seed) for tokens in cloze.SENTENCES]


def _udhr_sentence(params, tokens, seed: int) -> Subject:
    ids = np.array(cloze.encode(tokens))
    n = len(ids)
    others = np.array([[j for j in range(n) if j != i] for i in range(n)])  # (n, n − 1)
    x = params.E[ids][others]  # (n, n − 1, d): each position's other tokens
    query = params.E[ids] @ params.W_Q  # (n, d)

    def logits(rows=None, keep=None, weights=None, scale=None):  # each position one query
        xs = _scaled(_rows(x, rows), scale)
        keep, weights = (None if a is None else np.asarray(a)[:, None] for a in (keep, weights))
        return cloze_head.read(params, _rows(query, rows)[:, None], xs, keep, weights)[0][:, 0]

    own = cloze_head.read(params, query[:, None], x)[1][:, 0]
    name = f"UDHR head, seed {seed}, a sentence of {n} tokens"
    return Subject(name, own, logits, cannot={"truth": UDHR_NO_TRUTH})


TRANSLATION_LENGTHS = (6, 10, 14)  # the test lengths explained: short, middle, trained-longest


TRANSFORMER_REPLACE = (
    "its cross-attention holds {heads} heads of weights in {layers}, {rows} rows for each word, "
    "so no one row of weights is the model's to replace; its rankings start from the last "
    "layer's rows averaged over the heads"
)


def translation_subjects(name: str, seed: int = 0, lengths=TRANSLATION_LENGTHS) -> list[Subject]:
    """A Part IV model (``name`` in translation_runs.MODELS, with attention) trained from ``seed``,
    explained at every word of the 20 test sentences of each of ``lengths``, under teacher
    forcing: one Subject per length, the true cause of each word the source word it translates.

    The recurrent models' weights can be replaced one word at a time.  The Transformer's cannot
    (:data:`TRANSFORMER_REPLACE`); its encoder's self-attention, averaged over heads, is the
    ``layers`` that rollout and flow carry its weights through."""
    model, params, _ = translation_runs.run(name, seed)
    if getattr(model, "flavour", True) is None:
        raise ValueError(f"the {name!r} model has no attention weights to explain")
    test = translation.book_data()[1]
    out = []
    for m in lengths:
        if m not in test:
            raise ValueError(f"the test sentences have {min(test)} to {max(test)} words, not {m}")
        data = test[m]
        sentence = np.repeat(np.arange(len(data.source)), m)  # example (s, i): word i of s
        at = np.tile(np.arange(m), len(data.source))
        args = (model, params, data.source[sentence], data.target[sentence], at)
        label = f"{name}, seed {seed}, {m} words"
        truth = data.alignment[sentence, at]
        if hasattr(model, "step"):
            out.append(_recurrent_subject(label, *args, truth))
        else:
            out.append(_transformer_subject(label, *args, truth))
    return out


def _recurrent_subject(label, model, p, source, target, at, truth) -> Subject:
    """Teacher forcing up to word ``at`` of each example, whose step takes the change
    (:meth:`~attention_measured.models.recurrent.EncoderDecoder.state_at`)."""
    own = model.state_at(p, source, target, at)

    def logits(weights=None, keep=None, scale=None, rows=None):
        if scale is None:  # the states before the step do not change: keep them
            state = tuple(_rows(a, rows) for a in own)
        else:
            state = model.state_at(p, *(_rows(a, rows) for a in (source, target, at)), scale)
        return model.logits_at(p, state, keep=keep, weights=weights)

    weights = model.step(p, *own).attention.weights[:, 0]
    return Subject(label, weights, logits, truth=truth)


def _transformer_subject(label, model, p, source, target, at, truth) -> Subject:
    """All words at once under the causal mask; a change reaches word ``at`` of each example
    only (:meth:`~attention_measured.models.transformer.Transformer.logits_at`)."""

    def logits(weights=None, keep=None, scale=None, rows=None):
        if weights is not None:
            raise ValueError(cannot["replace"])
        chosen = (_rows(a, rows) for a in (source, target, at))
        return model.logits_at(p, *chosen, keep=keep, scale=scale)[0]

    _, weights = model.logits_at(p, source, target, at)
    cannot = {
        "replace": TRANSFORMER_REPLACE.format(
            rows=model.heads * model.layers,
            heads=model.heads,
            layers="its one layer" if model.layers == 1 else f"each of its {model.layers} layers",
        )
    }
    own = weights[-1]["cross"].mean(axis=1)[np.arange(len(at)), at]  # (N, m)
    encoder = model.encode(p, source)[1].weights  # each layer's self-attention (N, H, m, m)
    layers = np.stack([w.mean(axis=1) for w in encoder], axis=1)  # (N, L, m, m)
    return Subject(label, own, logits, truth=truth, layers=layers, cannot=cannot)


SEEDS = (0, 1, 2)  # the seeds of every model but Part I's network, which has its 100


FAMILIES = ("Part I", "Part II", "Part III, flavours", "Part III, heads and memory", "Part IV")


def _models() -> dict[str, tuple[str, object, tuple]]:
    models = {"Part I network": ("Part I", lesson_subject, LESSON_SEEDS)}
    models["UDHR head"] = ("Part II", udhr_subjects, SEEDS)
    for flavour in flavour_runs.SIDE_BY_SIDE:
        models[flavour] = ("Part III, flavours", functools.partial(flavour_subject, flavour), SEEDS)
    for choice in head_runs.HEAD_CHOICES:
        models[choice] = (
            "Part III, heads and memory",
            functools.partial(heads_subject, choice),
            SEEDS,
        )
    models["memory network"] = ("Part III, heads and memory", memory_subject, SEEDS)
    for name in translation_runs.ARCHITECTURES:
        if name != "fixed context":
            models[name] = ("Part IV", functools.partial(translation_subjects, name), SEEDS)
    return models


MODELS = _models()  # {name: (family, seed -> Subject or [Subject], seeds)}


NO_ATTENTION = {  # the book's models that have no weights to explain, and why
    "fixed context": "Part IV's fixed-context encoder-decoder has no attention weights: every "
    "word reads the same last encoder state"
}


def subjects(model: str, seed: int) -> list[Subject]:
    """The Subjects of ``model`` (a key of :data:`MODELS`) trained from ``seed``."""
    family, build, seeds = MODELS[checks.choice(model, "model", MODELS)]
    if seed not in seeds:
        raise ValueError(f"{model!r} is measured on seeds {seeds[0]} to {seeds[-1]}, not {seed}")
    made = build(seed)
    return [made] if isinstance(made, Subject) else made
