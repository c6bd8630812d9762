"""Write the numbers that hold Part I's JavaScript twin (lib/attention_measured/book/js) to the
library: python tools/js_fixtures.py OUTDIR

Every number comes from the Python library, for 200 init seeds the book never uses (10000 to
10199; the book's are the data seed 20260218 with its streams 20260218..20260937, the init seeds
20260219..20260318, and the data seeds 1 and 7).  Floats are written with repr, so JSON holds
every bit; seeds of 2**53 and above are strings (JavaScript's numbers would round them).
tests/js/lesson.test.mjs reads the files:

- rng.json      the streams' starting states and first draws, a few long streams, seeds up to
                2**64 - 1
- data.json     the lesson's 720 sequences, two sequences from each fixture seed's streams,
                Python's round() on ties and ordinary numbers
- runs.json     per seed: initial and trained parameters, five points of the loss curve, the
                accuracies, the weight on the marker and its hit rate, what dropping the marker
                does against other steps, and held-out sequence 0's weights and removal effects;
                and one seed trained with other options (data seed 10300, 50 epochs, rate 0.3)
- forward.json  forward passes, removal tests, losses and gradients on chosen cases, and the
                softmax, sigmoid and log(1 + e^z) on chosen numbers
- self_attention.json  Part II's self-attention (tests/js/self_attention.test.mjs): 200 random
                cases (n <= 6 steps, d_model <= 6, d and dv <= 4, masks with rows that allow
                nothing, the division by sqrt(d) on and off) and the worked example of
                chapters/taxonomy/05-self-attention.ipynb with and without a causal mask
- online_softmax.json  the online softmax of one query (tests/js/online_softmax.test.mjs):
                200 random cases (1 to 16 keys, values of 1 to 3 numbers, masked keys, rows with
                every key masked, blocks of 1 to m + 1 keys), each block's running state from
                attention.online_softmax and the plain softmax times the values
- cloze.json    Part II's heads reading typed sentences (tests/js/cloze_head.test.mjs): the
                three heads of chapters/udhr/04 (seed 0; token, blank and position query) as the
                page carries them (book.live.typed_sentence's data, single precision), their
                weights and probabilities on the 16 corpus sentences and 20 random ones of 2 to
                19 words, and tokenize and the vocabulary check on chosen texts
- drop.json     the drop-a-step explorer in the page (tests/js/lesson_page.test.mjs): the lesson's
                two runs' parameters as the page gets them (book.live.drop_explorer's data), and
                for each of the 180 held-out examples and each of its 12 steps, drop_report's
                numbers and describe_drop's text
- translators.json  Part IV's translators translating typed sentences
                (tests/js/translators.test.mjs): the Transformer and Bahdanau's translator of
                chapters/seq2seq/04 (seed 0) as the page carries them (book.live.translator's
                data, single precision), and translation_runs.translation_of on the same weights
                for 108 test sentences (three of every length from 5 to 40): greedy and beam 4
                on each, beams 2, 3 and 8 on every fourth, each with its words, log-probability,
                weights and measures, and the weights and words given the true previous words;
                two untrained Transformers of other shapes (pre-norm with two layers, no
                positions) on ten of them; and the grammar's translation or refusal of chosen
                texts
- meta.json     the machine, numpy, the seeds and the files' sizes

It runs offline in about ten seconds.  Any ATTENTION_MEASURED_NUDGE in the environment is
removed first: the fixtures are the un-nudged library.
"""

from __future__ import annotations

import contextlib
import html
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

os.environ.pop("ATTENTION_MEASURED_NUDGE", None)  # before the library reads it

import numpy as np  # noqa: E402

from attention_measured.book import live, marked_step_explorers  # noqa: E402
from attention_measured.core import attention, checks, losses, rng  # noqa: E402
from attention_measured.experiments import (  # noqa: E402
    cloze_runs,
    marked_step_runs,
    translation_runs,
)
from attention_measured.measures import markers, removal  # noqa: E402
from attention_measured.models import cloze_head  # noqa: E402
from attention_measured.tasks import (
    cloze,  # noqa: E402
    marked_step,  # noqa: E402
    translation,  # noqa: E402
)

