"""Live widgets and their static twins (Part I; the mechanism serves every Part).

A widget is three things: the choices a reader can make (one list of values
per control), ``render(**choice)`` drawing a matplotlib figure, and
``describe(**choice)`` giving the numbers shown beneath it.

- :func:`live` wires them to ipywidgets sliders; it needs a running kernel.
- :func:`static_twin` renders every combination of choices in advance and
  returns HTML whose sliders swap the pictures and numbers in the browser,
  with no kernel and nothing fetched from elsewhere.

The Part I widgets (:func:`drop_a_step`, :func:`change_the_seed`,
:func:`pick_an_example`), the Part II widgets (:func:`pick_a_sentence`,
:func:`udhr_seed`, :func:`query_variant`) and the Part III widget
(:func:`pick_a_flavour`) are built from these two.
"""

from __future__ import annotations

import base64
import html
import io
import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np

from . import lesson, memory, plots, selfattention, taxonomy, udhr

if TYPE_CHECKING:
    import IPython.display
    import ipywidgets


# ------------------------------------------------------------------ the mechanism
@dataclass
class Control:
    """One slider: its label, the values it can take, and the value it starts at."""

    label: str
    values: list
    default: object = None

    def __post_init__(self):
        if not self.values:
            raise ValueError(f"control {self.label!r} needs at least one value")
        if self.default is None:
            self.default = self.values[0]
        if self.default not in self.values:
            raise ValueError(f"default {self.default!r} of {self.label!r} is not among its values")


