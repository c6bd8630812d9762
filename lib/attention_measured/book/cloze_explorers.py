"""Explorers of the cloze head (Part IV): a sentence and its keys dropped one at a time, the seed's
loss curve, and the three kinds of query side by side (:func:`sentence_report` computes the
first's numbers)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import numpy as np

from ..core import checks
from ..experiments import cloze_runs
from ..experiments.cloze_runs import train
from ..measures import cloze_recall, removal
from ..models import cloze_head
from ..models.cloze_head import attention_weights, check_query, predict
from ..tasks import cloze
from ..tasks.cloze import SENTENCES, VOCAB, encode
from . import pages, plots
from .widgets import Control, explorer


def sentence_report(index: int, seed: int = 0, query: str = "token") -> dict:
    """One corpus sentence through a trained head: what section 4's sentence explorer shows.

    Returns tokens (n,), weights (n, n), predicted (n,) token strings, p_true (n,), heaviest
    (n,) key index per query, and effect (n,): how far p_true moves when that heaviest key is
    dropped and the rest renormalised.
    """
    tokens = SENTENCES[checks.index(index, "index", len(SENTENCES))]
    run = train(checks.seed(seed), query=check_query(query))
    weights = attention_weights(run, tokens)
    probs = predict(run, tokens)
    heaviest = weights.argmax(axis=1)
    effects = removal.effects(*run.model.removal_effects(run.params, tokens))
    rows = np.arange(len(tokens))
    return {
        "tokens": tokens,
        "weights": weights,
        "predicted": [VOCAB[i] for i in probs.argmax(axis=1)],
        "p_true": probs[rows, encode(tokens)],
        "heaviest": heaviest,
        "effect": effects[rows, heaviest],
    }


TWIN_UDHR_SEEDS = list(range(6))


@plots.styled
def _render_sentence(sentence: int):
    r = sentence_report(checks.index(sentence, "sentence", len(cloze.SENTENCES)))
    n = len(r["tokens"])
    fig, axes = plots.figure(
        2, 1, height=0.55 * n + 3.4, gridspec_kw={"height_ratios": [0.3 * n + 1.6, 0.25 * n + 1.2]}
    )
    plots.heatmap(
        axes[0],
        r["weights"],
        r["tokens"],
        r["tokens"],
        title=f"sentence {sentence}: attention weights",
    )
    rows = np.arange(n)
    axes[1].barh(rows - 0.2, r["p_true"], 0.4, color=plots.RUNS[0], label="p(true token)")
    axes[1].barh(rows + 0.2, r["effect"], 0.4, color=plots.AFTER, label="|Δp| without heaviest key")
    # a row names its token, and the prediction only where it is wrong
    labels = [t if t == p else f"{t} → {p}" for t, p in zip(r["tokens"], r["predicted"])]
    axes[1].set_yticks(rows, labels, fontsize=9)
    axes[1].invert_yaxis()
    axes[1].set_xlim(0, 1)
    axes[1].grid(axis="x", color=plots.GRID)
    axes[1].set_title("each token: its prediction, and its heaviest key removed")
    axes[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=2)
    return fig


def describe_sentence(sentence: int) -> str:
    r = sentence_report(checks.index(sentence, "sentence", len(cloze.SENTENCES)))
    lines = [
        _sentence_line(sentence, r["tokens"]),
        "",
        f"{'token':>14} -> {'predicted':<14}{'p(true)':>8}  {'heaviest key':<14}{'weight':>7}"
        f"{'drop it':>9}",
    ]
    for i, token in enumerate(r["tokens"]):
        key = r["tokens"][r["heaviest"][i]]
        lines.append(
            f"{token:>14} -> {r['predicted'][i]:<14}{r['p_true'][i]:>8.3f}  {key:<14}"
            f"{r['weights'][i, r['heaviest'][i]]:>7.2f}{r['effect'][i]:>9.3f}"
        )
    lines.append("drop it: how far dropping the heaviest key moves p(true)")
    return "\n".join(lines)


def _sentence_line(sentence: int, tokens) -> str:
    """``sentence N: its tokens``, wrapped to the page's column."""
    return textwrap.fill(
        f"sentence {sentence}: " + " ".join(tokens), width=pages.WIDTH, subsequent_indent="  "
    )


def robust_sentence_summary(index: int, seed: int = 0) -> str:
    """The part of the sentence explorer that survives a change of machine (Part IV, section 4)."""
    tokens = cloze.SENTENCES[checks.index(index, "index", len(cloze.SENTENCES))]
    run = cloze_runs.train(seed)
    return (
        _sentence_line(index, tokens) + f"\n({len(tokens)} tokens)\n"
        f"the head shown (token query, seed {seed}) recalls more than {cloze_runs.RECALL_FLOOR}\n"
        f"of all training tokens: {cloze_recall.top1_accuracy(run) > cloze_runs.RECALL_FLOOR}"
    )


