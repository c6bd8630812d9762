"""Part III: how long each flavour takes to train; multi-head attention against a head-by-head loop.

Every flavour of section 4 is trained on Part I's task (400 Adam iterations,
full batch) and timed; so are the larger models of sections 3 and 6 to 8.
Then `attention.multi_head_attention` (all heads and sequences in a few
matrix products) is raced against the head-by-head, query-by-query reference
kept beside the tests, on the same inputs; the ratio is printed, never asserted.
Each timing is the best of a few repeats after a warm-up call, on an idle
machine and beside a busy core; trained models are remembered by the library,
so the benchmark calls `training.trained.uncached`, which trains every time.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from test_attention import reference_multi_head  # noqa: E402  (the loop version, kept beside the tests)
from timing import best_of, both_ways  # noqa: E402

from attention_measured.core import attention, training
from attention_measured.experiments import flavour_runs, head_runs, order_runs, story_runs
from attention_measured.models import aligner, heads, memory_network, order_reader, reader
from attention_measured.tasks import marked_step, reversal, stories


def main() -> None:
    train, _ = marked_step.lesson_data()
    print("Part III: one training run per flavour on Part I's task (400 Adam iterations)")
    print(f"  {'':<40}{'idle':>8}{'busy core':>12}")
    for name in flavour_runs.SIDE_BY_SIDE:
        model = reader.Reader(name)
        idle, busy = both_ways(
            lambda model=model: training.trained.uncached(
                model,
                0,
                train.inputs,
                train.targets,
                flavour_runs.EPOCHS,
                flavour_runs.LEARNING_RATE,
            ),
            2,
        )
        print(f"  {name:<40}{idle * 1000:5.0f} ms{busy * 1000:9.0f} ms")

    print("larger models")
    sources = reversal.reversal(500, 8, 10, seed=1)
    aligner_model = aligner.Aligner("additive")
    heads_train = head_runs.heads_data()[0]
    order_train = order_runs.order_data()[0]
    story_data = story_runs.memory_data(2)[0]
    runs = {
        "alignment, additive, 300 iterations": lambda: training.trained.uncached(
            aligner_model, 0, sources, None, 300, 0.05
        ),
        "two heads, 800 iterations": lambda: training.trained.uncached(
            heads.HeadsReader(2), 0, heads_train.inputs, heads_train.targets, 800, 0.01
        ),
        "order, sinusoidal, 600 iterations": lambda: training.trained.uncached(
            order_reader.OrderReader(), 0, order_train.inputs, order_train.targets, 600, 0.03
        ),
        "memory, 2 hops, 400 iterations": lambda: training.trained.uncached(
            memory_network.MemoryNetwork(2),
            0,
            stories.encode(story_data),
            story_data.answers,
            400,
            0.02,
        ),
    }
    for name, run in runs.items():
        idle, busy = both_ways(run, 1)
        print(f"  {name:<40}{idle:7.2f} s{busy:9.2f} s")

    rng = np.random.RandomState(0)
    batch, steps, size, n_heads = 64, 16, 32, 4
    x = rng.normal(size=(batch, steps, size))
    W_Q, W_K, W_V, W_O = (rng.normal(size=(size, size)) / np.sqrt(size) for _ in range(4))
    fast = best_of(lambda: attention.multi_head_attention(x, x, W_Q, W_K, W_V, W_O, n_heads), 5)
    loop = best_of(
        lambda: [
            reference_multi_head(x[b], x[b], W_Q, W_K, W_V, W_O, n_heads) for b in range(batch)
        ],
        2,
    )
    print(f"multi-head attention, {batch} sequences x {steps} steps x {size}, {n_heads} heads:")
    print(f"  loop {loop * 1000:.1f} ms, vectorised {fast * 1000:.2f} ms: {loop / fast:.0f}x")


if __name__ == "__main__":
    main()
