"""Measure the runs behind Part II's bounds on this processor's arithmetic, and store them.

Usage: python tools/bounds.py NAME "how the arithmetic was set"
Runs :func:`attention_measured.recall.bound_runs` (50 trainings of 4000 iterations) and files
them in ``lib/attention_measured/recall_bounds.json`` under NAME, keeping the other names' runs.
The book's file holds two: this build's processor as it is, and `make test-cpus`'s Nehalem
setup, run as

    OPENBLAS_CORETYPE=Nehalem NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL AVX512_SPR" \\
    OPENBLAS_NUM_THREADS=1 python tools/bounds.py nehalem "OpenBLAS Nehalem kernels, ..."
"""

import json
import platform
import sys

from attention_measured.experiments import cloze_runs


def main(name: str, arithmetic: str) -> None:
    path = cloze_runs.BOUNDS_FILE
    runs = cloze_runs.bound_runs(progress=True)
    # read only now: another setup's runs may have been filed while these ran
    stored = json.loads(path.read_text()) if path.exists() else {"arithmetic": {}, "runs": {}}
    stored["arithmetic"][name] = f"{arithmetic} ({platform.processor() or platform.machine()})"
    stored["runs"][name] = runs
    path.write_text(json.dumps(stored, indent=1) + "\n")
    worst = max(r["final loss"] for r in runs), min(r["recall"] for r in runs)
    print(f"{name}: {len(runs)} runs, worst final loss {worst[0]:.3f}, worst recall {worst[1]:.3f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
