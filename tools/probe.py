"""The argument probe: every public function of the package, called with one bad value at a time.

    make probe        (pytest -p probe, with tools/ on the path, one process: about 6 min)

While the test suite runs, the probe records the first call the tests make to each public
function, method and constructor of ``attention_measured`` (its valid call), or where the tests
make none, the first the package makes of it.  When the suite ends, it makes that call again
once for each argument, the argument replaced by something a careless reader might type: a
string for a number, a float or a boolean for a count, a huge count, NaN or infinity, an index
past the end, an array with an axis missing, an integer mask, an empty list, "False" for a flag.
Each outcome is one of

- ``clear``   a TypeError or ValueError whose message names the argument;
- ``unnamed`` a TypeError or ValueError that does not name it;
- ``deep``    any other exception, raised from inside numpy, scipy or the library;
- ``silent``  no error at all: the bad value was coerced, or a result came back regardless;
- ``slow``    no answer within :data:`TIMEOUT` seconds;
- ``shape accepted``  an axis more or less, taken without an error: often a valid batch;
- ``accepted``  a value the argument may well take, taken without an error and without NaN or
  infinity in the result: a huge count where the range allows it (a seed below 2**64), 1e300
  where any finite number will do, any text for a title or a name.  A result holding NaN or
  infinity is ``silent``, whatever came in.

The share of clear errors is counted over every call but the last two kinds.

The report lists the counts and every call that was not ``clear``.  Some ``silent`` calls are
right (a negative number where any number will do); the report is for reading, not a test.  A
valid call that changed one of its arguments is counted as ``changed input``.

Why the probe is its own and not Hypothesis: Hypothesis draws values from a strategy written for
each argument, starting from a call one writes by hand; the probe finds a valid call for every
public callable of the package by recording the test suite, and varies one argument at a time
with a fixed list of bad values, so that its counts are the same from run to run and comparable
between versions.  The refusals that must hold are properties in tests/test_bad_input.py, where
Hypothesis draws the bad values.
"""

from __future__ import annotations

import copy
import inspect
import json
import signal
import sys
import types
from pathlib import Path

import numpy as np

TIMEOUT = 10  # seconds a bad call may run before it counts as slow
CANDIDATES = 3  # calls recorded per function; the first that runs without an error is the valid one
SHAPES = {"an axis missing", "an extra axis"}  # a batch axis more or less is often a valid call
FREE_TEXT = {
    "name",
    "label",
    "title",
    "alt",
    "xlabel",
    "ylabel",
    "prefix",
    "directory",
    "path",
    "sentence",
    "no_truth",
    "desc",
}  # arguments that take any text
TEXT_LABELS = {"an unknown name", "False", "a string"}
WRAPPERS = {"cache.py", "blas.py", "params.py", "plots.py"}  # modules whose decorators wrap


def pytest_addoption(parser):
    parser.addoption("--probe-report", default="_build/probe.json", help="where the probe writes")


def _targets():
    """{code object: (module, qualified name, public callable, kind)} for every public function,
    public method and constructor defined in the package."""
    import importlib
    import pkgutil

    import attention_measured

    found = {}
    for info in pkgutil.walk_packages(attention_measured.__path__, "attention_measured."):
        module = importlib.import_module(info.name)
        short = info.name.removeprefix("attention_measured.")
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(obj):
                inner = inspect.unwrap(obj)
                found[inner.__code__] = (short, name, obj, "function")
            elif inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    function = member.__func__ if isinstance(member, staticmethod) else member
                    if not inspect.isfunction(function):
                        continue
                    if attr.startswith("_") and attr != "__init__":
                        continue
                    inner = inspect.unwrap(function)
                    kind = "constructor" if attr == "__init__" else "method"
                    found[inner.__code__] = (short, f"{name}.{attr}", obj, kind)
    return found


class Recorder:
    def __init__(self):
        self.targets = _targets()
        self.package = str(Path(sys.modules["attention_measured"].__file__).parent)
        self.calls: dict[str, list] = {}  # calls from the tests, as a reader makes them
        self.inner_calls: dict[str, list] = {}  # calls the package makes of itself

    def valid_calls(self) -> dict[str, list]:
        """Each callable's recorded calls: the tests' own where they made one, else the
        package's."""
        return {**self.inner_calls, **self.calls}

    def _from_outside(self, frame) -> bool:
        caller = frame.f_back
        while caller is not None and Path(caller.f_code.co_filename).name in WRAPPERS:
            if not caller.f_code.co_filename.startswith(self.package):
                break
            caller = caller.f_back
        return caller is not None and not caller.f_code.co_filename.startswith(self.package)

    def __call__(self, frame, event, arg):
        if event != "call":
            return
        target = self.targets.get(frame.f_code)
        if target is None:
            return
        module, name, obj, kind = target
        key = f"{module}.{name}"
        outside = self._from_outside(frame)
        store = self.calls if outside else self.inner_calls
        if len(store.get(key, ())) >= CANDIDATES:
            return
        info = inspect.getargvalues(frame)
        values = {}
        for arg_name in info.args:
            values[arg_name] = _copied(info.locals[arg_name])
        star = _copied(info.locals[info.varargs]) if info.varargs else ()
        extra = _copied(info.locals[info.keywords]) if info.keywords else {}
        store.setdefault(key, []).append((module, name, obj, kind, values, star, extra))


