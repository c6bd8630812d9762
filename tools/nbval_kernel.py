"""A pytest plugin for nbval, loaded by `make test-notebooks`: a kernel that dies while it starts is
started again, and what it printed to its error stream is shown.

nbval starts each notebook's kernel with that stream sent to /dev/null. When a kernel dies before
it answers its first message ("Kernel died before replying to kernel_info", seen once in CI beside
a busy worker), every cell of the notebook fails and nothing says why. Starting the kernel is not
what the notebooks test, so this plugin tries up to ATTEMPTS times, each with the stream kept in a
temporary file. A kernel that started only on a later attempt leaves a warning in pytest's summary,
with the earlier attempts' output; one that never started fails with all of it.

Why a patch of nbval's own function, kept here: nbval has no option for it (its kernel start
takes a timeout, which waits longer for a kernel that is alive, not a second start for one that
died, nbval issue #133), and a rerun plugin such as pytest-rerunfailures reruns a failed cell in
the kernel that failed to start, not the start.  tests/test_nbval_kernel.py checks that the patch
still fits the nbval the pins install.
"""

import tempfile
import warnings

import nbval.kernel

ATTEMPTS = 3

_start_new_kernel = nbval.kernel.start_new_kernel


class KernelStartWarning(UserWarning):
    """A notebook's kernel started only after one or more attempts died."""


def start_new_kernel(*args, **kwargs):
    """nbval's start_new_kernel, tried up to ATTEMPTS times, each with the kernel's stderr kept."""
    given = kwargs.pop("stderr", None)  # nbval's /dev/null, replaced by a file per attempt
    if given is not None:
        given.close()
    failures = []
    for attempt in range(1, ATTEMPTS + 1):
        with tempfile.TemporaryFile() as stderr:
            # the kernel holds its own copy of the file, which lives until the kernel ends
            kwargs["stderr"] = stderr
            try:
                started = _start_new_kernel(*args, **kwargs)
            except RuntimeError as error:
                stderr.seek(0)
                printed = stderr.read().decode(errors="replace").strip() or "(nothing)"
                failures.append(f"attempt {attempt}: {error}\nthe kernel printed:\n{printed}")
                continue
        if failures:
            told = f"the kernel started at attempt {attempt} of {ATTEMPTS}:\n" + "\n".join(failures)
            warnings.warn(KernelStartWarning(told), stacklevel=2)
        return started
    raise RuntimeError(f"no kernel started in {ATTEMPTS} attempts:\n" + "\n".join(failures))


nbval.kernel.start_new_kernel = start_new_kernel
