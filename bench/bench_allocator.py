"""The library's one speed trick of memory, measured: every training in a fresh process with glibc's
own allocator thresholds, against freed memory kept (`allocator.keep_freed_memory`), side by side.

The book's models are written plainly: each training step allocates its arrays afresh.  That is
cheap only while the allocator keeps freed memory for the next step; glibc, in a fresh process,
gives a block above 128 KB back to the system at once, and every step then pays page faults to
get its memory again.  Importing the package calls `allocator.keep_freed_memory`, which sets
glibc's two thresholds once; `ATTENTION_MEASURED_KEEP_FREED_MEMORY=0` leaves glibc's own moving
thresholds in place.  The setting lasts as long as the process, so each training runs in a fresh
process of its own, as a reader's first run does: each time is that process's first training,
with its seconds in the kernel (page faults) beside it.  Each way runs three times, the two ways
alternating, and the fastest run of each counts.  The results must agree to the last bit, which
the benchmark checks; the gains are printed, never asserted.
"""

import json
import os
import subprocess
import sys

from attention_measured.machinery import allocator

# name: the code that trains it; with no ATTENTION_MEASURED_CACHE, a fresh process computes each
TRAININGS = {
    "Part I, the lesson's 100 runs at once": (
        "from attention_measured.experiments import marked_step_runs as m, registry as r\n"
        "from attention_measured.tasks import marked_step as t\n"
        "runs = [m.train_runs(r.SINGLE_QUERY_SEEDS, t.split(t.make_sequences())[0])]"
    ),
    "Part III, one and two heads": (
        "from attention_measured.experiments import head_runs as h\n"
        "runs = [h.heads_run(n, 0) for n in (1, 2)]"
    ),
    "Part III, order, learned positions": (
        "from attention_measured.experiments import order_runs as o\n"
        "runs = [o.order_run('learned', 0)]"
    ),
    "Part III, additive reader on Part I's task": (
        "from attention_measured.experiments import flavour_runs as f\n"
        "runs = [f.reader_run('additive', 0)]"
    ),
    "Part III, hierarchical reader": (
        "from attention_measured.core import training\n"
        "from attention_measured.models.hierarchical import Hierarchical\n"
        "from attention_measured.tasks.documents import documents\n"
        "docs = documents()\n"
        "runs = [training.trained(Hierarchical(), 0, docs.tokens, docs.labels, 300, 0.05)]"
    ),
    "Part III, additive aligner": (
        "from attention_measured.core import training\n"
        "from attention_measured.models.aligner import Aligner\n"
        "from attention_measured.tasks.reversal import reversal\n"
        "runs = [training.trained(Aligner('additive'), 0, reversal(), None, 300, 0.05)]"
    ),
    "Part III, memory network, two facts, 2 hops": (
        "from attention_measured.experiments import story_runs as s\nruns = [s.memory_run(2, 2, 0)]"
    ),
    "Part IV, Transformer (300 batches)": (
        "from attention_measured.experiments import translation_runs as c\n"
        "runs = [c.run('Transformer', 0)]"
    ),
    "Part IV, Bahdanau (300 batches)": (
        "from attention_measured.experiments import translation_runs as c\n"
        "runs = [c.run('Bahdanau', 0)]"
    ),
}

CHILD = """
import hashlib, json, resource, time
import numpy as np
start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
{code}
after = resource.getrusage(resource.RUSAGE_SELF)
digest = hashlib.sha256()
for run in runs:
    for array in [*run.params.values(), run.curve]:
        digest.update(np.ascontiguousarray(array, dtype=float).tobytes())
kernel, faults = after.ru_stime - before.ru_stime, after.ru_minflt - before.ru_minflt
seconds, bits = time.perf_counter() - start, digest.hexdigest()
print(json.dumps({{"seconds": seconds, "kernel": kernel, "faults": faults, "bits": bits}}))
"""


WORTH = 1.2  # a gain worth a trick: the largest gain, glibc's own thresholds ÷ memory kept


def _child(code: str, keep: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != allocator.SWITCH}
    env.pop("ATTENTION_MEASURED_CACHE", None)  # nothing read from or written to disk
    if not keep:
        env[allocator.SWITCH] = "0"
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(code=code)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    print("Each training with glibc's own thresholds, against freed memory kept")
    print("  each training alone in a fresh process; seconds (of which in the kernel), faults")
    if not allocator.keep_freed_memory():
        print("  skipped: this process's allocator is not glibc, or its thresholds are set")
        return
    ratios, same = [], True
    for name, code in TRAININGS.items():
        runs = [_child(code, keep) for _ in range(3) for keep in (False, True)]
        own, kept = (min(runs[way::2], key=lambda run: run["seconds"]) for way in (0, 1))
        if len({run["bits"] for run in runs}) > 1:
            own = {**own, "bits": "the runs differ"}
        ratios.append(own["seconds"] / kept["seconds"])
        same = same and own["bits"] == kept["bits"]
        print(
            f"  {name:<44} glibc's own {own['seconds']:5.2f} s ({own['kernel']:4.2f}), "
            f"{own['faults']:>6} faults; kept {kept['seconds']:5.2f} s ({kept['kernel']:4.2f}), "
            f"{kept['faults']:>6} faults: {ratios[-1]:.2f}x, "
            + ("same bits" if own["bits"] == kept["bits"] else "DIFFERENT BITS")
        )
    print(
        f"  keeping freed memory gains up to {max(ratios):.2f}x "
        f"({'kept: it pays' if max(ratios) >= WORTH else 'it pays no more: drop it'}), "
        + ("the same bits either way" if same else "DIFFERENT BITS")
    )


if __name__ == "__main__":
    main()