def _copied(value):
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


_recorder: Recorder | None = None


def pytest_sessionstart(session):
    global _recorder
    _recorder = Recorder()
    sys.setprofile(_recorder)


# ------------------------------------------------------------------ the bad values
def bad_values(name: str, value, default):
    """(label, bad value) pairs for one argument that held ``value`` in the valid call."""
    out = []
    none_ok = default is None
    if isinstance(value, (bool, np.bool_)):
        out += [("a string", "False"), ("0 for False", 0)]
    elif isinstance(value, (int, np.integer)):
        out += [("a string", str(int(value))), ("a fraction", int(value) + 0.5), ("True", True)]
        out += [("negative", -1 if value >= 0 else int(value) - 10**6), ("huge", 10**12)]
        out += [("NaN", float("nan"))]
    elif isinstance(value, (float, np.floating)):
        out += [("a string", str(float(value))), ("NaN", float("nan")), ("infinity", np.inf)]
        out += [("huge", 1e300)]
    elif isinstance(value, str):
        out += [("an unknown name", value + " nonsense"), ("a number", 3), ("False", "False")]
    elif isinstance(value, np.ndarray):
        out += [("a string", "0.5")]
        if value.dtype == bool:
            out += [("0/1 integers", value.astype(int))]
        elif np.issubdtype(value.dtype, np.integer):
            if value.size:
                out += [("an id past the end", value + 10**6), ("a negative id", value * 0 - 1)]
            out += [("floats", value.astype(float) + 0.5)]
        elif np.issubdtype(value.dtype, np.floating) and value.size:
            with_nan, with_inf = value.copy(), value.copy()
            with_nan.flat[0], with_inf.flat[0] = np.nan, np.inf
            out += [("a NaN inside", with_nan), ("an infinity inside", with_inf)]
            out += [("booleans", value > 0)]
        if value.ndim >= 1 and value.size:
            out += [("an axis missing", value[0])]
            out += [("an extra axis", value[None])]
    elif isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        out += [("a string", "text"), ("empty", type(value)())]
    elif isinstance(value, dict):
        out += [("empty", {})]
        if value:
            smaller = copy.copy(value)
            smaller.pop(next(iter(smaller)))
            out += [("one entry missing", smaller)]
            first = next(iter(value))
            if isinstance(value[first], np.ndarray) and value[first].dtype.kind == "f":
                with_nan = copy.deepcopy(value)
                with_nan[first].flat[0] = np.nan
                out += [("a NaN inside", with_nan)]
    elif value is None:
        out += [("a string", "text")]
    else:
        out += [("a string", "text"), ("a number", 1.5)]
    if not none_ok and value is not None:
        out += [("None", None)]
    return out


class _Slow(Exception):
    pass


def _alarm(signum, frame):
    raise _Slow()


def _finite(result, depth: int = 0) -> bool:
    """Whether a result holds no NaN or infinity (arrays, numbers, containers, records)."""
    if depth > 3:
        return True
    if isinstance(result, np.ndarray):
        if result.size > 10**8:  # a huge count taken at its word (a broadcast view, say)
            return False
        return result.dtype.kind not in "fc" or bool(np.isfinite(result).all())
    if isinstance(result, (float, np.floating)):
        return bool(np.isfinite(result))
    if isinstance(result, dict):
        return all(_finite(v, depth + 1) for v in result.values())
    if isinstance(result, (list, tuple)):
        return all(_finite(v, depth + 1) for v in result[:50])
    return True


def _outcome(error: BaseException | None, names: set, label: str, arg: str, result) -> str:
    if error is None:
        if label in SHAPES:
            return "shape accepted"
        try:
            finite = _finite(result)
        except Exception:  # noqa: BLE001 -- a result the probe cannot read counts as nonsense
            finite = False
        if not finite:
            return "silent"  # NaN or infinity out: nonsense, whatever came in
        if label == "huge" or (arg in FREE_TEXT and label in TEXT_LABELS):
            return "accepted"  # a value the argument may take (a seed below 2**64, 1e300, a title)
        return "silent"
    if isinstance(error, _Slow):
        return "slow"
    if isinstance(error, (TypeError, ValueError)):
        return "clear" if any(name in str(error) for name in names) else "unnamed"
    return "deep"


def _call(obj, kind, name, signature, values, star, extra):
    """Call the public callable with the recorded arguments, positional ones by position."""
    positional, keywords = [], dict(extra)
    for arg, parameter in signature.parameters.items():
        if arg == "self" or arg not in values:
            continue
        if parameter.kind == parameter.KEYWORD_ONLY:
            keywords[arg] = values[arg]
        elif parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            positional.append(values[arg])
    if kind == "function":
        return obj(*positional, *star, **keywords)
    if kind == "constructor":
        return obj(*positional, *star, **keywords)
    method = getattr(values["self"], name.split(".", 1)[1])
    return method(*positional, *star, **keywords)


