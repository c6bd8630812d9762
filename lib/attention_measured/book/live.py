"""Explorers that compute in the reader's page: the book's models written a second time in
JavaScript (the ``js`` folder beside this module), run by the browser with no server and nothing
loaded from outside the page.

A page opened from its own files (``file://``) may not import another file as a module, so each
module is handed to the page as a ``data:`` URL, its imports of sibling modules rewritten to
theirs (:func:`module_url`).  Where JavaScript is off, the explorer stays hidden and the static
twin of the same explorer (:mod:`.widgets`) is what the reader sees.  The Node tests in
``tests/js`` hold each JavaScript model equal to the library's.
"""

from __future__ import annotations

import base64
import functools
import html
import json
import re
from pathlib import Path

import numpy as np

from ..core import checks

FOLDER = Path(__file__).with_name("js")

DEFAULT_SEED = 42  # the live explorer's first seed: one the static twin does not offer

_SIBLING = re.compile(r'from "\./([a-z_]+)\.mjs"')


@functools.cache
def module_url(name: str) -> str:
    """The package's JavaScript module ``name`` (``"lesson"`` for ``js/lesson.mjs``) as a
    ``data:`` URL that a page opened from its own files can import."""
    if not isinstance(name, str) or not re.fullmatch(r"[a-z_]+", name):
        raise ValueError(f"name must be a module of the js folder, like 'lesson', got {name!r}")
    path = FOLDER / f"{name}.mjs"
    if not path.is_file():
        known = sorted(p.stem for p in FOLDER.glob("*.mjs"))
        raise ValueError(f"name must be one of {known}, got {name!r}")
    source = path.read_text()
    if f'from "./{name}.mjs"' in source:
        raise ValueError(f"js/{name}.mjs imports itself")
    source = _SIBLING.sub(lambda m: f'from "{module_url(m.group(1))}"', source)
    return "data:text/javascript;base64," + base64.b64encode(source.encode()).decode()


def seed_explorer(hundred_seeds, hundred_weights):
    """Part I's seed explorer, computed in the page (section 5): a box for any init seed, the
    network trained on it by ``js/lesson.mjs``, its weights and removal effects on held-out
    example 0, and where its weight on the marker falls among the hundred seeds of the sweep,
    ``hundred_seeds`` (100,) and their ``hundred_weights`` (100,)."""
    from IPython.display import HTML

    seeds = [int(s) for s in checks.integers(hundred_seeds, "hundred_seeds", 0, 2**63 - 1)]
    weights = checks.array(hundred_weights, "hundred_weights", ndim=1).tolist()
    if len(seeds) != len(weights) or not seeds:
        raise ValueError(
            f"hundred_seeds and hundred_weights must have one length, got {len(seeds)} and "
            f"{len(weights)}"
        )
    data = html.escape(json.dumps({"seeds": seeds, "weights": weights}))
    return HTML(
        f"""<div class="live-explorer" id="live-change-the-seed" hidden data-hundred="{data}"
 style="border: 1px solid #9a9a9a; border-radius: 6px; padding: 0.5rem 0.8rem; margin: 1rem 0">
<p><strong>Any seed, trained in your browser</strong></p>
<form class="live-form">
<label for="live-seed">init seed, a whole number from 0 to 2<sup>64</sup>&#8239;−&#8239;1</label>
<input id="live-seed" name="seed" inputmode="numeric" autocomplete="off" value="{DEFAULT_SEED}"
 size="22">
<button type="submit">train</button>
</form>
<p class="live-status" role="status" aria-live="polite"></p>
<svg viewBox="0 0 340 300" width="100%" style="max-width: 34rem" role="img"
 aria-label="For the typed seed: bars of the weights on held-out example 0 over its 12 steps,
 bars of each step's removal effect, and a histogram of the hundred seeds' mean weights on the
 marker with the typed seed's as a line."></svg>
<pre class="live-description" style="white-space: pre-wrap"></pre>
<p style="font-size: 0.9em">The lesson's random stream has 2<sup>32</sup> states, so there are
at most that many different networks: seeds past it repeat earlier ones.</p>
</div>
<script type="module">
import {{ mountSeedExplorer }} from "{module_url("lesson_page")}";
const root = document.getElementById("live-change-the-seed");
mountSeedExplorer(root, JSON.parse(root.dataset.hundred));
</script>"""
    )


