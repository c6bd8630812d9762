"""Every model of the book by name: its trained runs, and the examples each is explained on
(Part VI).

:data:`MODELS` names every model that has attention to explain, with its family and its seeds;
:func:`subjects` builds the :class:`~.explanations.Subject` of any of them by name and seed.  A
Subject takes a trained model through the book's protocol alone, so what is written here is what
the task knows, not the model: which trained run, which held-out examples, which row of the
weights explains each example, and the true cause of each, known by construction:

- :func:`single_query_subject`  Part I's network: the marked step (section 5's 100 seeds);
- :func:`flavour_subject`       Part V, section 4: each flavour on Part I's task;
- :func:`heads_subject`         Part II, section 2: one head of the one- or two-head model;
- :func:`memory_subject`        Part V, section 5: the supporting fact of a story;
- :func:`cloze_subjects`        Part IV: no step of the sentence is the cause (see
                                :data:`CLOZE_NO_TRUTH`);
- :func:`translation_subjects`  Parts III and V: the source word each target word translates.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core import checks
from ..core.params import Params
from ..machinery.cache import remembered
from ..measures.explanations import Subject
from ..tasks import cloze, marked_step, stories, translation
from . import (
    cloze_runs,
    flavour_runs,
    head_runs,
    marked_step_runs,
    story_runs,
    translation_runs,
)

SINGLE_QUERY_SEEDS = tuple(
    range(marked_step_runs.INIT_SEEDS[0], marked_step_runs.INIT_SEEDS[0] + 100)
)  # Part I, section 5's 100 init seeds
SEEDS = (0, 1, 2)  # the seeds of every model but Part I's network, which has its 100


# ------------------------------------------------------------------ Part I
@remembered
def _single_query_stack():
    """Part I's held-out set and its network trained from each of :data:`SINGLE_QUERY_SEEDS`."""
    train_set, _, heldout = marked_step.split(marked_step.make_sequences())
    return heldout, marked_step_runs.train_runs(SINGLE_QUERY_SEEDS, train_set).params


def single_query_network(seed: int = SINGLE_QUERY_SEEDS[0]) -> Params:
    """Part I's network trained from ``seed``, one of :data:`SINGLE_QUERY_SEEDS` (the lesson's
    runs 1 and 2 are the first two), as section 5 trains all 100 at once."""
    if isinstance(seed, (bool, np.bool_)) or seed not in SINGLE_QUERY_SEEDS:
        raise ValueError(
            f"seed must be one of Part I's 100 seeds, {SINGLE_QUERY_SEEDS[0]} to "
            f"{SINGLE_QUERY_SEEDS[-1]}, got {seed!r}"
        )
    return _single_query_stack()[1].select(SINGLE_QUERY_SEEDS.index(int(seed)))


def single_query_subject(seed: int = SINGLE_QUERY_SEEDS[0]) -> Subject:
    """Part I's network trained from ``seed`` (one of :data:`SINGLE_QUERY_SEEDS`; the lesson's
    runs 1 and 2 are the first two) on its 180 held-out sequences; the truth is the marked
    step."""
    params = single_query_network(seed)
    heldout = _single_query_stack()[0]
    runs = {s: f"Part I, run {i + 1}" for i, s in enumerate(marked_step_runs.INIT_SEEDS)}
    name = runs.get(int(seed), f"Part I, seed {seed}")
    model = marked_step_runs.MODEL
    return Subject(model, params, heldout.inputs, truth=heldout.markers, name=name)


# ------------------------------------------------------------------ Part V
def flavour_subject(flavour: str, seed: int = 0) -> Subject:
    """One flavour of Part V, section 4, trained from ``seed`` on Part I's task, on its 180
    held-out sequences.  Local-p's weights are explained as shares of their total (its
    Gaussian window leaves them summing to less than 1)."""
    model, params, _ = flavour_runs.reader_run(flavour, seed)
    heldout = marked_step.lesson_data()[1]
    name = f"{flavour}, seed {seed}"
    return Subject(model, params, heldout.inputs, truth=heldout.marked[:, 0], name=name)


def heads_subject(choice: str, seed: int = 0) -> Subject:
    """One head (``choice`` in :data:`~.head_runs.HEAD_CHOICES`) of Part II, section 2's
    models on its 180 held-out sequences.  The other head, if any, keeps its own weights
    throughout: a change reaches only the head explained."""
    heads, head = head_runs.HEAD_CHOICES[checks.choice(choice, "choice", head_runs.HEAD_CHOICES)]
    model, params, _ = head_runs.heads_run(heads, seed)
    heldout = head_runs.heads_data()[1]
    truth, name = heldout.marked[:, 0], f"{choice}, seed {seed}"
    return Subject(model, params, heldout.inputs, row=head, truth=truth, name=name)


