"""Explorers of the flavours of attention (Part V): each flavour on one example
(:func:`flavour_report`), one head or two (:func:`head_report`), steps shuffled through the order
readers (:func:`order_report`), and the hops of a memory network (:func:`hop_report`)."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle

from ..core import checks
from ..core.losses import sigmoid
from ..experiments import flavour_runs, head_runs, order_runs, story_runs
from ..experiments.flavour_runs import reader_measures, reader_run
from ..experiments.head_runs import HEAD_CHOICES, HEADS_SEED, heads_data, heads_run
from ..experiments.order_runs import order_data, order_run
from ..experiments.story_runs import memory_data, memory_run
from ..measures import removal
from ..models import hierarchical
from ..models.order_reader import POSITIONS
from ..tasks import documents, marked_step, order
from ..tasks.marked_step import lesson_data
from ..tasks.order import shuffled
from ..tasks.stories import PLACES, Stories, encode
from . import plots
from .widgets import Control, explorer

FLAVOUR_EXAMPLE = 0  # the held-out example section 4's explorer shows every flavour on


def flavour_report(flavour: str, seeds=(0,), example: int = FLAVOUR_EXAMPLE) -> dict:
    """One flavour, trained from each seed, on one held-out example of Part I (Part V, section
    4).

    Returns the example's "readings", "marker" and "label", and per seed its "weights" and
    removal "effects" (each (seeds, T)), "p" (seeds,) and the held-out "measures" (dicts from
    :func:`measure`).
    """
    seeds = checks.seeds(seeds)
    heldout = lesson_data()[1]
    chosen = heldout[checks.index(example, "example", len(heldout))]
    weights, effects, probs, results = [], [], [], []
    for seed in seeds:
        model, params, _ = reader_run(flavour, seed)
        p, p_without = removal.removal_effects(model, params, chosen.inputs)
        weights.append(model.forward(params, chosen.inputs).weights[0])
        effects.append(removal.effects(p, p_without)[0])
        probs.append(float(p[0]))
        results.append(reader_measures(flavour, seed))
    return {
        "readings": chosen.inputs[0, :, 0],
        "marker": int(chosen.marked[0, 0]),
        "label": int(chosen.targets[0]),
        "weights": np.array(weights),
        "effects": np.array(effects),
        "p": probs,
        "measures": results,
    }


def head_report(choice: str, example: int = 0, seed: int = HEADS_SEED) -> dict:
    """One head of the one-head or the two-head model on a held-out example of section 6.

    Returns the example's "readings", "marker", "label", "level" (mean reading), the head's
    "weights" and per-head removal "effects" (each (T,)), and "p".
    """
    checks.choice(choice, "choice", HEAD_CHOICES)
    heads, head = HEAD_CHOICES[choice]
    heldout = heads_data()[1]
    chosen = heldout[checks.index(example, "example", len(heldout))]
    model, params, _ = heads_run(heads, seed)
    weights = model.forward(params, chosen.inputs).weights
    p, without = model.removal_effects(params, chosen.inputs)
    readings = chosen.inputs[0, :, 0]
    return {
        "readings": readings,
        "marker": int(chosen.marked[0, 0]),
        "label": int(chosen.targets[0]),
        "level": float(readings.mean()),
        "weights": weights[0, head],
        "effects": removal.effects(p, without[:, head])[0],
        "p": float(p[0]),
    }


def order_report(example: int = 0, shuffle: int = 0, seed: int = 0) -> dict:
    """A held-out sequence of section 7, its steps shuffled, through the three order models.

    Returns "tokens" (L,) after the shuffle, "label" (A before B after the shuffle), "p"
    {positions: P(A first)} and "weights" {positions: (L, L)}.
    """
    heldout = order_data()[1]
    tokens = shuffled(heldout.inputs[checks.index(example, "example", len(heldout))], shuffle)
    a, b = int(np.flatnonzero(tokens == 0)[0]), int(np.flatnonzero(tokens == 1)[0])
    probs, maps = {}, {}
    for positions in POSITIONS:
        model, params, _ = order_run(positions, seed)
        out = model.forward(params, tokens[None])
        probs[positions], maps[positions] = float(sigmoid(out.output[0])), out.weights[0]
    return {"tokens": tokens, "label": int(a < b), "p": probs, "weights": maps}


HOPS_SHOWN = 3  # the hops of the network section 8's explorer steps through


def hop_report(story: int = 0, hop: int = 1, hops: int = HOPS_SHOWN, seed: int = 0) -> dict:
    """One test story of the two-fact task through the memory network with ``hops`` hops
    (section 8).

    Returns the story's "sentences", "question", "answer" and supporting "facts", the weights of
    hop ``hop`` (1-based) over its sentences, and the "prediction".
    """
    test = memory_data(2)[1]
    index = checks.index(story, "story", len(test))
    hop = checks.integer(hop, "hop", 1, checks.integer(hops, "hops", 1))
    model, params, _ = memory_run(2, hops, seed)
    one = Stories(
        test.sentences[index : index + 1],
        test.questions[index : index + 1],
        test.answers[index : index + 1],
        test.facts[index : index + 1],
    )
    out = model.forward(params, encode(one))
    logits, weights = out.output, out.weights
    n = len(one.sentences[0])
    return {
        "sentences": one.sentences[0],
        "question": one.questions[0],
        "answer": PLACES[one.answers[0]],
        "facts": tuple(int(f) for f in one.facts[0]),
        "weights": weights[0, hop - 1, :n],
        "prediction": PLACES[int(logits[0].argmax())],
        "hop": hop,
    }


TWIN_FLAVOUR_SEEDS = [0, 1, 2]


NEGLIGIBLE = 0.0005


def _heaviest(weights) -> str:
    """'heaviest step t (weight w)', or that all weights are equal (mean pooling's tie)."""
    weights = np.asarray(weights)
    heavy = int(np.argmax(weights))
    if np.ptp(weights) < NEGLIGIBLE:
        return f"all weights equal ({weights[heavy]:.3f})"
    return f"heaviest step {heavy} (weight {weights[heavy]:.3f})"


def _most_influential(effects) -> str:
    """'most influential step t (|Δp| e)', or 'no step moves p' when every effect is below
    :data:`NEGLIGIBLE`."""
    effects = np.asarray(effects)
    moved = int(np.argmax(effects))
    if effects[moved] < NEGLIGIBLE:
        return f"no step moves p by {NEGLIGIBLE} or more"
    return f"most influential step {moved} (|Δp| {effects[moved]:.3f})"


@plots.styled
def render_flavour(flavour: str, seeds=(0, 1), example: int = FLAVOUR_EXAMPLE):
    """Readings, weights and removal effects of one flavour on one held-out example, one colour
    per seed.
    """
    r = flavour_report(flavour, seeds, example)
    names = [f"seed {s}" for s in seeds]
    return plots.example_figure(
        r["readings"],
        r["marker"],
        marked_step.THRESHOLD,
        f"example {example}: marker step {r['marker']}, label {r['label']}",
        dict(zip(names, r["weights"])),
        dict(zip(names, r["effects"])),
        f"{flavour}: weights",
    )


def describe_flavour(flavour: str, seeds=(0, 1), example: int = FLAVOUR_EXAMPLE) -> str:
    r = flavour_report(flavour, seeds, example)
    lines = [
        f"{flavour}\nheld-out example {example} (marker step {r['marker']}, label {r['label']})"
    ]
    for i, seed in enumerate(seeds):
        m = r["measures"][i]
        lines.append(
            f"seed {seed}: p(label 1) {r['p'][i]:.3f}\n"
            f"  {_heaviest(r['weights'][i])}, {_most_influential(r['effects'][i])}\n"
            f"  all 180 held-out: accuracy {m['accuracy']:.4f}, "
            f"marker weight {m['marker_weight']:.4f}, agreement {m['agreement']:.4f}"
        )
    return "\n".join(lines)


def _render_one_seed(flavour: str, seed: int):
    """:func:`render_flavour` at one seed: the frame of :func:`pick_a_flavour`."""
    return render_flavour(flavour, (seed,))


def _describe_one_seed(flavour: str, seed: int) -> str:
    """:func:`describe_flavour` at one seed: the numbers of :func:`pick_a_flavour`."""
    return describe_flavour(flavour, (seed,))


def pick_a_flavour(static: bool = False):
    """Any flavour of section 4 and a seed: its weights and removal effects on one held-out
    example."""
    controls = {
        "flavour": Control("flavour", flavour_runs.SIDE_BY_SIDE, "feed-forward"),
        "seed": Control("seed", range(2**31), twin=TWIN_FLAVOUR_SEEDS),
    }
    return explorer(
        "pick-a-flavour",
        controls,
        _render_one_seed,
        _describe_one_seed,
        static=static,
        alt="Three bar charts for held-out example 0: its readings with the marked step "
        "highlighted, the chosen flavour's attention weights, and each step's removal effect.",
    )


TWIN_HEAD_EXAMPLES = list(range(6))


@plots.styled
def render_head(choice: str, example: int = 0):
    r = head_report(choice, example)
    colour = (
        plots.RUNS[head_runs.HEAD_CHOICES[choice][1]],
    )  # head 0 blue, head 1 orange, as on the page
    return plots.example_figure(
        r["readings"],
        r["marker"],
        r["level"],
        f"example {example}: label {r['label']} (dashed: mean)",
        {choice: r["weights"]},
        {choice: r["effects"]},
        f"{choice}: weights",
        "removal effects (this head only)",
        colour,
    )


def describe_head(choice: str, example: int = 0) -> str:
    r = head_report(choice, example)
    return (
        f"{choice}, held-out example {example}\n"
        f"marker step {r['marker']} reads {r['readings'][r['marker']]:.3f}, mean {r['level']:.3f}, "
        f"label {r['label']}, p(label 1) {r['p']:.3f}\n"
        f"{_heaviest(r['weights'])}, {_most_influential(r['effects'])}"
    )


def pick_a_head(static: bool = False):
    """A head (of the one-head or the two-head model) and a held-out example: its weights and
    removal effects.
    """
    heldout = head_runs.heads_data()[1]
    controls = {
        "choice": Control("head", head_runs.HEAD_CHOICES, "two heads: head 1"),
        "example": Control("example", range(len(heldout)), twin=TWIN_HEAD_EXAMPLES),
    }
    return explorer(
        "pick-a-head",
        controls,
        render_head,
        describe_head,
        static=static,
        alt="Three bar charts for one held-out sequence: its readings with the marker "
        "highlighted and the mean dashed, the chosen head's weights, and the removal effect "
        "of each step on that head.",
    )


TWIN_ORDER_EXAMPLES = list(range(4))


TWIN_SHUFFLES = list(range(6))


LIVE_SHUFFLES = 51  # the live widget's shuffles, 0 (none) to 50


def _token_names(tokens) -> list[str]:
    return [order.ORDER_TOKENS[t] if t < 2 else f"x{t}" for t in tokens]


@plots.styled
def render_order(example: int = 0, shuffle: int = 0):
    r = order_report(example, shuffle)
    fig, axes = plots.figure(2, 1, height=6.4, gridspec_kw={"height_ratios": [1, 1.6]})
    names = list(r["p"])
    colours = [plots.NEUTRAL, plots.RUNS[0], plots.RUNS[1]]
    axes[0].bar(range(3), [r["p"][n] for n in names], color=colours)
    axes[0].axhline(0.5, color=plots.INK, lw=0.8, ls=":")
    axes[0].set_xticks(range(3), names)
    axes[0].set_ylim(0, 1)
    axes[0].set_ylabel("P(A before B)")
    axes[0].set_title(f"truth: {'A first' if r['label'] else 'B first'}")
    labels = _token_names(r["tokens"])
    plots.heatmap(
        axes[1],
        r["weights"]["sinusoidal"],
        labels,
        labels,
        title="sinusoidal model's weights",
        colorbar=False,
    )
    axes[1].set_xticks(range(len(labels)), labels, rotation=0)
    return fig


def describe_order(example: int = 0, shuffle: int = 0) -> str:
    r = order_report(example, shuffle)
    ps = ", ".join(f"{n} {v:.2f}" for n, v in r["p"].items())
    return (
        f"held-out example {example}, shuffle {shuffle}: {' '.join(_token_names(r['tokens']))}\n"
        f"  A {'before' if r['label'] else 'after'} B; P(A before B): {ps}"
    )


def shuffle_the_steps(static: bool = False):
    """Shuffle the steps of a held-out sequence and watch the three order models (no,
    sinusoidal, learned positions).
    """
    heldout = order_runs.order_data()[1]
    controls = {
        "example": Control("example", range(len(heldout)), twin=TWIN_ORDER_EXAMPLES),
        "shuffle": Control("shuffle", range(LIVE_SHUFFLES), twin=TWIN_SHUFFLES),
    }
    return explorer(
        "shuffle-the-steps",
        controls,
        render_order,
        describe_order,
        static=static,
        dpi=100,
        alt="A bar chart of the probability that A comes before B under the models without, "
        "with sinusoidal and with learned positional encodings, and the sinusoidal model's "
        "self-attention weights over the shuffled sequence.",
    )


TWIN_STORIES = list(range(6))


@plots.styled
def render_hop(story: int = 0, hop: int = 1):
    r = hop_report(story, hop)
    fig, ax = plots.figure(height=2.9)
    n = len(r["sentences"])
    colours = [plots.MARKER if j in r["facts"] else plots.RUNS[0] for j in range(n)]
    ax.barh(range(n), r["weights"], color=colours)
    ax.set_yticks(
        range(n), [f"{j}: {' '.join(s)}" for j, s in enumerate(r["sentences"])], fontsize=9
    )
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlim(0, 1)
    ax.grid(axis="x")
    ax.grid(axis="y", visible=False)
    ax.set_xlabel(f"weight at hop {hop}")
    # over the whole figure, not the narrow bar axes beside the long sentence labels, which
    # would clip it at the right
    fig.suptitle(
        f"{' '.join(r['question'])}?\nanswer {r['answer']}, predicted {r['prediction']}",
        fontsize=plots.STYLE["axes.titlesize"],
        fontweight=plots.STYLE["axes.titleweight"],
    )
    return fig


def describe_hop(story: int = 0, hop: int = 1) -> str:
    r = hop_report(story, hop)
    heavy = int(np.argmax(r["weights"]))
    which = {
        r["facts"][0]: "the first supporting fact (the pick-up)",
        r["facts"][1]: "the second supporting fact (the last move)",
    }
    return (
        f"story {story}, hop {hop} of {HOPS_SHOWN}: heaviest sentence {heavy}, weight "
        f"{r['weights'][heavy]:.3f}\n"
        f'  "{" ".join(r["sentences"][heavy])}": {which.get(heavy, "not a supporting fact")}\n'
        f"  {' '.join(r['question'])}?  answer {r['answer']}, predicted {r['prediction']}"
    )


def step_through_hops(static: bool = False):
    """A test story of the two-fact task and a hop of the three-hop memory network: where that
    hop reads.
    """
    test = story_runs.memory_data(2)[1]
    controls = {
        "story": Control("story", range(len(test)), twin=TWIN_STORIES),
        "hop": Control("hop", range(1, HOPS_SHOWN + 1)),
    }
    return explorer(
        "step-through-hops",
        controls,
        render_hop,
        describe_hop,
        static=static,
        dpi=100,
        alt="A horizontal bar chart of one hop's attention over the sentences of a story, the "
        "two supporting facts in the marker colour, with the question and the answer above.",
    )


@plots.styled
def document_weights(
    model: hierarchical.Hierarchical, trained: dict, docs: documents.Documents, names
):
    """Section 2's figure: both levels' weights on document 0 of ``docs`` for each trained
    model of ``trained`` ({seed: params}), the words written in, the trigger outlined.

    names: the word of each token id.  Returns the figure.
    """
    if not isinstance(trained, dict) or not trained:
        raise ValueError("trained must be a non-empty {seed: params} dict")
    doc = documents.Documents(docs.tokens[:1], docs.labels[:1], docs.trigger[:1])
    sentences, words_per = doc.tokens.shape[1:]
    fig, axes = plots.figure(
        len(trained), 2, height=2.3 * len(trained), gridspec_kw={"width_ratios": [3, 1.2]}
    )
    axes = np.atleast_2d(axes)
    j, t = doc.trigger[0]
    for k, (seed, params) in enumerate(trained.items()):
        out = model.forward(params, doc.tokens)
        words = out.parts["word weights"][0]
        heat, bars = axes[k]
        plots.heatmap(
            heat,
            words,
            [f"sentence {i}" for i in range(sentences)],
            [str(i) for i in range(words_per)],
            title=f"seed {seed}: word weights (dark = 1)",
            colorbar=False,
            row_axis="",  # a row is "sentence i"
        )
        for (row, col), weight in np.ndenumerate(words):
            heat.text(
                col,
                row,
                names[doc.tokens[0, row, col]],
                ha="center",
                va="center",
                fontsize=9,
                color="white" if weight > 0.6 else plots.INK,
            )
        heat.add_patch(
            Rectangle((t - 0.5, j - 0.5), 1, 1, fill=False, edgecolor=plots.MARKER, lw=2.5)
        )
        heat.set_xlabel("word")
        heat.set_ylabel("")
        bars.barh(
            range(sentences),
            out.weights[0],
            color=[plots.MARKER if i == j else plots.RUNS[k % 2] for i in range(sentences)],
        )
        bars.set_ylim(sentences - 0.5, -0.5)
        bars.set_yticks(range(sentences), [str(i) for i in range(sentences)])
        bars.set_xlim(0, 1)
        bars.set_title("sentence weights")
        bars.grid(axis="x")
    return fig
