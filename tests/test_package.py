"""The package as a reader installs it: name, contents, the notebooks' install cell, its caches."""

import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import tomllib

from attention_measured.machinery import allocator, blas, cache

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = [ROOT / "intro.ipynb", *sorted((ROOT / "chapters").glob("*/*.ipynb"))]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_the_wheel_holds_attention_measured_and_no_top_level_lib(tmp_path):
    shutil.rmtree(ROOT / "build", ignore_errors=True)  # setuptools' staging keeps deleted modules
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("attention_measured-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"attention_measured"}, tops
    # every package and its data: a wheel built from an incomplete list of packages would miss some
    for name in (
        "models/single_query.py",
        "machinery/cache.py",
        "book/pages.py",
        "experiments/explanation_runs.json",
        "experiments/cloze_bounds.json",
    ):
        assert f"attention_measured/{name}" in names, name


def test_every_notebook_installs_the_version_it_was_built_with():
    expected = f"attention-measured @ git+https://github.com/attention-measured/attention-measured@v{VERSION}"
    assert NOTEBOOKS
    for path in NOTEBOOKS:
        install = "".join(json.loads(path.read_text())["cells"][1]["source"])
        assert "import attention_measured" in install and f'"{expected}"' in install, path.name
        assert not re.search(r"^\s*(from lib |import lib\b)", install, re.M), path.name


def test_no_notebook_imports_lib():
    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text())["cells"]:
            source = "".join(cell["source"])
            assert not re.search(r"^\s*(from lib[ .]|import lib\b)", source, re.M), path.name


# ------------------------------------------------------------------ remembered results
CALLS = []


@cache.remembered(ignore=("progress",))
def _square_table(size: int, progress: bool = False):
    CALLS.append(size)
    return {"table": np.arange(size) ** 2}


def test_remembered_computes_each_call_once_and_hands_out_copies(monkeypatch):
    monkeypatch.delenv(cache.ENVIRONMENT, raising=False)
    _square_table.forget()
    CALLS.clear()
    first = _square_table(4)
    first["table"][:] = -1  # a caller spoils its copy ...
    again = _square_table(4, progress=True)  # ... the next caller gets the original
    assert CALLS == [4]
    np.testing.assert_array_equal(again["table"], [0, 1, 4, 9])
    _square_table(size=5)
    assert CALLS == [4, 5]


def test_remembered_keeps_results_on_disk_between_processes(monkeypatch, tmp_path):
    monkeypatch.setenv(cache.ENVIRONMENT, str(tmp_path))
    _square_table.forget()
    CALLS.clear()
    _square_table(3)
    files = list(tmp_path.glob("_square_table-*.pickle"))
    assert len(files) == 1 and not list(tmp_path.glob(".partial-*"))
    _square_table.forget()  # a new process: nothing in memory
    np.testing.assert_array_equal(_square_table(3)["table"], [0, 1, 4])
    assert CALLS == [3]  # read from disk, not computed again


SLOW_CALLS = []


@cache.remembered
def _slow_square(x: int):
    import time

    SLOW_CALLS.append(x)
    time.sleep(0.3)
    return x * x


def test_two_runs_asking_at_once_compute_once(monkeypatch, tmp_path):
    """nbval's two workers may ask for the same model together: the second waits and reads."""
    import threading

    monkeypatch.setenv(cache.ENVIRONMENT, str(tmp_path))
    SLOW_CALLS.clear()
    results = []
    threads = [threading.Thread(target=lambda: results.append(_slow_square(7))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [49, 49] and SLOW_CALLS == [7]


def test_a_changed_library_or_machine_files_results_elsewhere(monkeypatch, tmp_path):
    monkeypatch.setenv(cache.ENVIRONMENT, str(tmp_path))
    _square_table.forget()
    _square_table(3)
    monkeypatch.setattr(cache, "code_fingerprint", lambda module=None: "another library")
    _square_table.forget()
    _square_table(3)
    monkeypatch.setattr(cache, "arithmetic", lambda: {"blas": "another kernel"})
    _square_table.forget()
    _square_table(3)
    assert len(list(tmp_path.glob("_square_table-*.pickle"))) == 3


def test_the_fingerprints_describe_this_code_and_machine():
    assert re.fullmatch(r"[0-9a-f]{16}", cache.code_fingerprint())
    assert cache.code_fingerprint("models.cloze_head") != cache.code_fingerprint("models.reader")
    facts = cache.arithmetic()
    assert facts["numpy"] == np.__version__ and facts["blas"] and "SSE2" in facts["cpu_features"]


def test_the_arithmetic_is_the_same_whether_or_not_scipy_was_imported_first():
    # numpy and SciPy each load an OpenBLAS; a process that had imported SciPy before its first
    # remembered result used to file it under other keys than one that had not
    script = (
        "import json, sys\n"
        "if sys.argv[1] == 'scipy-first':\n"
        "    import scipy.stats\n"
        "from attention_measured.machinery import cache\n"
        "print(json.dumps(cache.arithmetic()))\n"
    )
    facts = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", script, order], capture_output=True, text=True, check=True
            ).stdout
        )
        for order in ("numpy-only", "scipy-first")
    ]
    assert facts[0] == facts[1]
    assert len(facts[0]["blas"]) >= 1