@plots.styled
def _render_udhr_seed(seed: int):
    run = cloze_runs.train(seed)
    fig, axes = plots.figure(2, 1, height=6.6)
    plots.loss_curve(axes[0], run.curve)
    axes[0].set_title(f"seed {seed}: training loss")
    plots.heatmap(
        axes[1],
        cloze_head.attention_weights(run),
        cloze.DISPLAY,
        cloze.DISPLAY,
        title="display sentence",
    )
    return fig


def describe_udhr_seed(seed: int) -> str:
    """What the seed explorer prints: the measured loss at the start, and coarse facts about the
    end.

    Training is chaotic (Part IV, section 4): the last digits of a trained head depend on the
    machine, so only statements that survive a 1e-12 nudge of the initial weights are printed
    about the end of training.
    """
    run = cloze_runs.train(seed)
    curve = run.curve
    return (
        f"seed {seed}: loss per token {curve[0]:.4f} at iteration 1, "
        f"{curve[79]:.4f} at iteration 80\n"
        f"at iteration {len(curve)}:\n"
        f"  loss below {cloze_runs.LOSS_CEILING}: {curve[-1] < cloze_runs.LOSS_CEILING}\n"
        f"  more than {cloze_runs.RECALL_FLOOR} of the training tokens recalled: "
        f"{cloze_recall.top1_accuracy(run) > cloze_runs.RECALL_FLOOR}"
    )


QUERIES = {"token": "token", "blank": "mask", "position": "position"}


TWIN_QUERY_SENTENCES = range(5)  # the sentences the query explorer's twin renders (the page
# keeps within its budget beside the live explorer, which reads any sentence with each query)


def _query_run(query: str):
    return cloze_runs.train(0, query=QUERIES[checks.choice(query, "query", QUERIES)])


@plots.styled
def _render_query_variant(sentence: int, query: str = "token"):
    tokens = cloze.SENTENCES[checks.index(sentence, "sentence", len(cloze.SENTENCES))]
    run = _query_run(query)
    n = len(tokens)
    fig, ax = plots.figure(height=0.26 * n + 2.4)
    plots.heatmap(
        ax,
        cloze_head.attention_weights(run, tokens),
        tokens,
        tokens,
        title=f"{query} query (top-1 on the training sentences "
        f"{cloze_recall.top1_accuracy(run):.2f})",
    )
    return fig


def describe_query_variant(sentence: int, query: str = "token") -> str:
    """The chosen sentence, and how the head with the chosen query (seed 0) recalls it."""
    tokens = cloze.SENTENCES[checks.index(sentence, "sentence", len(cloze.SENTENCES))]
    run = _query_run(query)
    probs = cloze_head.predict(run, tokens)
    right = int((probs.argmax(axis=1) == np.array(cloze.encode(tokens))).sum())
    return (
        _sentence_line(sentence, tokens) + f"\n{query} query: {right} of {len(tokens)} tokens "
        f"predicted correctly; final training loss {run.curve[-1]:.2g}"
    )


def _sentence_explorer(name: str, render: Callable, describe: Callable, alt: str, static: bool):
    """A widget with one slider over the 16 sentences, live or as a static twin."""
    controls = {"sentence": Control("sentence", range(len(cloze.SENTENCES)))}
    return explorer(name, controls, render, describe, alt=alt, static=static)


def pick_a_sentence(static: bool = False):
    """Any of the 16 sentences: its heat map, each query token's top prediction and the effect
    of its heaviest key.
    """
    return _sentence_explorer(
        "pick-a-sentence",
        _render_sentence,
        describe_sentence,
        static=static,
        alt="A heat map of the chosen sentence's attention weights, query tokens as rows and "
        "key tokens as columns, and bars of each token's predicted probability and of the "
        "change when its heaviest key is removed.",
    )


def udhr_seed(static: bool = False):
    """Retrain the head from another seed (about 2 s, with a progress bar): loss curve and
    display heat map.
    """

    def train_then_render(seed):
        cloze_runs.train(seed, progress=True)  # trains (with a bar) unless this seed is cached
        return _render_udhr_seed(seed)

    return explorer(
        "udhr-seed",
        {"seed": Control("seed", range(2**32), twin=TWIN_UDHR_SEEDS)},
        _render_udhr_seed,
        describe_udhr_seed,
        static=static,
        live_render=train_then_render,
        alt="The training loss curve of the head trained from the chosen seed, on a log scale, "
        "and the attention heat map of the display sentence.",
    )


def query_variant(static: bool = False):
    """Pick a sentence and a query variant (token, blank or position): the heat map of the head
    trained with that query."""
    controls = {
        "sentence": Control("sentence", range(len(cloze.SENTENCES)), twin=TWIN_QUERY_SENTENCES),
        "query": Control("query", list(QUERIES)),
    }
    return explorer(
        "query-variant",
        controls,
        _render_query_variant,
        describe_query_variant,
        static=static,
        alt="The attention heat map of the chosen sentence for the head trained with the chosen "
        "query: built from the token itself, from one shared blank vector that cannot see the "
        "token, or from a learned vector for the position.",
    )