def memory_subject(seed: int = 0) -> Subject:
    """Part V, section 5's one-hop memory network on its 500 one-fact test stories; the true
    cause is the supporting fact.  Each story fills every slot, so every step is real."""
    model, params, _ = story_runs.memory_run(1, 1, seed)
    test = story_runs.memory_data(1)[1]
    name = f"memory network, seed {seed}"
    return Subject(model, params, stories.encode(test), row=0, truth=test.facts[:, 0], name=name)


# ------------------------------------------------------------------ Part IV
CLOZE_NO_TRUTH = (
    "the head names a token from its own query, built from that very token (Part IV, 'What "
    "the memory remembers'), so no other token of the sentence is the cause to be found"
)


def cloze_subjects(seed: int = 0) -> list[Subject]:
    """Part IV's head (the book's "token" query) trained from ``seed`` on the 16 sentences,
    explained at every position of every sentence: one Subject per sentence, each position an
    example whose steps are the sentence's other tokens (a token may not attend to itself).  No
    truth: see :data:`CLOZE_NO_TRUTH`."""
    model, params, _ = cloze_runs.train(checks.seed(seed))
    out = []
    for tokens in cloze.SENTENCES:
        n = len(tokens)
        copies = cloze.make_batch([tokens] * n)  # position i of copy i is the example
        name = f"UDHR head, seed {seed}, a sentence of {n} tokens"
        subject = Subject(
            model, params, copies, row=np.arange(n), name=name, no_truth=CLOZE_NO_TRUTH
        )
        out.append(subject)
    return out


# ------------------------------------------------------------------ Part III
TRANSLATION_LENGTHS = (6, 10, 14)  # the test lengths explained: short, middle, trained-longest


def translation_subjects(name: str, seed: int = 0, lengths=TRANSLATION_LENGTHS) -> list[Subject]:
    """A translator (``name`` in :data:`~.translation_runs.MODELS`, with attention) trained
    from ``seed``, explained at every word of the 20 test sentences of each of ``lengths``,
    under teacher forcing: one Subject per length, the true cause of each word the source word
    it translates.  The Transformer's weights cannot be replaced (its ``cannot``); its encoder's
    self-attention, averaged over heads, is what rollout and flow carry its weights through."""
    model, params, _ = translation_runs.run(name, seed)
    if getattr(model, "flavour", True) is None:
        raise ValueError(f"the {name!r} model has no attention weights to explain")
    test = translation.book_data()[1]
    if isinstance(lengths, (str, bytes)) or not hasattr(lengths, "__iter__"):
        raise TypeError(f"lengths must be a list of sentence lengths, got {lengths!r}")
    out = []
    for m in lengths:
        if m not in test:
            raise ValueError(f"the test sentences have {min(test)} to {max(test)} words, not {m}")
        data = test[m]
        sentence = np.repeat(np.arange(len(data.source)), m)  # example (s, i): word i of s
        at = np.tile(np.arange(m), len(data.source))
        inputs = (data.source[sentence], data.target[sentence])
        truth = data.alignment[sentence, at]
        label = f"{name}, seed {seed}, {m} words"
        out.append(Subject(model, params, inputs, row=at, truth=truth, name=label))
    return out


# ------------------------------------------------------------------ every model, by name
FAMILIES = ("marked step", "cloze head", "flavours", "heads and memory", "translators")


@dataclass(frozen=True)
class Entry:
    """One model of the book: its family, its seeds, and ``explain(seed)``, its Subjects."""

    family: str
    seeds: tuple
    explain: Callable


def _models() -> dict[str, Entry]:
    models = {"Part I network": Entry("marked step", SINGLE_QUERY_SEEDS, single_query_subject)}
    models["UDHR head"] = Entry("cloze head", SEEDS, cloze_subjects)
    for flavour in flavour_runs.SIDE_BY_SIDE:
        explain = functools.partial(flavour_subject, flavour)
        models[flavour] = Entry("flavours", SEEDS, explain)
    for choice in head_runs.HEAD_CHOICES:
        explain = functools.partial(heads_subject, choice)
        models[choice] = Entry("heads and memory", SEEDS, explain)
    models["memory network"] = Entry("heads and memory", SEEDS, memory_subject)
    for name in translation_runs.ARCHITECTURES:
        if name != "fixed context":
            explain = functools.partial(translation_subjects, name)
            models[name] = Entry("translators", SEEDS, explain)
    return models


MODELS = _models()  # {name: Entry}
NO_ATTENTION = {  # the book's models that have no weights to explain, and why
    "fixed context": "Part V's fixed-context encoder-decoder has no attention weights: every "
    "word reads the same last encoder state"
}


def subjects(model: str, seed: int) -> list[Subject]:
    """The Subjects of ``model`` (a key of :data:`MODELS`) trained from ``seed``."""
    entry = MODELS[checks.choice(model, "model", MODELS)]
    if isinstance(seed, (bool, np.bool_)) or seed not in entry.seeds:
        raise ValueError(
            f"{model!r} is measured on seeds {entry.seeds[0]} to {entry.seeds[-1]}, not {seed!r}"
        )
    made = entry.explain(int(seed))
    return [made] if isinstance(made, Subject) else made