def probe(calls) -> dict:
    import matplotlib.pyplot as plt

    kinds = (
        "clear",
        "unnamed",
        "deep",
        "silent",
        "slow",
        "shape accepted",
        "accepted",
        "changed input",
    )
    counts = {k: 0 for k in kinds}
    worst = []
    signal.signal(signal.SIGALRM, _alarm)
    for key, candidates in sorted(calls.items()):
        chosen = _valid(candidates)
        if chosen is None:
            continue
        _, name, obj, kind, values, star, extra, signature, changed_inputs = chosen
        for arg in changed_inputs:
            counts["changed input"] += 1
            worst.append([key, arg, "the valid call", "changed input", ""])
        for arg, value in values.items():
            if arg == "self" or isinstance(value, types.ModuleType):
                continue
            if key.startswith("core.checks.") and arg == "name":  # the checker's label, not input
                continue
            parameter = signature.parameters.get(arg)
            default = None if parameter is None else parameter.default
            try:
                bads = bad_values(arg, value, default)
            except Exception:  # a value the probe cannot vary: say so, and go on
                bads = []
            for label, bad in bads:
                changed = {**copy.copy(values), arg: bad}
                result = None
                try:
                    changed = {k: (v if k == arg else _copied(v)) for k, v in changed.items()}
                    signal.alarm(TIMEOUT)
                    result = _call(obj, kind, name, signature, changed, star, extra)
                    error = None
                except BaseException as caught:  # noqa: BLE001 -- every outcome is counted
                    error = caught
                    if isinstance(caught, KeyboardInterrupt):
                        raise
                finally:
                    signal.alarm(0)
                    plt.close("all")
                # a function told the name to use for what it checks (a checker, a
                # distribution of "first") may name the argument by it
                given = values.get("name")
                names = {arg} | ({given} if isinstance(given, str) and arg != "name" else set())
                outcome = _outcome(error, names, label, arg, result)
                counts[outcome] += 1
                if outcome != "clear":
                    message = "" if error is None else f"{type(error).__name__}: {error}"[:160]
                    worst.append([key, arg, label, outcome, message])
    functions = len(calls)
    expected = sum(
        v for k, v in counts.items() if k not in ("shape accepted", "accepted", "changed input")
    )
    share = counts["clear"] / expected if expected else 0.0
    return {"functions": functions, "counts": counts, "clear share": share, "not clear": worst}


def _same(a, b, depth: int = 0) -> bool:
    """Whether a valid call left its argument as it found it (arrays, containers, records),
    looked at no deeper than four levels."""
    if depth > 4:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        try:
            return bool(np.array_equal(a, b, equal_nan=True))
        except TypeError:
            return bool(np.array_equal(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], depth + 1) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y, depth + 1) for x, y in zip(a, b))
    if hasattr(a, "__dict__") and type(a) is type(b) and not callable(a):
        public = [{k: v for k, v in vars(x).items() if not k.startswith("_")} for x in (a, b)]
        return _same(*public, depth + 1)  # a private memo filled by the call is no change
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True  # NaN, unchanged
    if isinstance(a, (np.random.RandomState, np.random.Generator)):
        return True  # a generator passed in is there to be drawn from
    if type(a).__eq__ is object.__eq__:
        return True  # no equality of its own: counts as unchanged
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 -- a value that cannot be compared counts as unchanged
        return True


def _valid(candidates):
    """The first recorded call that runs without an error (some tests call with bad values)."""
    import matplotlib.pyplot as plt

    for _, name, obj, kind, values, star, extra in candidates:
        function = obj if kind == "function" else getattr(obj, name.split(".", 1)[1])
        try:
            signature = inspect.signature(inspect.unwrap(function))
        except (TypeError, ValueError):
            return None
        try:
            signal.alarm(TIMEOUT)
            copied = {k: _copied(v) for k, v in values.items()}
            _call(obj, kind, name, signature, copied, star, extra)
        except BaseException as caught:  # noqa: BLE001 -- a call the tests made to see it fail
            if isinstance(caught, KeyboardInterrupt):
                raise
            continue
        finally:
            signal.alarm(0)
            plt.close("all")
        changed = [k for k, v in copied.items() if k != "self" and not _same(v, values[k])]
        return (None, name, obj, kind, values, star, extra, signature, changed)
    return None


def pytest_sessionfinish(session, exitstatus):
    import os
    import tempfile

    sys.setprofile(None)
    if _recorder is None:
        return
    path = Path(session.config.getoption("--probe-report")).resolve()
    here = os.getcwd()
    # a bad call that writes files (a path made of a string) writes them here, not in the checkout
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)
        try:
            report = probe(_recorder.valid_calls())
        finally:
            os.chdir(here)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, default=str))
    total = sum(report["counts"].values())
    print(f"\nprobe: {report['functions']} functions, {total} bad calls: {report['counts']}")
    print(f"probe: clear errors in {report['clear share']:.1%} of the calls that should fail")
