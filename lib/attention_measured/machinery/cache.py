"""Results worth keeping: each computed once per process, and kept on disk between runs when
asked.

Training a model takes seconds, and a page may ask for the same model more than once.
:func:`remembered` wraps a function whose result depends only on its arguments and on the
library's code:

- in memory, each distinct call is computed once per process;
- on disk, when the environment variable ``ATTENTION_MEASURED_CACHE`` names
  a folder (``make test`` sets it to ``_build/cache``), results are kept
  between runs.  A result is filed under a hash of the call's arguments, of
  the source of the module that computes it and of every module of this
  package that module imports, and of the machine's arithmetic
  (numpy's version and CPU features, and the BLAS library and the kernel it
  chose), and of the nudge in force (:func:`attention_measured.core.params.nudge`),
  so a changed library, another processor or a nudged run is never served
  another's result.  Without the variable nothing is written anywhere.

Every call hands out a fresh copy, so a caller that changes a result cannot change what the next
caller gets.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import inspect
import os
import pickle
import platform
import re
import tempfile
from pathlib import Path

import numpy as np

from ..core import checks
from ..core.params import nudge

ENVIRONMENT = "ATTENTION_MEASURED_CACHE"


PACKAGE = Path(__file__).resolve().parents[1]  # the folder of attention_measured


@functools.cache
def _modules() -> dict[str, Path]:
    """Every module of the package by its dotted name below it ("models.reader"): its file."""
    return {
        ".".join(path.relative_to(PACKAGE).with_suffix("").parts): path
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "__init__.py"
    }


@functools.cache
def _imports(module: str) -> frozenset[str]:
    """The modules of this package that ``module`` imports directly (each module is parsed
    once a process: a page's first remembered results would parse each dozens of times)."""
    known = _modules()
    tree = ast.parse(known[module].read_text())
    package = module.split(".")[:-1]
    found = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.level >= 1):
            continue
        base = package[: len(package) - (node.level - 1)]
        if node.module:
            base = base + node.module.split(".")
        for alias in node.names:
            name = ".".join(base + [alias.name])  # `from ..core import checks`: a module
            found.add(name if name in known else ".".join(base))  # else a name of one
    return frozenset(found & set(known))


def dependencies(module: str) -> set[str]:
    """``module`` (a dotted name below the package, such as "models.reader") and every module
    of this package it imports, directly or through others."""
    if not isinstance(module, str) or module not in _modules():
        raise ValueError(
            f"module must name a module of this package, such as 'models.reader'; got {module!r}"
        )
    seen, todo = set(), [module]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(_imports(name) - seen)
    return seen


@functools.cache
def code_fingerprint(module: str | None = None) -> str:
    """A hash (16 hex digits) of the source of ``module`` and of all it depends on in this package.

    With None, of every module of the package.  A result is filed under the
    fingerprint of the module that computes it, so changing how a page is
    drawn does not throw away the models it shows.
    """
    known = _modules()
    names = sorted(known) if module is None else sorted(dependencies(module))
    digest = hashlib.sha256()
    for name in names:
        digest.update(name.encode() + b"\0" + known[name].read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def arithmetic() -> dict:
    """What decides the last bits of a result on this machine: numpy, its CPU features, the BLAS
    kernels.

    numpy and SciPy each bring their own OpenBLAS, and threadpoolctl lists only the libraries
    loaded so far; SciPy's BLAS is loaded here first, so that every process files a result
    under the same kernels whether or not it has imported SciPy yet (a page that had not
    filed its models under other keys, and trained each a second time).
    """
    import scipy.linalg  # noqa: F401  (loads SciPy's BLAS; see above)
    from numpy._core._multiarray_umath import __cpu_features__
    from threadpoolctl import threadpool_info

    blas = sorted(
        (lib.get("internal_api", ""), lib.get("version", ""), str(lib.get("architecture", "")))
        for lib in threadpool_info()
        if lib.get("user_api") == "blas"
    )
    return {
        "numpy": np.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu_features": sorted(name for name, on in __cpu_features__.items() if on),
        "blas": blas,
    }


def _folder() -> Path | None:
    folder = os.environ.get(ENVIRONMENT, "").strip()
    return Path(folder) if folder else None


def _fingerprint(modules) -> tuple[str, ...]:
    """The code fingerprints of ``modules``; a module outside this package stands for all of it."""
    known = _modules()
    return tuple(
        code_fingerprint(m) if m in known else code_fingerprint() for m in sorted(set(modules))
    )


def _plain(value):
    """numpy's scalars as Python's (np.int64(0) as 0), in tuples and lists too, so that a seed
    of any integer kind finds the result remembered for it."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return type(value)(_plain(v) for v in value)
    return value


def remembered(function=None, *, ignore: tuple[str, ...] = ()):
    """Decorator: remember ``function``'s results (see the module's docstring).

    ``ignore`` names flags (True or False) that do not change the result, such as a progress
    bar; each is checked on every call, remembered or not.  Arguments must be picklable; equal
    pickles mean equal calls.
    """
    if isinstance(ignore, str) or not isinstance(ignore, tuple):
        raise TypeError(f"ignore must be a tuple of argument names, got {ignore!r}")
    if function is None:
        return functools.partial(remembered, ignore=ignore)
    if not callable(function):
        raise TypeError(f"function must be a function to remember, got {type(function).__name__}")
    signature = inspect.signature(function)
    unknown = [name for name in ignore if name not in signature.parameters]
    if unknown:
        raise ValueError(f"ignore names {unknown}, which {function.__name__} does not take")
    name = f"{function.__module__}.{function.__qualname__}"
    module = function.__module__.removeprefix("attention_measured.")
    memory: dict[str, bytes] = {}

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        for flag in ignore:
            checks.flag(bound.arguments[flag], flag)
        call = {k: _plain(v) for k, v in bound.arguments.items() if k not in ignore}
        arguments = pickle.dumps(call, protocol=4)
        # the code of the function's module, and of every package class among its arguments
        # (a model passed in is trained by its own methods)
        modules = {
            module,
            *(m.decode() for m in re.findall(rb"attention_measured\.([\w.]+)", arguments)),
        }
        key = hashlib.sha256(
            pickle.dumps(
                (name, arguments, _fingerprint(modules), arithmetic(), nudge()), protocol=4
            )
        ).hexdigest()
        if key not in memory:
            folder = _folder()
            path = None if folder is None else folder / f"{function.__name__}-{key[:32]}.pickle"
            if path is None:
                memory[key] = pickle.dumps(function(*args, **kwargs), protocol=4)
            else:
                with _computing(path):  # a parallel run asking the same waits, then reads
                    if path.is_file():
                        memory[key] = path.read_bytes()
                    else:
                        memory[key] = pickle.dumps(function(*args, **kwargs), protocol=4)
                        _write_atomically(path, memory[key])
        return pickle.loads(memory[key])

    wrapper.forget = memory.clear  # drop what this process remembers (tests)
    wrapper.uncached = function  # compute afresh, remembering nothing (benchmarks)
    return wrapper


@contextlib.contextmanager
def _computing(path: Path):
    """Hold a lock on ``path``'s computation: a second process (nbval's other worker) asking for
    the same result waits for the first to write it instead of computing it again.  Results
    call only results below them, so locks are always taken in the same order.  Where the
    system has no ``fcntl`` (Windows), nothing is locked and a result may be computed twice.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on the book's machines
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _write_atomically(path: Path, data: bytes) -> None:
    """Write to a temporary file beside ``path`` and rename it, so parallel runs never read half
    a file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".partial-")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    os.replace(temporary, path)