def drop_explorer(runs):
    """Part I's drop-a-step explorer, computed in the page (section 4): boxes for any of the 180
    held-out examples and any of its 12 steps, and both of the lesson's runs' weights and
    probability of label 1 before and after that step is dropped, drawn and described as
    :func:`~.marked_step_explorers.drop_a_step` draws and describes them.  ``runs``: the two
    runs' parameters, stacked (each name's array (2, ...), as ``train_runs`` returns them); the
    page draws the held-out examples itself (``js/lesson.mjs``)."""
    from IPython.display import HTML

    from ..models.single_query import SingleQuery

    names = sorted(SingleQuery().init(0))
    if not hasattr(runs, "keys") or sorted(runs.keys()) != names:
        raise TypeError(f"runs must be the two runs' stacked parameters {names}, got {runs!r:.60}")
    stacked = {name: checks.array(runs[name], f"runs[{name!r}]") for name in names}
    for name, value in stacked.items():
        if value.ndim == 0 or len(value) != 2:
            raise ValueError(f"runs[{name!r}] must stack two runs, got shape {value.shape}")
    two = [{name: value[run].ravel().tolist() for name, value in stacked.items()} for run in (0, 1)]
    data = html.escape(json.dumps(two))
    return HTML(
        f"""<div class="live-explorer" id="live-drop-a-step" hidden data-runs="{data}"
 style="border: 1px solid #9a9a9a; border-radius: 6px; padding: 0.5rem 0.8rem; margin: 1rem 0">
<p><strong>Any example, any step, in your browser</strong></p>
<form class="live-form">
<label for="live-example">held-out example, 0 to 179</label>
<input id="live-example" name="example" inputmode="numeric" autocomplete="off" value="0" size="5">
<label for="live-step">dropped step, 0 to 11</label>
<input id="live-step" name="step" inputmode="numeric" autocomplete="off" value="11" size="4">
<button type="submit">drop</button>
</form>
<p class="live-status" role="status" aria-live="polite"></p>
<svg viewBox="0 0 340 256" width="100%" style="max-width: 34rem" role="img"
 aria-label="For the chosen held-out example, run 1's and run 2's weights over its 12 steps
 before and after the chosen step is dropped; clicking a step drops it."></svg>
<pre class="live-description" style="white-space: pre-wrap"></pre>
<p style="font-size: 0.9em">Click a step's bars to drop that step instead.</p>
</div>
<script type="module">
import {{ mountDropExplorer }} from "{module_url("lesson_page")}";
const root = document.getElementById("live-drop-a-step");
mountDropExplorer(root, JSON.parse(root.dataset.runs));
</script>"""
    )


ONLINE_MOST_KEYS = 16  # keys the online softmax's boxes take (MOST_KEYS in the module)


def online_softmax_stepper(scores, values, block: int):
    """The online softmax of one query stepped block by block in the page (Part III, what
    attention costs), by ``js/online_softmax_page.mjs``: boxes holding its ``scores`` (m,) and
    its keys' ``values`` (m,), one number each, m at most 16, and the ``block`` size; buttons
    that read one block more or less; the keys, the running maximum, the rescaling, the running
    sums and, after the last block, the output beside the softmax of all the scores at once."""
    from IPython.display import HTML

    scores = checks.array(scores, "scores", ndim=1, finite=False)
    if not 1 <= len(scores) <= ONLINE_MOST_KEYS:
        raise ValueError(f"scores must hold 1 to {ONLINE_MOST_KEYS} numbers, got {len(scores)}")
    if np.isnan(scores).any() or np.isposinf(scores).any():
        raise ValueError("scores must be finite numbers or -inf (a masked key)")
    values = checks.array(values, "values", shape=scores.shape)
    block = checks.integer(block, "block", 1, len(scores))

    def row(numbers):
        return " ".join("-inf" if x == -np.inf else repr(float(x)) for x in numbers)

    boxes = {"scores": row(scores), "values": row(values), "block": str(block)}
    attr = {name: html.escape(text, quote=True) for name, text in boxes.items()}
    return HTML(
        f"""<div class="live-explorer" id="live-online-softmax" hidden
 style="border: 1px solid #9a9a9a; border-radius: 6px; padding: 0.5rem 0.8rem; margin: 1rem 0">
<p><strong>The online softmax, one block at a time</strong></p>
<form class="live-form">
<label for="live-online-scores">scores, one per key (-inf masks a key)</label>
<input id="live-online-scores" autocomplete="off" value="{attr["scores"]}" style="width: 100%">
<label for="live-online-values">values, one per key</label>
<input id="live-online-values" autocomplete="off" value="{attr["values"]}" style="width: 100%">
<label for="live-online-block">keys per block</label>
<input id="live-online-block" inputmode="numeric" autocomplete="off" value="{attr["block"]}"
 size="3">
<br>
<button type="button" data-step="start">start again</button>
<button type="button" data-step="back">back</button>
<button type="button" data-step="next">read the next block</button>
<button type="button" data-step="all">read all</button>
</form>
<p class="live-status" role="status" aria-live="polite"></p>
<svg width="100%" style="max-width: 34rem" role="img" aria-label="The keys in a row, each with
 its score and value: the blocks read so far, the block just read, and those not yet read."></svg>
<style>
#live-online-softmax th, #live-online-softmax td {{ padding: 0.1em 0.4em; text-align: right;
 font-variant-numeric: tabular-nums }}
#live-online-softmax .live-description:empty {{ display: none }}
</style>
<table class="live-online-table" style="font-size: 0.85em">
<thead><tr><th>keys</th><th>m</th><th>rescale</th><th>l</th><th>o</th><th>o / l</th></tr>
</thead><tbody></tbody></table>
<pre class="live-description" style="white-space: pre-wrap"></pre>
</div>
<script type="module">
import {{ mountOnlineSoftmax }} from "{module_url("online_softmax_page")}";
mountOnlineSoftmax(document.getElementById("live-online-softmax"));
</script>"""
    )