def test_one_thread_limits_blas_inside_and_restores_it_after():
    from threadpoolctl import threadpool_info

    def blas_threads():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    before = blas_threads()
    inside = blas.one_thread(blas_threads)()
    assert inside and all(n == 1 for n in inside)
    assert blas_threads() == before


# a child process imports the package, then takes 21 steps that each make five arrays of 256 KB
# to 1 MB together (below 2 MB, so no huge page serves them) and free them, as a full-batch
# training step does; it prints the page faults of the last 20 steps, and what
# keep_freed_memory answered
_REUSE = """
import resource, numpy as np, attention_measured
from attention_measured.machinery import allocator
def step():
    return sum(np.ones(n)[-1] for n in (1 << 15, 1 << 16, 1 << 17, 1 << 17, 1 << 17))
step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, allocator.keep_freed_memory())
"""


def _reuse(**environment) -> tuple[int, bool]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MALLOC_") and k not in ("GLIBC_TUNABLES", allocator.SWITCH)
    }
    printed = subprocess.run(
        [sys.executable, "-c", _REUSE],
        env={**env, **environment},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return int(printed[0]), printed[1] == "True"


@pytest.mark.skipif(not allocator.on_glibc(), reason="the setting is glibc's")
def test_importing_the_package_keeps_freed_memory_for_the_next_step_on_glibc():
    kept, done = _reuse()
    assert done and kept < 100, f"{kept} page faults in 20 steps that reuse 3.75 MB"
    # a reader's own setting of glibc's thresholds stands: here glibc's first one, held, under
    # which every block above 128 KB is given back when freed and faulted in again
    given_back, done = _reuse(MALLOC_MMAP_THRESHOLD_="131072")
    # 960 pages a step at one 4 KB page a fault; a kernel that maps a large folio in one fault
    # counts fewer (771 a step on Linux 6.18), still hundreds of times the kept case's
    assert not done and given_back > 20 * 200, given_back
    assert _reuse(GLIBC_TUNABLES="glibc.malloc.trim_threshold=131072")[1] is False
    # and the switch turns it off (glibc's moving thresholds then decide, by the process's past)
    assert _reuse(**{allocator.SWITCH: "0"})[1] is False


def test_unpicklable_arguments_are_refused():
    with pytest.raises((TypeError, AttributeError, pickle.PicklingError)):
        _square_table(lambda: 1)


def test_binder_pins_are_the_books_pins():
    pins = dict(
        line.split("==")
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    binder = [
        line
        for line in (ROOT / "binder" / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert binder
    for line in binder:
        name, version = line.split("==")
        assert pins.get(name) == version, (
            f"binder pins {line}, requirements.txt {name}=={pins.get(name)}"
        )


def test_a_result_depends_on_its_modules_code_and_not_on_how_pages_draw_it():
    trained = cache.dependencies("experiments.cloze_runs")
    assert {"models.cloze_head", "core.training", "core.optim", "core.attention"} <= trained
    assert not {"book.cloze_explorers", "book.plots", "book.widgets"} & trained
    # the flavours' runs on the marked step read its data
    assert "tasks.marked_step" in cache.dependencies("experiments.flavour_runs")


@cache.remembered
def _train_a_model(model, seed: int):
    CALLS.append(seed)
    return seed


def test_a_model_passed_in_brings_its_own_code_into_the_key(monkeypatch, tmp_path):
    from attention_measured.models import reader

    monkeypatch.setenv(cache.ENVIRONMENT, str(tmp_path))
    CALLS.clear()
    _train_a_model(reader.Reader("dot"), 1)
    real = cache.code_fingerprint

    def edited(module=None):  # as if models/reader.py, where Reader lives, had been edited
        return "edited" if module == "models.reader" else real(module)

    monkeypatch.setattr(cache, "code_fingerprint", edited)
    _train_a_model.forget()
    _train_a_model(reader.Reader("dot"), 1)
    assert CALLS == [1, 1]