SEEDS = range(10_000, 10_200)  # not among the book's (see the docstring)
FIRST_DRAWS = 8
LONG_STREAMS = (10_000, 10_001, 10_199)
LONG_DRAWS = 500
BIG_SEEDS = (2**32 - 1, 2**32, 2**48 + 12_345, 2**53 - 1, 2**53, 2**53 + 1, 2**63, 2**64 - 1)
CURVE_POINTS = (0, 1, 50, 100, 199)
OTHER_DATA_SEED = 10_300  # a data seed for train's options, not the book's either
MODEL = marked_step_runs.MODEL

BOOK_SEEDS = (
    set(range(marked_step.DATA_SEED, marked_step.DATA_SEED + marked_step.N_SEQUENCES))
    | set(range(marked_step_runs.INIT_SEEDS[0], marked_step_runs.INIT_SEEDS[0] + 100))
    | set(range(1, 1 + marked_step.N_SEQUENCES))
    | set(range(7, 7 + marked_step.N_SEQUENCES))
)


def floats(array) -> list:
    """A flat list of Python floats (repr round-trips them); non-finite ones as strings."""
    return [x if math.isfinite(x) else repr(x) for x in np.ravel(array).astype(float).tolist()]


def params_json(params) -> dict:
    return {name: floats(value) for name, value in params.items()}


def rng_fixture() -> dict:
    seeds = list(SEEDS)
    return {
        "seeds": seeds,
        "hashes": rng._hash32(np.array(seeds, dtype=np.uint64)).tolist(),
        "first_draws": [floats(row) for row in rng.draws(seeds, FIRST_DRAWS)],
        "long": [{"seed": s, "draws": floats(rng.draws(s, LONG_DRAWS))} for s in LONG_STREAMS],
        "big": [{"seed": str(s), "draws": floats(rng.draws(s, FIRST_DRAWS))} for s in BIG_SEEDS],
    }


def sequences_json(data) -> dict:
    return {
        "readings": floats(data.readings),
        "markers": data.markers.tolist(),
        "labels": data.labels.tolist(),
    }


def round_cases() -> list:
    ties = [k / 16 for k in range(-47, 48, 2)] + [1 / 32, 3 / 32, -5 / 32, 2.5, 0.5, -1.5]
    ordinary = np.random.default_rng(0).uniform(-3, 3, 200).tolist()
    ordinary += [0.0, -0.0, 0.0005, -0.0004, 0.35, 1e-9, 2.675]
    cases = [[x, 3, round(x, 3)] for x in ties + ordinary]
    cases += [[x, d, round(x, d)] for x in (2.5, 0.125, 0.375, -0.625, 1.2345) for d in (0, 1, 2)]
    return [[float(x), d, float(r)] for x, d, r in cases]


def data_fixture() -> dict:
    return {
        "lesson": sequences_json(marked_step.make_sequences()),
        "per_seed_n": 2,
        "per_seed": [sequences_json(marked_step.make_sequences(2, seed=s)) for s in SEEDS],
        "round": round_cases(),
    }


def run_fixture(seed: int, train_set, heldout) -> dict:
    """One seed trained as marked_step_runs.train does, and measured as the seed explorer and
    the lesson's section 4 measure it."""
    params, curve = marked_step_runs.train(seed)[1:]
    weight, hit = markers.marker_weight(MODEL, params, heldout)
    effects = removal.effects(*MODEL.removal_effects(params, heldout.inputs))  # (N, T)
    on_marker = np.arange(marked_step.STEPS) == heldout.markers[:, None]
    example = heldout[0].inputs
    return {
        "seed": seed,
        "initial": params_json(MODEL.init(seed)),
        "trained": params_json(params),
        "curve": {str(t): float(curve[t]) for t in CURVE_POINTS},
        "train_accuracy": float(markers.accuracy(MODEL, params, train_set)),
        "heldout_accuracy": float(markers.accuracy(MODEL, params, heldout)),
        "marker_weight": float(weight),
        "marker_hit_rate": float(hit),
        "marker_effect": float(effects[on_marker].mean()),
        "other_effect": float(effects[~on_marker].mean()),
        "influential_is_marker": float(np.mean(effects.argmax(-1) == heldout.markers)),
        "example_weights": floats(MODEL.forward(params, example).weights),
        "example_effects": floats(removal.effects(*MODEL.removal_effects(params, example))),
    }


