"""Explorers that compute in the reader's page: the book's models written a second time in
JavaScript (the ``js`` folder beside this module), run by the browser with no server and nothing
loaded from outside the page.

A page opened from its own files (``file://``) may not import another file as a module, so
the explorer's script carries the source of each module it needs, once, and imports them from
``blob:`` URLs it makes in the page, each module's imports of its siblings pointed at theirs
(:func:`module_sources`, :func:`run_module`).  (``data:`` URLs, which this replaced, nest: a
module imported through another was base64-encoded twice, and a page carried three times its
code.)  Where JavaScript is off, the explorer stays hidden and the static twin of the same
explorer (:mod:`.widgets`) is what the reader sees.  The Node tests in ``tests/js`` hold each
JavaScript model equal to the library's.
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
def module_sources(name: str) -> dict[str, str]:
    """The package's JavaScript module ``name`` (``"lesson"`` for ``js/lesson.mjs``) and every
    sibling it imports, directly or through others: {name: source}, each module after those it
    imports (the order in which a page can load them)."""
    if not isinstance(name, str) or not re.fullmatch(r"[a-z_]+", name):
        raise ValueError(f"name must be a module of the js folder, like 'lesson', got {name!r}")
    path = FOLDER / f"{name}.mjs"
    if not path.is_file():
        known = sorted(p.stem for p in FOLDER.glob("*.mjs"))
        raise ValueError(f"name must be one of {known}, got {name!r}")
    source = path.read_text()
    if f'from "./{name}.mjs"' in source:
        raise ValueError(f"js/{name}.mjs imports itself")
    ordered: dict[str, str] = {}
    for sibling in _SIBLING.findall(source):
        for dependency, text in module_sources(sibling).items():
            if dependency == name:
                raise ValueError(f"js/{name}.mjs imports itself through js/{sibling}.mjs")
            ordered.setdefault(dependency, text)
    ordered[name] = source
    return ordered


_LOADER = """<script>
(function () {{
  // the modules of this explorer, each after those it imports: made blob: URLs in that order,
  // each module's imports of its siblings pointed at theirs (book/live.py)
  const sources = {sources};
  const urls = {{}};
  for (const [name, source] of Object.entries(sources)) {{
    const text = source.replace(/from "\\.\\/([a-z_]+)\\.mjs"/g, (_, m) => `from "${{urls[m]}}"`);
    urls[name] = URL.createObjectURL(new Blob([text], {{ type: "text/javascript" }}));
  }}
  import(urls[{entry}]).then((module) => {{
    {call}
  }});
}})();
</script>"""


def run_module(name: str, call: str) -> str:
    """A script that loads the package's JavaScript module ``name`` with what it imports
    (:func:`module_sources`) and then runs ``call``, JavaScript in which ``module`` is the
    loaded module's namespace."""
    sources = json.dumps(module_sources(name)).replace("</", "<\\/")  # never ends the script
    return _LOADER.format(sources=sources, entry=json.dumps(name), call=call)


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
"""
        + run_module(
            "lesson_page",
            'const root = document.getElementById("live-change-the-seed");\n'
            "    module.mountSeedExplorer(root, JSON.parse(root.dataset.hundred));",
        )
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
<p style="font-size: 0.9em">A bar's height is the step's weight; the marked step is shaded
pink, the dropped step crossed (✕). Click any step's column to drop that step instead.</p>
</div>
"""
        + run_module(
            "lesson_page",
            'const root = document.getElementById("live-drop-a-step");\n'
            "    module.mountDropExplorer(root, JSON.parse(root.dataset.runs));",
        )
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
<thead><tr><th>keys</th><th><i>m</i></th><th>rescale</th><th><i>l</i></th><th><i>o</i></th>
<th><i>o</i> / <i>l</i></th></tr></thead><tbody></tbody></table>
<p style="font-size: 0.85em">Keys read are blue, the block just read orange, the rest grey.
<i>m</i>: the largest score so far; rescale: e<sup><i>m</i> before − <i>m</i></sup>, what the
block multiplied the sums so far by; <i>l</i> and <i>o</i>: the sums of e<sup>score − <i>m</i>
</sup> and of e<sup>score − <i>m</i></sup> × value over the keys read.</p>
<pre class="live-description" style="white-space: pre-wrap"></pre>
</div>
"""
        + run_module(
            "online_softmax_page",
            'module.mountOnlineSoftmax(document.getElementById("live-online-softmax"));',
        )
    )


TYPED_QUERIES = {"token": "token", "blank": "mask", "position": "position"}  # page: library
TYPED_EXTRA = {"token": (), "mask": ("mask_embedding",), "position": ("positions",)}


def single_precision(params, names=None):
    """A model's parameters as a live explorer carries them (Part II's heads, Part IV's
    translators): each number rounded to single precision (float32, about 7 digits), half the
    bytes of the library's, so that the page keeps within its budget; returned as float64 Params,
    which the library's model reads as it reads its own.  ``names``: the arrays to keep, in the
    order the page carries them (default: every array, in the order of ``params``).  The Node
    tests hold the page equal to the library on these."""
    from ..core.params import Params

    checks.params(params, "params", ())
    if names is None:
        names = list(params)
    elif isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"names must be a list of the arrays' names, got {names!r}")
    checks.params(params, "params", names)
    return Params({n: np.asarray(params[n], dtype=np.float32).astype(float) for n in names})


def _float32_text(params) -> str:
    """Every array of ``params``, in its order, as base64 text of little-endian float32 numbers
    (what js/core.mjs's fromBase64 reads)."""
    flat = np.concatenate([np.ravel(value) for value in params.values()]).astype("<f4")
    return base64.b64encode(flat.tobytes()).decode()


def typed_sentence(heads: dict, sentence: str):
    """Part II's heads read a sentence the reader types, in the page (``js/cloze_page.mjs``): a
    box starting at ``sentence``, a choice of query (``heads``: {"token", "blank", "position"}
    to each trained head's Params, carried in single precision, :func:`single_precision`), the
    weights as a heat map whose cells give their numbers on hover or tap, and each token's
    prediction.  Words outside the vocabulary, too few or too many are refused with a message."""
    from IPython.display import HTML

    from ..models import cloze_head
    from ..tasks import cloze

    if not isinstance(heads, dict) or sorted(heads) != sorted(TYPED_QUERIES):
        raise TypeError(f"heads must map {sorted(TYPED_QUERIES)} to trained heads' Params")
    carried = {}
    for name, params in heads.items():
        kind = cloze_head.query_kind(params)
        if kind != TYPED_QUERIES[name]:
            want = TYPED_QUERIES[name]
            raise ValueError(f"heads[{name!r}] must be a {want!r} head, got {kind!r}")
        rounded = single_precision(params, (*cloze_head.NAMES, *TYPED_EXTRA[kind]))
        carried[name] = _float32_text(rounded)
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a string, got {type(sentence).__name__}")
    if len(cloze.encode(sentence)) > cloze.MAX_LEN:  # encode names any unknown word
        raise ValueError(f"sentence must have at most {cloze.MAX_LEN} words, as the page's box")
    data = {
        "heads": carried,
        "vocabulary": cloze.VOCAB,
        "longest": cloze.MAX_LEN,
        "sentence": sentence,
    }
    escaped = html.escape(json.dumps(data))
    words = html.escape(" ".join(cloze.VOCAB))
    return HTML(
        f"""<div class="live-explorer" id="live-typed-sentence" hidden data-start="{escaped}"
 style="border: 1px solid #9a9a9a; border-radius: 6px; padding: 0.5rem 0.8rem; margin: 1rem 0">
<p><strong>Your own sentence, read by the heads in your browser</strong></p>
<form class="live-form">
<label for="live-sentence">a sentence of the heads' words (letters only: any other character
separates two words)</label>
<input id="live-sentence" autocomplete="off" spellcheck="false" style="width: 100%">
<fieldset style="border: 0; padding: 0; margin: 0.3rem 0">
<legend style="font-size: 0.9em">query</legend>
<label><input type="radio" name="live-query" value="token" checked> token</label>
<label><input type="radio" name="live-query" value="blank"> blank</label>
<label><input type="radio" name="live-query" value="position"> position</label>
</fieldset>
</form>
<details style="font-size: 0.85em"><summary>the {len(cloze.VOCAB)} words the heads know</summary>
<p>{words}</p></details>
<p class="live-status" role="status" aria-live="polite" style="overflow-wrap: anywhere"></p>
<div class="live-map" data-cell-tips tabindex="0" role="region" aria-label="heat map"
 style="overflow-x: auto">
<svg width="100%" style="max-width: 34rem" role="img" aria-label="The attention weights of the
 typed sentence as a heat map, query words as rows and key words as columns; each cell gives its
 weight on hover or tap."></svg></div>
<p style="font-size: 0.85em">Rows: the query, the word attending; columns: the key, the word
attended to. White is a weight of 0, the darkest blue 1; hover over a cell, or tap it, for its
number. The grey diagonal is where a word would read itself, which the heads never do. The
sixteen sentences of the corpus are the heads' training sentences: recalling them is
memory.</p>
<p class="live-description"></p>
<style>
#live-typed-sentence th, #live-typed-sentence td {{ padding: 0.05em 0.3em; text-align: left;
  overflow-wrap: anywhere }}
#live-typed-sentence td:nth-child(3) {{ text-align: right; font-variant-numeric: tabular-nums }}
</style>
<p style="font-size: 0.85em; margin-bottom: 0.2em">Each word, what the head predicts there (in
bold where it is wrong), the probability it gives the word itself, and the key it weighs most,
with that weight:</p>
<table style="font-size: 0.8em; margin-left: 0">
<thead><tr><th>word</th><th>predicted</th><th>p(word)</th><th>heaviest key</th></tr></thead>
<tbody></tbody></table>
</div>
"""
        + run_module(
            "cloze_page",
            'const root = document.getElementById("live-typed-sentence");\n'
            "    module.mountTypedSentence(root, JSON.parse(root.dataset.start));",
        )
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
"""
        + run_module(
            "worked_example_page",
            'const root = document.getElementById("live-worked-example");\n'
            "    module.mountWorkedExample(root, JSON.parse(root.dataset.start));",
        )
    )


TRANSLATOR_BEAM = 4  # the beam width the translator's box starts at: the book's curves' (BEAM)
TRANSLATOR_MOST_BEAM = 16  # the widest beam the translator's box accepts
TRANSLATOR_CHECKED = 3  # test sentences of each length the Node tests translate (js_fixtures)


def translator_config(model) -> dict:
    """What the page's translator needs to know of a trained ``model`` beside its weights (Part
    IV): the Transformer's sizes, or the recurrent translator's (of kind "Bahdanau", the one the
    page twins)."""
    from ..models.recurrent import EncoderDecoder
    from ..models.transformer import Transformer

    if isinstance(model, Transformer):
        if model.mixed or not model.causal:
            raise ValueError("model must decode as the book's Transformer: causal, unpadded")
        kind, sizes = "Transformer", ("width", "heads", "feed_forward", "layers", "norm_first")
        sizes += ("positions",)
    elif isinstance(model, EncoderDecoder):
        if model.kind != "Bahdanau":
            raise ValueError(f"model must be Bahdanau's translator or a Transformer, got {model!r}")
        kind, sizes = "Bahdanau", ("embedding", "hidden", "units")
    else:
        raise TypeError(f"model must be a Transformer or an EncoderDecoder, got {model!r}")
    sizes += ("source_vocabulary", "target_vocabulary", "bos")
    return {"kind": kind, **{k: getattr(model, k) for k in sizes}}


def carried_translator(model, params) -> dict:
    """A trained translator as the page carries it: {config (:func:`translator_config`), names
    (each array's name and shape, in the order of ``params``), weights (:func:`single_precision`,
    as base64 text)}."""
    config = translator_config(model)
    rounded = single_precision(checks.params_of(model, params))
    return {
        "config": config,
        "names": [[name, list(value.shape)] for name, value in rounded.items()],
        "weights": _float32_text(rounded),
    }


def translator(models: dict, sentence: str):
    """Part IV's translators translate a sentence the reader types, in the page
    (``js/translation_page.mjs``): a box starting at ``sentence``, greedy decoding, beam search
    of a width the reader picks or the true previous words, and for each of ``models`` ({name:
    (model, params)}, carried in single precision, :func:`carried_translator`) its translation
    beside the grammar's and a heat map of where each output word looked, the grammar's
    alignment ringed.  Unknown words, sentences the grammar cannot parse and bad beam widths are
    refused with a message."""
    from IPython.display import HTML

    from ..tasks import translation

    if not isinstance(models, dict) or not models:
        raise TypeError("models must map each translator's name to its (model, params)")
    if not all(isinstance(pair, tuple) and len(pair) == 2 for pair in models.values()):
        raise TypeError("models must map each translator's name to its (model, params)")
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a string, got {type(sentence).__name__}")
    words = translation.translate(sentence).source  # names an unknown word or where it fails
    if len(words) > translation.LONGEST:
        raise ValueError(f"sentence must have at most {translation.LONGEST} words, as the box")
    data = {
        "lexicon": translation.LEXICON,
        "specials": list(translation.SPECIALS),
        "models": {name: carried_translator(*trained) for name, trained in models.items()},
        "sentence": sentence,
        "longest": translation.LONGEST,
        "beam": TRANSLATOR_BEAM,
        "most_beam": TRANSLATOR_MOST_BEAM,
    }
    escaped = html.escape(json.dumps(data))
    words = " ".join(
        f"<em>{kind}s</em>: {html.escape(', '.join(lexicon))}."
        for kind, lexicon in translation.LEXICON.items()
    )
    panels = "\n".join(
        f"""<div class="live-model" data-model="{html.escape(name)}">
<p class="live-output" style="margin-bottom: 0.2em"></p>
<p class="live-summary" style="font-size: 0.85em; margin-bottom: 0.2em"></p>
<div class="live-map" data-cell-tips tabindex="0" role="region" aria-label="heat map of the
 {html.escape(name)}" style="overflow-x: auto">
<svg width="100%" role="img" aria-label="Where each output word of the {html.escape(name)}
 looked, as a heat map: output words as rows, source words as columns; each cell gives its
 weight on hover or tap, and circles mark the source word the grammar translates there."></svg>
</div></div>"""
        for name in models
    )
    return HTML(
        f"""<div class="live-explorer" id="live-translator" hidden data-start="{escaped}"
 style="border: 1px solid #9a9a9a; border-radius: 6px; padding: 0.5rem 0.8rem; margin: 1rem 0">
<p><strong>Your own sentence, translated in your browser</strong></p>
<form class="live-form">
<label for="live-source">a sentence of the language: a determiner, perhaps an adjective and a
noun; a verb; another noun phrase; perhaps a preposition and a third; clauses joined by
"and"</label>
<textarea id="live-source" rows="2" autocomplete="off" spellcheck="false"
 style="width: 100%; resize: vertical"></textarea>
<fieldset style="border: 0; padding: 0; margin: 0.3rem 0">
<legend style="font-size: 0.9em">decoding</legend>
<label><input type="radio" name="live-decoding" value="greedy" checked> greedy</label>
<label><input type="radio" name="live-decoding" value="beam"> beam search, width</label>
<input id="live-beam" type="number" min="1" max="{TRANSLATOR_MOST_BEAM}" step="1"
 inputmode="numeric" aria-label="beam width" style="width: 3.5em">
<label><input type="radio" name="live-decoding" value="forced"> given the true previous
words</label>
</fieldset>
</form>
<details style="font-size: 0.85em"><summary>the {len(translation.DICTIONARY)} words of the
language</summary><p>{words}</p></details>
<p class="live-status" role="status" aria-live="polite" style="overflow-wrap: anywhere"></p>
<p class="live-reference"></p>
{panels}
<p style="font-size: 0.85em">Rows: the words each model wrote (or, given the true previous
words, the grammar's); columns: the source words. White is a weight of 0, the darkest blue 1;
hover over a cell, or tap it, for its number. The Transformer's map is its last layer's
cross-attention averaged over its heads. A circle marks the source word the grammar translates
at that row, drawn while the model's words still match the grammar's. Words underlined in bold
differ from the grammar's at the same position. The log-probability is the model's own score of
the words it wrote, the sum of each word's log-probability: closer to 0 means surer, and it
knows nothing of the grammar.</p>
<style>#live-translator .live-wrong {{ text-decoration: underline }}</style>
</div>
<noscript><p>With JavaScript on, a box here translates any sentence you type with both
models. The explorer of the previous page shows the test sentences' translations without
it.</p></noscript>
"""
        + run_module(
            "translation_page",
            'const root = document.getElementById("live-translator");\n'
            "    module.mountTranslator(root, JSON.parse(root.dataset.start));",
        )
    )