WORKED_LARGEST = 1e6  # the largest entry, in size, that the worked example's boxes accept
WORKED_MOST = {"tokens": 6, "d_model": 6, "d": 4, "dv": 4}  # sizes whose boxes fit a phone


def worked_example(tokens, X, W_Q, W_K, W_V):
    """The self-attention worked example of Part II (taxonomy, self-attention) computed in the
    page by ``js/self_attention.mjs``: boxes for every entry of ``X`` (n, d_model), one row per
    token of ``tokens`` (n names), and of ``W_Q``, ``W_K`` (d_model, d) and ``W_V`` (d_model,
    dv), starting at these numbers; the Q, K and V they give; a switch for the division by √d; a
    checkbox for each entry of the (n, n) mask; and the scores, the weights and the outputs.
    The page's paragraph above the frame says what to do with it, so the frame has only a
    heading (the script adds the rest)."""
    from IPython.display import HTML

    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, (list, tuple)):
        raise TypeError(f"tokens must be a list of names, one per row of X, got {tokens!r:.60}")
    if not all(isinstance(t, str) and t.strip() for t in tokens):
        raise TypeError(f"tokens must be non-empty strings, got {list(tokens)!r:.60}")
    n = len(tokens)
    if not 1 <= n <= WORKED_MOST["tokens"]:
        raise ValueError(f"tokens must name 1 to {WORKED_MOST['tokens']} rows, got {n}")

    def size(name, value):
        if not 1 <= value <= WORKED_MOST[name]:
            raise ValueError(f"{name} must be from 1 to {WORKED_MOST[name]}, got {value}")
        return value

    X = checks.array(X, "X", shape=(n, None))
    d_model = size("d_model", X.shape[1])
    W_Q = checks.array(W_Q, "W_Q", shape=(d_model, None))
    size("d", W_Q.shape[1])
    W_K = checks.array(W_K, "W_K", shape=W_Q.shape)
    W_V = checks.array(W_V, "W_V", shape=(d_model, None))
    size("dv", W_V.shape[1])
    matrices = {"X": X, "W_Q": W_Q, "W_K": W_K, "W_V": W_V}
    for name, value in matrices.items():
        if np.abs(value).max() > WORKED_LARGEST:
            raise ValueError(f"{name} must hold numbers from -1e6 to 1e6, as the page's boxes do")
    start = {"tokens": list(tokens)} | {name: m.tolist() for name, m in matrices.items()}
    data = html.escape(json.dumps(start))
    return HTML(
        f"""<div class="live-explorer" id="live-worked-example" hidden data-start="{data}"
 style="border: 1px solid #9a9a9a; border-radius: 6px; padding: 0.5rem 0.8rem; margin: 1rem 0">
<p><strong>The worked example, editable</strong></p>
</div>
<script type="module">
import {{ mountWorkedExample }} from "{module_url("worked_example_page")}";
const root = document.getElementById("live-worked-example");
mountWorkedExample(root, JSON.parse(root.dataset.start));
</script>"""
    )
