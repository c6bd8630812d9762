"""`make bench`: Part I's vectorised code against the plain-Python loop oracle, side by side,
and its steps-first layout against the page's (R..., N, T) layout.

Speed is reported as ratios measured in one run on one machine, never asserted
in a test.  Each timing is the best of a few repeats, after one warm-up call,
once on an idle machine and once while another process holds a core.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import single_query_oracle  # noqa: E402  (the loop version, kept beside the tests)
from timing import best_of, both_ways  # noqa: E402

from attention_measured.core.attention import softmax, softmax_backward
from attention_measured.core.losses import binary_cross_entropy, sigmoid
from attention_measured.core.params import Params
from attention_measured.core.training import fit
from attention_measured.experiments import marked_step_runs
from attention_measured.models.single_query import KEY_SIZE, SingleQuery, effective
from attention_measured.tasks import marked_step


class PageLayout(SingleQuery):
    """Part I's network with its arrays in the page's layout, (R..., N, T) with the steps last:
    the same sums as the library's steps-first pass, to compare their speed (the module
    docstring of single_query explains the trick)."""

    def loss_and_grads(self, params, inputs, labels):
        score_direction, readout_direction = effective(params)
        scores = _per_step(inputs, score_direction)  # (R..., N, T)
        weights = softmax(scores)
        pooled = _pooled(weights, inputs)  # (R..., N, C)
        logit = np.einsum("...nc,...c->...n", pooled, readout_direction) + params.bias[..., None]
        grad_logit = (sigmoid(logit) - labels) / len(labels)
        grad_readout_direction = np.einsum("...n,...nc->...c", grad_logit, pooled)
        grad_weights = _per_step(inputs, readout_direction)
        grad_weights *= grad_logit[..., None]
        grad_scores = softmax_backward(weights, grad_weights)
        grad_score_direction = _pooled(grad_scores, inputs).sum(axis=-2)
        root = np.sqrt(KEY_SIZE)
        return binary_cross_entropy(logit, labels), Params(
            W_K=params.query[..., :, None] * grad_score_direction[..., None, :] / root,
            W_V=params.readout[..., :, None] * grad_readout_direction[..., None, :],
            query=np.einsum("...dc,...c->...d", params.W_K, grad_score_direction) / root,
            readout=np.einsum("...dc,...c->...d", params.W_V, grad_readout_direction),
            bias=grad_logit.sum(axis=-1),
        )


def _per_step(inputs, direction):
    """direction · x_t for every step, (N, T, C) and (R..., C) -> (R..., N, T): a product and a
    sum per channel, as the library computes it."""
    out = inputs[..., 0] * direction[..., 0, None, None]
    for c in range(1, inputs.shape[-1]):
        out += inputs[..., c] * direction[..., c, None, None]
    return out


def _pooled(weights, inputs):
    """Σ_t weights_t x_t, (R..., N, T) and (N, T, C) -> (R..., N, C)."""
    return np.stack([(weights * inputs[..., c]).sum(axis=-1) for c in range(inputs.shape[-1])], -1)


def layouts(train_set, seeds) -> tuple[float, float, float]:
    """(steps-first seconds, page-layout seconds, largest difference of their loss curves) for
    the lesson's 200 epochs of every seed at once."""
    curves, times = [], []
    for model in (SingleQuery(), PageLayout()):

        def train(model=model):
            params = model.init(list(seeds))
            return fit(
                model,
                params,
                train_set.inputs,
                train_set.labels,
                marked_step_runs.EPOCHS,
                marked_step_runs.LEARNING_RATE,
                optimiser="gradient descent",
            )

        curves.append(train())
        times.append(best_of(train, 5 if len(seeds) > 1 else 15))
    return times[0], times[1], float(np.abs(curves[0] - curves[1]).max())


def main() -> None:
    train_set = marked_step.split(marked_step.make_sequences())[0]
    seeds = range(marked_step_runs.INIT_SEEDS[0], marked_step_runs.INIT_SEEDS[0] + 100)

    print("Part I benchmark (best of repeated runs, this machine; idle, then beside a busy core)")
    start = time.perf_counter()
    oracle = single_query_oracle.summary()
    loop_time = time.perf_counter() - start
    fast = marked_step_runs.summary()
    same = all(
        abs(oracle["runs"][r][k] - fast["runs"][r][k]) < 1e-9
        for r in range(2)
        for k in fast["runs"][r]
    )
    summary = both_ways(marked_step_runs.summary, 5)
    # 40 ms a call: the best of 15, since on a shared virtual machine a stretch of a few
    # hundred milliseconds can run slow and spoil all of five
    one = both_ways(
        lambda: marked_step_runs.train_runs([marked_step_runs.INIT_SEEDS[0]], train_set), 15
    )
    sweep = both_ways(lambda: marked_step_runs.sweep(seeds), 3)

    def verdict(times, limit):
        return "met" if max(times) < limit else "NOT met"

    rows = [
        ("summary(), loop oracle (pure Python)", (loop_time, float("nan")), ""),
        (
            "summary(), vectorised",
            summary,
            f"{loop_time / summary[0]:.0f}x faster idle (target >= 100x)",
        ),
        ("one network, 200 epochs", one, f"target < 50 ms both ways: {verdict(one, 0.05)}"),
        ("sweep of 100 seeds", sweep, f"target < 2 s both ways: {verdict(sweep, 2)}"),
    ]
    print(f"  {'':40} {'idle':>10}   {'busy core':>10}")
    for name, (idle, busy), note in rows:
        print(f"  {name:40} {idle * 1000:7.1f} ms   {busy * 1000:7.1f} ms   {note}")
    print(f"  oracle and vectorised summaries agree to 1e-9: {same}")
    print("the steps-first layout against the page's (R..., N, T), 200 epochs, idle:")
    for label, chosen in (("one network", seeds[:1]), ("100 networks", seeds)):
        first, page, gap = layouts(train_set, chosen)
        print(
            f"  {label:14} steps first {first * 1000:7.1f} ms, page layout {page * 1000:7.1f} ms: "
            f"{page / first:.2f}x; loss curves differ by at most {gap:.0e}"
        )


if __name__ == "__main__":
    main()