def _png(fig, dpi: int) -> str:
    """The figure as a PNG data URI, reduced to a 64-colour palette (about a third of the bytes)."""
    from PIL import Image

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    plt.close(fig)
    image = Image.open(buffer).convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    small = io.BytesIO()
    image.save(small, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(small.getvalue()).decode("ascii")


def static_twin(
    name: str,
    controls: dict[str, Control],
    render: Callable,
    describe: Callable,
    alt: str,
    dpi: int = 80,
) -> IPython.display.HTML:
    """Pre-render every combination of ``controls`` and return kernel-free HTML.

    name: a short identifier, unique on the page.  render(**choice) returns a
    figure; describe(**choice) returns text.  The HTML holds one PNG per
    combination (data URIs) and a few lines of JavaScript that show the one
    the sliders select.
    """
    from IPython.display import HTML

    if not re.fullmatch(r"[a-z][a-z0-9-]*", name):
        raise ValueError(f"twin name must be lowercase letters, digits and hyphens, got {name!r}")
    keys = list(controls)
    frames, texts = [], []
    for combo in itertools.product(*(controls[k].values for k in keys)):
        choice = dict(zip(keys, combo))
        frames.append(_png(render(**choice), dpi))
        texts.append(describe(**choice))
    sizes = [len(controls[k].values) for k in keys]
    labels = [[str(v) for v in controls[k].values] for k in keys]
    starts = [controls[k].values.index(controls[k].default) for k in keys]
    sliders = "".join(
        f'<label style="margin-right:1.5em">{html.escape(controls[k].label)} '
        f'<input type="range" min="0" max="{n - 1}" step="1" value="{s}" data-control="{i}" '
        f'aria-label="{html.escape(controls[k].label)}"> <output></output></label>'
        for i, (k, n, s) in enumerate(zip(keys, sizes, starts))
    )
    data = json.dumps({"frames": frames, "texts": texts, "sizes": sizes, "labels": labels})
    first = int(np.ravel_multi_index(starts, sizes))
    return HTML(f"""<div class="static-twin" id="twin-{name}" style="border:1px solid #ccc;padding:0.6em;background:#fff;color:#222">
<div class="twin-controls">{sliders}</div>
<img class="twin-figure" alt="{html.escape(alt)}" style="width:100%;height:auto" src="{frames[first]}">
<pre class="twin-numbers" style="background:#f6f6f6;color:#222;margin:0.3em 0 0 0;white-space:pre-wrap">{html.escape(texts[first])}</pre>
<script type="application/json" class="twin-data">{data}</script>
<script>
(function () {{
  var root = document.getElementById("twin-{name}");
  var data = JSON.parse(root.querySelector(".twin-data").textContent);
  var inputs = root.querySelectorAll("input[data-control]");
  function show() {{
    var index = 0;
    inputs.forEach(function (input, i) {{
      index = index * data.sizes[i] + Number(input.value);
      input.parentNode.querySelector("output").textContent = data.labels[i][Number(input.value)];
    }});
    root.querySelector(".twin-figure").src = data.frames[index];
    root.querySelector(".twin-numbers").textContent = data.texts[index];
  }}
  inputs.forEach(function (input) {{ input.addEventListener("input", show); }});
  show();
}})();
</script>
</div>""")


def live(controls: dict[str, ipywidgets.Widget], render: Callable, describe: Callable):
    """ipywidgets controls driving ``render`` and ``describe`` with a running kernel."""
    import ipywidgets as widgets
    from IPython.display import display

    out = widgets.Output()

    def update(**choice):
        with out:
            out.clear_output(wait=True)
            display(render(**choice))
            plt.close("all")
            print(describe(**choice))

    box = widgets.VBox([widgets.HBox(list(controls.values())), out])
    widgets.interactive_output(update, controls)
    return box


# ------------------------------------------------------------------ Part I
EXAMPLE_COUNT = lesson.SPLIT[2]


@lru_cache(maxsize=1)
def _lesson_context():
    """The held-out set and the lesson's two trained runs, computed once."""
    train_set, _, heldout = lesson.split(lesson.make_sequences())
    return heldout, lesson.train_runs(lesson.INIT_SEEDS, train_set)


def _example(index: int) -> lesson.Sequences:
    """Held-out sequence ``index`` (0..179) as a one-sequence set."""
    heldout, _ = _lesson_context()
    return heldout[lesson.check_example(index, len(heldout))]


def drop_report(example: int, step: int) -> dict:
    """Both runs on held-out example ``example`` with ``step`` dropped: weights and p before and after.

    Returns {"weights": (2, T), "without": (2, T), "p": (2,), "p_without": (2,), "marker": int}.
    """
    step = lesson.check_step(step)
    chosen = _example(example)
    _, runs = _lesson_context()
    keep = np.arange(lesson.STEPS) != step
    before, after = (lesson.forward(runs, chosen.inputs, k) for k in (None, keep))
    return {
        "weights": before.weights[:, 0],
        "without": after.weights[:, 0],
        "p": lesson.probability(before.logit)[:, 0],
        "p_without": lesson.probability(after.logit)[:, 0],
        "marker": int(chosen.markers[0]),
    }


def _render_drop(example: int, step: int):
    r = drop_report(example, step)
    fig, axes = plots.figure(2, 1, width=7.5, height=2.6, sharey=True)
    for run, ax in enumerate(axes):
        plots.bars(
            ax,
            {"before": r["weights"][run], f"step {step} dropped": r["without"][run]},
            marker=r["marker"],
            colours=(plots.RUNS[run], plots.AFTER),
            title=f"run {run + 1}: p = {r['p'][run]:.3f} → {r['p_without'][run]:.3f}",
        )
        ax.text(step, 0.02, "✕", ha="center", color=plots.INK, fontsize=12, fontweight="bold")
    return fig


def describe_drop(example: int, step: int) -> str:
    r = drop_report(example, step)
    lines = [f"held-out example {example}: marker step {r['marker']}, dropped step {step}"]
    for run in range(2):
        lines.append(
            f"run {run + 1}: weight of step {step} {r['weights'][run][step]:.3f};  "
            f"p(label 1) {r['p'][run]:.3f} -> {r['p_without'][run]:.3f}  "
            f"(moved {abs(r['p_without'][run] - r['p'][run]):.3f})"
        )
    return "\n".join(lines)


def seed_report(seed: int, example: int = 0) -> dict:
    """Train one network from ``seed``; measure it on the held-out set and on one example.

    Returns held-out accuracy, marker weight and hit rate (floats), and the
    example's "weights" and removal "effects" (each (T,)) and its "marker".
    """
    seed = lesson.rng.check_seed(seed)
    params = lesson.train(seed)
    heldout, _ = _lesson_context()
    chosen = _example(example)
    weight, hit = lesson.marker_weight(params, heldout)
    p, p_without = lesson.removal_effects(params, chosen.inputs)
    return {
        "seed": seed,
        "heldout_accuracy": float(lesson.accuracy(params, heldout)),
        "marker_weight": float(weight),
        "marker_hit_rate": float(hit),
        "weights": lesson.forward(params, chosen.inputs).weights[0],
        "effects": np.abs(p_without - p[..., None])[0],
        "marker": int(chosen.markers[0]),
    }


@lru_cache(maxsize=256)
def _seed_report_cached(seed: int, example: int) -> dict:
    return seed_report(seed, example)


def _render_seed(seed: int, example: int = 0):
    r = _seed_report_cached(seed, example)
    fig, axes = plots.figure(2, 1, width=8.0, height=2.5)
    plots.bars(
        axes[0],
        {f"seed {seed}": r["weights"]},
        marker=r["marker"],
        colours=(plots.RUNS[0],),
        title=f"weights (held-out accuracy {r['heldout_accuracy']:.4f})",
    )
    plots.bars(
        axes[1],
        {f"seed {seed}": r["effects"]},
        marker=r["marker"],
        colours=(plots.AFTER,),
        ylabel="|Δp| when dropped",
        title="removal effects",
        ylim=(0, 0.5),
    )
    return fig


def describe_seed(seed: int, example: int = 0) -> str:
    r = _seed_report_cached(seed, example)
    heavy, moved = int(np.argmax(r["weights"])), int(np.argmax(r["effects"]))
    return (
        f"init seed {seed}: held-out accuracy {r['heldout_accuracy']:.4f}, "
        f"mean weight on the marker {r['marker_weight']:.4f}, "
        f"heaviest step is the marker in {r['marker_hit_rate']:.4f}\n"
        f"held-out example {example} (marker step {r['marker']}): heaviest step {heavy} "
        f"(weight {r['weights'][heavy]:.3f}), most influential step {moved} (|Δp| {r['effects'][moved]:.3f})"
    )


def example_report(example: int) -> dict:
    """Readings, both runs' weights and both runs' removal effects for one held-out example."""
    chosen = _example(example)
    _, runs = _lesson_context()
    p, p_without = lesson.removal_effects(runs, chosen.inputs)
    return {
        "readings": chosen.readings[0],
        "marker": int(chosen.markers[0]),
        "label": int(chosen.labels[0]),
        "weights": lesson.forward(runs, chosen.inputs).weights[:, 0],
        "effects": np.abs(p_without - p[..., None])[:, 0],
        "p": p[:, 0],
    }


def example_figure(
    readings,
    marker: int,
    line: float,
    title: str,
    weights: dict,
    effects: dict,
    weights_title: str = "attention weights",
    effects_title: str = "removal effects",
    colours=plots.RUNS,
):
    """Three panels for one sequence (every Part): its readings (marker highlighted, ``line`` dashed),
    the weights and the removal effects of each named run or head ({name: (T,)}), in matching colours."""
    fig, axes = plots.figure(3, 1, width=9.5, height=2.5)
    plots.readings(axes[0], readings, marker, line, title=title)
    plots.bars(axes[1], weights, marker=marker, colours=colours, title=weights_title)
    plots.bars(
        axes[2],
        effects,
        marker=marker,
        colours=colours,
        ylabel="|Δp| when dropped",
        title=effects_title,
    )
    return fig


def _render_example(example: int):
    r = example_report(example)
    return example_figure(
        r["readings"],
        r["marker"],
        lesson.THRESHOLD,
        f"example {example}: marker step {r['marker']}, label {r['label']}",
        {"run 1": r["weights"][0], "run 2": r["weights"][1]},
        {"run 1": r["effects"][0], "run 2": r["effects"][1]},
    )


def describe_example(example: int) -> str:
    r = example_report(example)
    lines = [
        f"held-out example {example}: marker step {r['marker']}, reading there "
        f"{r['readings'][r['marker']]:.3f}, label {r['label']}"
    ]
    for run in range(2):
        heavy, moved = int(np.argmax(r["weights"][run])), int(np.argmax(r["effects"][run]))
        lines.append(
            f"run {run + 1}: p(label 1) {r['p'][run]:.3f}; heaviest step {heavy} "
            f"(weight {r['weights'][run][heavy]:.2f}); most influential step {moved} "
            f"(|Δp| {r['effects'][run][moved]:.3f})"
        )
    return "\n".join(lines)


TWIN_EXAMPLES = 6  # held-out examples offered by the static twins of "drop a step" ...
TWIN_BROWSE = 24  # ... and of "pick an example"
TWIN_SEEDS = list(range(lesson.INIT_SEEDS[0], lesson.INIT_SEEDS[0] + 16))


def drop_a_step(static: bool = False):
    """Pick a held-out example and a step; both runs' weights and p before and after dropping it."""
    if static:
        controls = {
            "example": Control("held-out example", list(range(TWIN_EXAMPLES))),
            "step": Control("dropped step", list(range(lesson.STEPS)), 11),
        }
        return static_twin(
            "drop-a-step",
            controls,
            _render_drop,
            describe_drop,
            alt="Two bar charts of attention weights over 12 steps, for run 1 and run 2, "
            "before and after the chosen step is dropped and the rest renormalised.",
        )
    import ipywidgets as w

    return live(
        {
            "example": w.IntSlider(0, 0, EXAMPLE_COUNT - 1, description="example"),
            "step": w.IntSlider(11, 0, lesson.STEPS - 1, description="drop step"),
        },
        _render_drop,
        describe_drop,
    )


def change_the_seed(static: bool = False):
    """Pick an init seed; retrain (about 30 ms) and show held-out accuracy, and example 0's weights and removal effects."""
    if static:
        controls = {"seed": Control("init seed", TWIN_SEEDS)}
        return static_twin(
            "change-the-seed",
            controls,
            _render_seed,
            describe_seed,
            alt="Two bar charts for the network trained from the chosen init seed: its attention "
            "weights over the 12 steps of held-out example 0, and each step's removal effect.",
        )
    import ipywidgets as w

    return live(
        {
            "seed": w.BoundedIntText(
                lesson.INIT_SEEDS[0], min=0, max=2**31 - 1, description="init seed"
            )
        },
        _render_seed,
        describe_seed,
    )


def pick_an_example(static: bool = False):
    """Browse held-out sequences: readings, both runs' weights and removal effects."""
    if static:
        controls = {"example": Control("held-out example", list(range(TWIN_BROWSE)))}
        return static_twin(
            "pick-an-example",
            controls,
            _render_example,
            describe_example,
            alt="Three bar charts for one held-out sequence: its readings with the marked "
            "step highlighted, both runs' attention weights, and both runs' removal effects.",
        )
    import ipywidgets as w

    return live(
        {"example": w.IntSlider(0, 0, EXAMPLE_COUNT - 1, description="example")},
        _render_example,
        describe_example,
    )


# ------------------------------------------------------------------ Part II
TWIN_UDHR_SEEDS = list(range(6))


def udhr_run(seed: int = 0, query: str = "token", progress: bool = False) -> udhr.TrainingResult:
    """The UDHR head trained for 4000 iterations (Part II, section 3); :func:`lib.udhr.train` remembers it.

    ``progress`` shows a bar when the head has to be trained (a few seconds).
    """
    return udhr.train(udhr.rng.check_seed(seed), query=udhr.check_query(query), progress=progress)


def sentence_report(index: int, seed: int = 0, query: str = "token") -> dict:
    """One corpus sentence through a trained head (Part II, section 4).

    Returns tokens (n,), weights (n, n), predicted (n,) token strings, p_true
    (n,), heaviest (n,) key index per query, and effect (n,): how far p_true
    moves when that heaviest key is dropped and the rest renormalised.
    """
    index = lesson.check_example(index, len(udhr.SENTENCES))
    tokens = udhr.SENTENCES[index]
    run = udhr_run(udhr.rng.check_seed(seed), udhr.check_query(query))
    weights = udhr.attention_weights(run, tokens)
    probs = udhr.predict(run, tokens)
    ids = np.array(udhr.encode(tokens))
    heaviest = weights.argmax(axis=1)
    effects = udhr.removal_effects(run, tokens)
    rows = np.arange(len(tokens))
    return {
        "tokens": tokens,
        "weights": weights,
        "predicted": udhr.decode(probs.argmax(axis=1)),
        "p_true": probs[rows, ids],
        "heaviest": heaviest,
        "effect": effects[rows, heaviest],
    }


def _render_sentence(sentence: int):
    r = sentence_report(sentence)
    n = len(r["tokens"])
    fig, axes = plots.figure(
        2, 1, width=10.5, height=0.28 * n + 2.2, gridspec_kw={"width_ratios": [3, 2]}
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
    axes[1].set_yticks(
        rows, [f"{t} → {p}" for t, p in zip(r["tokens"], r["predicted"])], fontsize=8
    )
    axes[1].invert_yaxis()
    axes[1].set_xlim(0, 1)
    axes[1].grid(axis="x", color=plots.GRID)
    axes[1].set_title("prediction; heaviest key removed")
    axes[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncols=2, fontsize=8)
    return fig


def describe_sentence(sentence: int) -> str:
    r = sentence_report(sentence)
    lines = [f"sentence {sentence}: " + " ".join(r["tokens"])]
    for i, token in enumerate(r["tokens"]):
        key = r["tokens"][r["heaviest"][i]]
        lines.append(
            f"{token:>14} -> {r['predicted'][i]:<14} p(true) {r['p_true'][i]:.3f}; heaviest key "
            f"{key!r} ({r['weights'][i, r['heaviest'][i]]:.2f}); dropping it moves p(true) by {r['effect'][i]:.3f}"
        )
    return "\n".join(lines)


def robust_sentence_summary(index: int, seed: int = 0) -> str:
    """The part of the sentence explorer that survives a change of machine (Part II, section 4)."""
    tokens = udhr.SENTENCES[lesson.check_example(index, len(udhr.SENTENCES))]
    run = udhr_run(seed)
    return (
        f"sentence {index} ({len(tokens)} tokens): {' '.join(tokens)}\n"
        f"the head shown (token query, seed {seed}) recalls more than {udhr.RECALL_FLOOR} of all training "
        f"tokens: {udhr.top1_accuracy(run) > udhr.RECALL_FLOOR}"
    )


def _render_udhr_seed(seed: int):
    run = udhr_run(seed)
    fig, axes = plots.figure(2, 1, width=10.5, height=3.8)
    plots.loss_curve(axes[0], run.loss_curve)
    axes[0].set_title(f"seed {seed}: training loss")
    plots.heatmap(
        axes[1], udhr.attention_weights(run), udhr.DISPLAY, udhr.DISPLAY, title="display sentence"
    )
    return fig


def describe_udhr_seed(seed: int) -> str:
    """What the seed explorer prints: the measured loss at the start, and coarse facts about the end.

    Training is chaotic (Part II, section 4): the last digits of a trained head
    depend on the machine, so only statements that survive a 1e-12 nudge of
    the initial weights are printed about the end of training.
    """
    run = udhr_run(seed)
    curve = run.loss_curve
    return (
        f"seed {seed}: loss per token {curve[0]:.4f} at iteration 1, {curve[79]:.4f} at iteration 80; "
        f"at iteration {len(curve)}: below {udhr.LOSS_CEILING} {curve[-1] < udhr.LOSS_CEILING}, "
        f"more than {udhr.RECALL_FLOOR} of the training tokens recalled "
        f"{udhr.top1_accuracy(run) > udhr.RECALL_FLOOR}"
    )


_QUERY_NAMES = {
    "token": "token",
    "mask": "blank",
    "position": "position",
}  # as Part II, section 4 names them


def _render_query_variants(sentence: int):
    tokens = udhr.SENTENCES[lesson.check_example(sentence, len(udhr.SENTENCES))]
    n = len(tokens)
    fig, axes = plots.figure(2, 1, width=11, height=0.26 * n + 2.6)
    for ax, query in zip(axes, ("token", "mask")):
        run = udhr_run(0, query)
        plots.heatmap(
            ax,
            udhr.attention_weights(run, tokens),
            tokens,
            tokens,
            colorbar=query == "mask",
            title=f"{_QUERY_NAMES[query]} query (top-1 on training sentences {udhr.top1_accuracy(run):.2f})",
        )
    return fig


def describe_query_variants(sentence: int) -> str:
    tokens = udhr.SENTENCES[lesson.check_example(sentence, len(udhr.SENTENCES))]
    lines = [f"sentence {sentence}: " + " ".join(tokens)]
    ids = np.array(udhr.encode(tokens))
    for query in ("token", "mask"):
        probs = udhr.predict(udhr_run(0, query), tokens)
        right = int((probs.argmax(axis=1) == ids).sum())
        lines.append(
            f"{_QUERY_NAMES[query]:>5} query: {right} of {len(tokens)} tokens predicted correctly; "
            f"final training loss {udhr_run(0, query).loss_curve[-1]:.2g}"
        )
    return "\n".join(lines)


def _sentence_explorer(name: str, render: Callable, describe: Callable, alt: str, static: bool):
    """A widget with one slider over the 16 sentences, live or as a static twin."""
    if static:
        choices = {"sentence": Control("sentence", list(range(len(udhr.SENTENCES))))}
        return static_twin(name, choices, render, describe, alt=alt)
    import ipywidgets as w

    return live(
        {"sentence": w.IntSlider(0, 0, len(udhr.SENTENCES) - 1, description="sentence")},
        render,
        describe,
    )


def pick_a_sentence(static: bool = False):
    """Any of the 16 sentences: its heat map, each query token's top prediction and the effect of its heaviest key."""
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
    """Retrain the head from another seed (about 2 s, with a progress bar): loss curve and display heat map."""
    if static:
        return static_twin(
            "udhr-seed",
            {"seed": Control("seed", TWIN_UDHR_SEEDS)},
            _render_udhr_seed,
            describe_udhr_seed,
            alt="The training loss curve of the head trained from the chosen seed, on a log scale, "
            "and the attention heat map of the display sentence.",
        )
    import ipywidgets as w

    def render(seed):
        udhr_run(seed, progress=True)  # trains (with a bar) unless this seed is cached
        return _render_udhr_seed(seed)

    return live(
        {"seed": w.BoundedIntText(0, min=0, max=2**32 - 1, description="seed")},
        render,
        describe_udhr_seed,
    )


def query_variant(static: bool = False):
    """The token query and the blank (query="mask") query side by side, on any sentence."""
    return _sentence_explorer(
        "query-variant",
        _render_query_variants,
        describe_query_variants,
        static=static,
        alt="Two attention heat maps of the chosen sentence side by side: on the left the head "
        "whose query is built from the token itself, on the right the head whose query "
        "is one shared blank vector that cannot see the token.",
    )


# ------------------------------------------------------------------ Part III
TWIN_FLAVOUR_SEEDS = [0, 1, 2]
FLAVOUR_EXAMPLE = 0  # the held-out example every flavour is shown on


def flavour_report(flavour: str, seeds=(0,), example: int = FLAVOUR_EXAMPLE) -> dict:
    """One flavour, trained from each seed, on one held-out example of Part I (Part III, section 4).

    Returns the example's "readings", "marker" and "label", and per seed its
    "weights" and removal "effects" (each (seeds, T)), "p" (seeds,) and the
    held-out "measures" (dicts from :func:`attention_measured.taxonomy.measure`).
    """
    heldout = taxonomy.lesson_data()[1]
    index = lesson.check_example(example, len(heldout))
    chosen = heldout[index : index + 1]
    weights, effects, probs, measures = [], [], [], []
    for seed in seeds:
        model, params = taxonomy.lesson_run(flavour, seed)
        p, p_without = taxonomy.removal_effects(model, params, chosen.inputs)
        weights.append(model.forward(params, chosen.inputs).attention.weights[0, 0])
        effects.append(np.abs(p_without[0] - p[0]))
        probs.append(float(p[0]))
        measures.append(_flavour_measures(flavour, seed))
    return {
        "readings": chosen.inputs[0, :, 0],
        "marker": int(chosen.marked[0, 0]),
        "label": int(chosen.targets[0]),
        "weights": np.array(weights),
        "effects": np.array(effects),
        "p": probs,
        "measures": measures,
    }


@cache
def _flavour_measures(flavour: str, seed: int) -> dict:
    return taxonomy.measure(*taxonomy.lesson_run(flavour, seed), taxonomy.lesson_data()[1])


def render_flavour(flavour: str, seeds=(0, 1), example: int = FLAVOUR_EXAMPLE):
    """Readings, weights and removal effects of one flavour on one held-out example, one colour per seed."""
    r = flavour_report(flavour, seeds, example)
    names = [f"seed {s}" for s in seeds]
    return example_figure(
        r["readings"],
        r["marker"],
        lesson.THRESHOLD,
        f"example {example}: marker step {r['marker']}, label {r['label']}",
        dict(zip(names, r["weights"])),
        dict(zip(names, r["effects"])),
        f"{flavour}: weights",
    )


def describe_flavour(flavour: str, seeds=(0, 1), example: int = FLAVOUR_EXAMPLE) -> str:
    r = flavour_report(flavour, seeds, example)
    lines = [
        f"{flavour}, held-out example {example} (marker step {r['marker']}, label {r['label']})"
    ]
    for i, seed in enumerate(seeds):
        m = r["measures"][i]
        heavy, moved = int(np.argmax(r["weights"][i])), int(np.argmax(r["effects"][i]))
        lines.append(
            f"seed {seed}: p(label 1) {r['p'][i]:.3f}\n"
            f"  heaviest step {heavy} (weight {r['weights'][i][heavy]:.3f}), "
            f"most influential step {moved} (|Δp| {r['effects'][i][moved]:.3f})\n"
            f"  all 180 held-out: accuracy {m['accuracy']:.4f}, "
            f"marker weight {m['marker_weight']:.4f}, agreement {m['agreement']:.4f}"
        )
    return "\n".join(lines)


def pick_a_flavour(static: bool = False):
    """Any flavour of section 4 and a seed: its weights and removal effects on one held-out example."""

    def render(flavour, seed):
        return render_flavour(flavour, (seed,))

    def describe(flavour, seed):
        return describe_flavour(flavour, (seed,))

    if static:
        controls = {
            "flavour": Control("flavour", list(taxonomy.SIDE_BY_SIDE), "feed-forward"),
            "seed": Control("seed", TWIN_FLAVOUR_SEEDS),
        }
        return static_twin(
            "pick-a-flavour",
            controls,
            render,
            describe,
            alt="Three bar charts for held-out example 0: its readings with the marked step "
            "highlighted, the chosen flavour's attention weights, and each step's removal effect.",
        )
    import ipywidgets as w

    return live(
        {
            "flavour": w.Dropdown(
                options=list(taxonomy.SIDE_BY_SIDE), value="feed-forward", description="flavour"
            ),
            "seed": w.BoundedIntText(0, min=0, max=2**31 - 1, description="seed"),
        },
        render,
        describe,
    )


HEAD_CHOICES = {"one head": (1, 0), "two heads: head 0": (2, 0), "two heads: head 1": (2, 1)}
TWIN_HEAD_EXAMPLES = list(range(6))


HEADS_SEED = (
    1  # the run whose heads split the work most clearly, and whose weights survive a 1e-12 nudge
)


def head_report(choice: str, example: int = 0, seed: int = HEADS_SEED) -> dict:
    """One head of the one-head or the two-head model on a held-out example of section 6.

    Returns the example's "readings", "marker", "label", "level" (mean reading),
    the head's "weights" and per-head removal "effects" (each (T,)), and "p".
    """
    if choice not in HEAD_CHOICES:
        raise ValueError(f"choice must be one of {list(HEAD_CHOICES)}, got {choice!r}")
    heads, head = HEAD_CHOICES[choice]
    heldout = selfattention.heads_data()[1]
    index = lesson.check_example(example, len(heldout))
    chosen = heldout[index : index + 1]
    model, params = selfattention.heads_run(heads, seed)
    _, weights = model.forward(params, chosen.inputs)
    p, without = selfattention.head_removal_effects(model, params, chosen.inputs)
    readings = chosen.inputs[0, :, 0]
    return {
        "readings": readings,
        "marker": int(chosen.marked[0, 0]),
        "label": int(chosen.targets[0]),
        "level": float(readings.mean()),
        "weights": weights[0, head],
        "effects": np.abs(without[0, head] - p[0]),
        "p": float(p[0]),
    }


def render_head(choice: str, example: int = 0):
    r = head_report(choice, example)
    colour = (plots.RUNS[HEAD_CHOICES[choice][1]],)  # head 0 blue, head 1 orange, as on the page
    return example_figure(
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
    heavy, moved = int(np.argmax(r["weights"])), int(np.argmax(r["effects"]))
    return (
        f"{choice}, held-out example {example}\n"
        f"marker step {r['marker']} reads {r['readings'][r['marker']]:.3f}, mean {r['level']:.3f}, "
        f"label {r['label']}, p(label 1) {r['p']:.3f}\n"
        f"heaviest step {heavy} (weight {r['weights'][heavy]:.3f}), "
        f"most influential step {moved} (|Δp| {r['effects'][moved]:.3f})"
    )


def pick_a_head(static: bool = False):
    """A head (of the one-head or the two-head model) and a held-out example: its weights and removal effects."""
    if static:
        controls = {
            "choice": Control("head", list(HEAD_CHOICES), "two heads: head 1"),
            "example": Control("example", TWIN_HEAD_EXAMPLES),
        }
        return static_twin(
            "pick-a-head",
            controls,
            render_head,
            describe_head,
            alt="Three bar charts for one held-out sequence: its readings with the marker highlighted "
            "and the mean dashed, the chosen head's weights, and the removal effect of each step "
            "on that head.",
        )
    import ipywidgets as w

    heldout = selfattention.heads_data()[1]
    return live(
        {
            "choice": w.Dropdown(
                options=list(HEAD_CHOICES), value="two heads: head 1", description="head"
            ),
            "example": w.IntSlider(0, 0, len(heldout) - 1, description="example"),
        },
        render_head,
        describe_head,
    )


TWIN_ORDER_EXAMPLES = list(range(4))
TWIN_SHUFFLES = list(range(6))


def order_report(example: int = 0, shuffle: int = 0, seed: int = 0) -> dict:
    """A held-out sequence of section 7, its steps shuffled, through the three order models.

    Returns "tokens" (L,) after the shuffle, "label" (A before B after the
    shuffle), "p" {positions: P(A first)} and "weights" {positions: (L, L)}.
    """
    heldout = selfattention.order_data()[1]
    tokens = selfattention.shuffled(
        heldout.inputs[lesson.check_example(example, len(heldout))], shuffle
    )
    a, b = int(np.flatnonzero(tokens == 0)[0]), int(np.flatnonzero(tokens == 1)[0])
    probs, maps = {}, {}
    for positions in selfattention.POSITIONS:
        model, params = selfattention.order_run(positions, seed)
        logit, weights, _ = model.forward(params, tokens[None])
        probs[positions], maps[positions] = float(taxonomy.sigmoid(logit[0])), weights[0]
    return {"tokens": tokens, "label": int(a < b), "p": probs, "weights": maps}


def _token_names(tokens) -> list[str]:
    return [selfattention.ORDER_TOKENS[t] if t < 2 else f"x{t}" for t in tokens]


def render_order(example: int = 0, shuffle: int = 0):
    r = order_report(example, shuffle)
    fig, axes = plots.figure(2, 1, width=7.2, height=2.8, gridspec_kw={"width_ratios": [1, 1.2]})
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
    """Shuffle the steps of a held-out sequence and watch the three order models (no, sinusoidal, learned positions)."""
    if static:
        controls = {
            "example": Control("example", TWIN_ORDER_EXAMPLES),
            "shuffle": Control("shuffle", TWIN_SHUFFLES),
        }
        return static_twin(
            "shuffle-the-steps",
            controls,
            render_order,
            describe_order,
            dpi=100,
            alt="A bar chart of the probability that A comes before B under the models without, with "
            "sinusoidal and with learned positional encodings, and the sinusoidal model's "
            "self-attention weights over the shuffled sequence.",
        )
    import ipywidgets as w

    heldout = selfattention.order_data()[1]
    return live(
        {
            "example": w.IntSlider(0, 0, len(heldout) - 1, description="example"),
            "shuffle": w.IntSlider(0, 0, 50, description="shuffle"),
        },
        render_order,
        describe_order,
    )


TWIN_STORIES = list(range(6))
HOPS_SHOWN = 3


def hop_report(story: int = 0, hop: int = 1, hops: int = HOPS_SHOWN, seed: int = 0) -> dict:
    """One test story of the two-fact task through the memory network with ``hops`` hops (section 8).

    Returns the story's "sentences", "question", "answer" and supporting "facts",
    the weights of hop ``hop`` (1-based) over its sentences, and the "prediction".
    """
    test = memory.memory_data(2)[1]
    index = lesson.check_example(story, len(test))
    if not 1 <= hop <= hops:
        raise ValueError(f"hop must be between 1 and {hops}, got {hop}")
    model, params = memory.memory_run(2, hops, seed)
    one = memory.Stories(
        test.sentences[index : index + 1],
        test.questions[index : index + 1],
        test.answers[index : index + 1],
        test.facts[index : index + 1],
    )
    logits, weights, _ = model.forward(params, *memory.encode(one))
    n = len(one.sentences[0])
    return {
        "sentences": one.sentences[0],
        "question": one.questions[0],
        "answer": memory.PLACES[one.answers[0]],
        "facts": tuple(int(f) for f in one.facts[0]),
        "weights": weights[hop - 1, 0, :n],
        "prediction": memory.PLACES[int(logits[0].argmax())],
        "hop": hop,
    }


def render_hop(story: int = 0, hop: int = 1):
    r = hop_report(story, hop)
    fig, ax = plots.figure(width=7.2, height=2.9)
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
    ax.set_title(f"{' '.join(r['question'])}?  answer {r['answer']}, predicted {r['prediction']}")
    return fig


def describe_hop(story: int = 0, hop: int = 1) -> str:
    r = hop_report(story, hop)
    heavy = int(np.argmax(r["weights"]))
    which = {
        r["facts"][0]: "the first supporting fact (the pick-up)",
        r["facts"][1]: "the second supporting fact (the last move)",
    }
    return (
        f"story {story}, hop {hop} of {HOPS_SHOWN}: heaviest sentence {heavy}, weight {r['weights'][heavy]:.3f}\n"
        f'  "{" ".join(r["sentences"][heavy])}": {which.get(heavy, "not a supporting fact")}\n'
        f"  {' '.join(r['question'])}?  answer {r['answer']}, predicted {r['prediction']}"
    )


def step_through_hops(static: bool = False):
    """A test story of the two-fact task and a hop of the three-hop memory network: where that hop reads."""
    if static:
        controls = {
            "story": Control("story", TWIN_STORIES),
            "hop": Control("hop", list(range(1, HOPS_SHOWN + 1))),
        }
        return static_twin(
            "step-through-hops",
            controls,
            render_hop,
            describe_hop,
            dpi=100,
            alt="A horizontal bar chart of one hop's attention over the sentences of a story, the two "
            "supporting facts in the marker colour, with the question and the answer above.",
        )
    import ipywidgets as w

    test = memory.memory_data(2)[1]
    return live(
        {
            "story": w.IntSlider(0, 0, len(test) - 1, description="story"),
            "hop": w.IntSlider(1, 1, HOPS_SHOWN, description="hop"),
        },
        render_hop,
        describe_hop,
    )