def options_fixture() -> dict:
    """One seed trained with train's every option away from its default."""
    options = {"data_seed": OTHER_DATA_SEED, "epochs": 50, "learning_rate": 0.3}
    params, curve = marked_step_runs.train(SEEDS[0], **options)[1:]
    return {
        "seed": SEEDS[0],
        "options": options,
        "trained": params_json(params),
        "curve": floats(curve),
    }


def forward_case(name, params, data, keep=None, stored_as=None) -> dict:
    """The forward pass, the removal test and the loss and gradients on ``data``.  A set named
    by ``stored_as`` ("heldout", "train") is not written out again."""
    out = MODEL.forward(params, data.inputs, keep=keep)
    p, p_without = MODEL.removal_effects(params, data.inputs)
    loss, grads = MODEL.loss_and_grads(params, data.inputs, data.labels)
    case = {
        "name": name,
        "params": params_json(params),
        "stored_as": stored_as,
        "output": floats(out.output),
        "weights": floats(out.weights),
        "scores": floats(out.parts["scores"]),
        "pooled": floats(out.parts["pooled"]),
        "p": floats(p),
        "p_without": floats(p_without),
        "loss": float(loss),
        "grads": params_json(grads),
    }
    if stored_as is None:
        case.update(inputs=floats(data.inputs), labels=data.labels.tolist())
    if keep is not None:
        case["keep"] = np.asarray(keep).ravel().tolist()  # (T,) or (N, T)
    return case


def core_cases() -> dict:
    r = np.random.default_rng(1)
    softmax = []
    for rows, m in ((4, 12), (1, 12), (3, 5)):
        s = r.standard_normal((rows, m)) * 4
        keep = r.random((rows, m)) > 0.3
        keep[0] = False  # a row with nothing kept: zeros
        softmax.append(
            {
                "m": m,
                "scores": floats(s),
                "keep": keep.ravel().tolist(),
                "plain": floats(attention.softmax(s)),
                "kept": floats(attention.softmax(s, keep)),
            }
        )
    drop = r.standard_normal(12) * 3
    z = np.array([-800.0, -40.0, -30.5, -3.0, -1e-9, 0.0, 2.5e-5, 0.7, 29.0, 31.0, 900.0])
    return {
        "softmax": softmax,
        "drop_each_step": {"scores": floats(drop), "out": floats(attention.drop_each_step(drop))},
        "logit": floats(z),
        "sigmoid": floats(losses.sigmoid(z)),
        "softplus": floats(np.logaddexp(0.0, z)),
    }


def forward_fixture(train_set, heldout) -> dict:
    trained = {s: marked_step_runs.train(s).params for s in (10_001, 10_002, 10_003, 10_005)}
    five = heldout[:5]
    not_the_markers = np.arange(marked_step.STEPS) != five.markers[:, None]  # (5, T)
    cases = [
        forward_case("initial, five held-out", MODEL.init(10_000), five),
        forward_case("trained, one held-out", trained[10_001], heldout[0]),
        forward_case("trained, step 3 dropped", trained[10_002], five, np.arange(12) != 3),
        forward_case("trained, markers dropped", trained[10_003], five, not_the_markers),
        forward_case("initial, two", MODEL.init(10_004), heldout[5:7]),
        forward_case(
            "trained, one, step 5 dropped", trained[10_005], heldout[9], np.arange(12) != 5
        ),
        forward_case("trained, all held-out", trained[10_005], heldout, stored_as="heldout"),
        forward_case("initial, all training", MODEL.init(10_006), train_set, stored_as="train"),
    ]
    return {"cases": cases, "core": core_cases()}


SELF_ATTENTION_CASES = 200
SELF_ATTENTION_SEED = 20_261_207  # numpy's generator for the random cases
# the worked example of chapters/taxonomy/05-self-attention.ipynb: "the cat sat"
WORKED = {
    "tokens": ["the", "cat", "sat"],
    "X": [[1.0, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]],
    "W_Q": [[1.0, 0], [0, 1], [1, 0], [0, 1]],
    "W_K": [[0.0, 1], [1, 0], [0, 1], [1, 0]],
    "W_V": [[1.0, 0], [0, 2], [0, 1], [0, 0]],
}


def self_attention_case(X, W_Q, W_K, W_V, scale: bool, mask) -> dict:
    """Self-attention of one sequence as the library computes it: with the division by sqrt(d),
    multi_head_attention with one head and W_O the identity; without it, the same steps written
    out, the softmax the library's."""
    X, W_Q, W_K, W_V = (np.asarray(a, dtype=float) for a in (X, W_Q, W_K, W_V))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    d, dv = W_Q.shape[1], W_V.shape[1]
    if scale:
        scores = Q @ K.T / np.sqrt(d)
        output, weights = attention.multi_head_attention(
            X[None], X[None], W_Q, W_K, W_V, np.eye(dv), heads=1, mask=mask
        )
        output, weights = output[0], weights[0, 0]
    else:
        scores = Q @ K.T
        weights = attention.softmax(scores, mask)
        output = weights @ V
    case = {
        "n": X.shape[0],
        "scale": scale,
        "mask": None if mask is None else mask.ravel().tolist(),
    }
    case |= {name: floats(a) for name, a in (("X", X), ("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V))}
    for name, a in (("Q", Q), ("K", K), ("V", V), ("scores", scores), ("weights", weights)):
        case[name] = floats(a)
    case["output"] = floats(output)
    return case


def self_attention_fixture() -> dict:
    r = np.random.default_rng(SELF_ATTENTION_SEED)
    draws = {  # numbers as a reader types them, and numbers with every bit used
        "integers": lambda shape: r.integers(-3, 4, shape).astype(float),
        "tenths": lambda shape: np.round(r.uniform(-2, 2, shape), 1),
        "normal": lambda shape: r.standard_normal(shape),
    }
    cases = []
    for i in range(SELF_ATTENTION_CASES):
        n, d_model, d, dv = r.integers(1, 7), r.integers(1, 7), r.integers(1, 5), r.integers(1, 5)
        draw = draws[("integers", "tenths", "normal")[i % 3]]
        kind = ("none", "causal", "random", "random")[i // 3 % 4]
        mask = {"none": None, "causal": attention.causal_mask(n)}.get(kind)
        if kind == "random":
            mask = r.random((n, n)) < 0.7
            mask[r.integers(0, n)] = False  # a row that may attend to nothing: zeros
        X, W_Q, W_K, W_V = (
            draw(s) for s in ((n, d_model), (d_model, d), (d_model, d), (d_model, dv))
        )
        cases.append(self_attention_case(X, W_Q, W_K, W_V, bool(r.integers(0, 2)), mask))
    arrays = [WORKED[name] for name in ("X", "W_Q", "W_K", "W_V")]
    worked = {
        "tokens": WORKED["tokens"],
        "plain": self_attention_case(*arrays, True, None),
        "unscaled": self_attention_case(*arrays, False, None),
        "causal": self_attention_case(*arrays, True, attention.causal_mask(3)),
    }
    return {"cases": cases, "worked": worked}


def online_softmax_fixture() -> dict:
    draw = np.random.default_rng(53)
    cases = []
    for case in range(200):
        m, dv = int(draw.integers(1, 17)), int(draw.integers(1, 4))
        scores = draw.normal(0, 3, m)
        if case % 4 == 1:  # some keys masked
            scores[draw.random(m) < 0.3] = -np.inf
        elif case % 25 == 3:  # every key masked
            scores[:] = -np.inf
        elif case % 4 == 2:  # a rising maximum, so later blocks rescale the past
            scores = np.sort(scores)
        values = draw.normal(0, 2, (m, dv))
        block = int(draw.integers(1, m + 2))
        steps = attention.online_softmax(scores, values, block)
        cases.append(
            {
                "scores": floats(scores),
                "values": floats(values),
                "dv": dv,
                "block": block,
                "steps": [
                    {"top": floats(s.top)[0], "total": float(s.total[0]), "acc": floats(s.acc)}
                    for s in steps
                ],
                "plain": floats(attention.softmax(scores, np.isfinite(scores)) @ values),
            }
        )
    return {"cases": cases}


def _frame_data(page: str, name: str):
    """The JSON a live frame's HTML carries in its data-``name`` attribute: what the page reads."""
    start = page.index(f'data-{name}="') + len(f'data-{name}="')
    return json.loads(html.unescape(page[start : page.index('"', start)]))


TEXTS = [
    "All human beings are born free and equal in dignity and rights.",
    "  EVERYONE has the RIGHT to life, liberty -- and security of person!  ",
    "Everyone has the right to a nationality, and to freedom of thought.",
    "Everyone has the right to pizza and to sleep",
    "naïve résumé: l'homme, o'clock; 42 rights",
    "free",
    "",
    "the the the the the the the the the the the the the the the the the the the the",
]


def cloze_fixture() -> dict:
    heads = {
        name: cloze_runs.train(0, query=query).params for name, query in live.TYPED_QUERIES.items()
    }
    carried = _frame_data(live.typed_sentence(heads, " ".join(cloze.DISPLAY)).data, "start")
    draw = np.random.default_rng(531)
    sentences = [list(t) for t in cloze.SENTENCES]
    for _ in range(20):
        length = int(draw.integers(2, cloze.MAX_LEN + 1))
        sentences.append([cloze.VOCAB[i] for i in draw.integers(0, len(cloze.VOCAB), length)])
    cases = {}
    for name, params in heads.items():
        rounded = live.single_precision(params)
        cases[name] = [
            {
                "tokens": tokens,
                "ids": cloze.encode(tokens),
                "weights": floats(cloze_head.attention_weights(rounded, tokens)),
                "probs": floats(cloze_head.predict(rounded, tokens)),
            }
            for tokens in sentences
        ]

    def check(text):
        try:
            return {"text": text, "tokens": cloze.tokenize(text), "ids": cloze.encode(text)}
        except ValueError as error:
            return {"text": text, "tokens": cloze.tokenize(text), "error": str(error)}

    return {"page": carried, "cases": cases, "texts": [check(t) for t in TEXTS]}


def drop_fixture() -> dict:
    """Every held-out example with every step dropped, as the library's explorer reports and
    describes it, and the two runs' parameters read back from the page's own data."""
    runs = _frame_data(live.drop_explorer(marked_step_runs.two_runs()[1]).data, "runs")
    cases = []
    for example in range(marked_step_runs.EXAMPLES):
        for step in range(marked_step.STEPS):
            r = marked_step_explorers.drop_report(example, step)
            cases.append(
                {
                    "example": example,
                    "step": step,
                    "weights": floats(r["weights"]),
                    "without": floats(r["without"]),
                    "p": floats(r["p"]),
                    "p_without": floats(r["p_without"]),
                    "marker": r["marker"],
                    "text": marked_step_explorers.describe_drop(example, step),
                }
            )
    return {"runs": runs, "cases": cases}


TRANSLATORS = ("Transformer", "Bahdanau")  # the page's, seed 0
TRANSLATION_BEAMS = (1, 4)  # on every test sentence; and, on every fourth, the widths below
OTHER_BEAMS = (2, 3, 8)
PER_LENGTH = live.TRANSLATOR_CHECKED  # test sentences 0, 1 and 2 of each length 5 to 40: 108
# untrained translators of other shapes (drawn from init seeds the book never trains), so that
# the twin's pre-norm layers, stacks and missing positions are held to the library's too
UNTRAINED = {"Transformer, 2 layers, pre-norm": 7, "Transformer, no positions": 8}
GRAMMAR_TEXTS = [
    "the dog sees a red bird",
    "The Dog sees a red bird.",
    "every old farmer paints the green house behind a quick river and the fox hears a bird",
    "",
    "dog sees a bird",
    "the dog a bird",
    "the dog sees",
    "the dog sees a red",
    "the dog sees a bird near",
    "the dog sees a bird near the",
    "the dog sees a bird the fox",
    "the dog sees a bird and",
    "the cat sees a unicorn",
    "the red red dog sees a bird",
    "and the dog sees a bird",
    "the dog sees a bird near the tree under the stone",
]


def translation_case(model, params, words, beam: int) -> dict:
    r = translation_runs.translation_of(model, params, words, beam)
    return {
        "output": list(r["output"]),
        "log_prob": r["log_prob"],
        "weights": floats(r["weights"]),
        "measures": translation_runs.translation_measures(r),
    }


def translators_fixture() -> dict:
    """The two translators as the page carries them, read back from its own data, and their
    translations of 108 test sentences (greedy and beam 4; beams 2, 3 and 8 on every fourth),
    by the library on the same single-precision weights; two untrained Transformers of other
    shapes on ten sentences; and the grammar on chosen texts."""
    test = translation.book_data()[1]
    sentences = [
        [translation.SOURCE_WORDS[i] for i in test[n].source[k]]
        for n in sorted(test)
        for k in range(PER_LENGTH)
    ]
    trained = {name: translation_runs.run(name, 0) for name in TRANSLATORS}
    page = live.translator(
        {name: (r.model, r.params) for name, r in trained.items()}, " ".join(sentences[0])
    ).data
    chosen_models = {name: (r.model, r.params) for name, r in trained.items()}
    for name, seed in UNTRAINED.items():
        model = translation_runs.book_model(name)
        chosen_models[name] = (model, model.init(seed))
    models = {}
    for name, (model, params) in chosen_models.items():
        rounded = live.single_precision(params)
        chosen = sentences if name in TRANSLATORS else sentences[::11]
        cases = []
        for i, words in enumerate(chosen):
            with checks.trusted() if i else contextlib.nullcontext():  # the first, checked
                forced = translation_runs.translation_of(model, rounded, words, 1)
                beams = TRANSLATION_BEAMS + (OTHER_BEAMS if i % 4 == 0 else ())
                cases.append(
                    {
                        "source": words,
                        "reference": list(forced["reference"]),
                        "alignment": list(forced["alignment"]),
                        "forced": floats(forced["forced"]),
                        "forced_words": list(forced["forced_words"]),
                        "beams": {b: translation_case(model, rounded, words, b) for b in beams},
                    }
                )
        models[name] = {"carried": live.carried_translator(model, params), "cases": cases}

    def grammar(text):
        words = text.lower().replace(".", " ").split()
        try:
            pair = translation.translate(words)
        except ValueError as error:
            return {"text": text, "words": words, "error": str(error)}
        return {"text": text, "words": words, **{k: list(v) for k, v in pair._asdict().items()}}

    return {
        "page": _frame_data(page, "start"),
        "models": models,
        "grammar": [grammar(t) for t in GRAMMAR_TEXTS + [" ".join(s) for s in sentences[::9]]],
    }


def write(folder: Path, name: str, content: dict) -> int:
    text = json.dumps(content, separators=(",", ":"), allow_nan=False)
    (folder / name).write_text(text + "\n")
    return len(text) + 1


def main(outdir: str) -> None:
    start = time.perf_counter()
    ours = set(range(SEEDS[0], SEEDS[-1] + 2)) | set(range(OTHER_DATA_SEED, OTHER_DATA_SEED + 720))
    assert not BOOK_SEEDS & ours, "the fixture seeds must not be the book's"
    folder = Path(outdir)
    folder.mkdir(parents=True, exist_ok=True)
    train_set, _, heldout = marked_step.split(marked_step.make_sequences())
    runs = {
        "runs": [run_fixture(s, train_set, heldout) for s in SEEDS],
        "options": options_fixture(),
    }
    sizes = {
        "rng.json": write(folder, "rng.json", rng_fixture()),
        "data.json": write(folder, "data.json", data_fixture()),
        "runs.json": write(folder, "runs.json", runs),
        "forward.json": write(folder, "forward.json", forward_fixture(train_set, heldout)),
        "self_attention.json": write(folder, "self_attention.json", self_attention_fixture()),
        "drop.json": write(folder, "drop.json", drop_fixture()),
        "cloze.json": write(folder, "cloze.json", cloze_fixture()),
        "online_softmax.json": write(folder, "online_softmax.json", online_softmax_fixture()),
        "translators.json": write(folder, "translators.json", translators_fixture()),
    }
    meta = {
        "numpy": np.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "seeds": [SEEDS[0], SEEDS[-1]],
        "sizes": sizes,
        "seconds": round(time.perf_counter() - start, 2),
    }
    write(folder, "meta.json", meta)
    total = sum(sizes.values())
    print(f"wrote {len(sizes) + 1} files, {total / 1e6:.2f} MB, in {meta['seconds']} s to {folder}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
