"""tools/nbval_kernel: a kernel that dies while starting is started again, its output shown."""

import pytest

from tools import nbval_kernel


def dies(times, printed=b"Address already in use"):
    """A stand-in for nbval's start_new_kernel whose first `times` kernels die after printing."""
    calls = []

    def start(*args, **kwargs):
        calls.append(kwargs)
        if len(calls) <= times:
            kwargs["stderr"].write(printed)
            raise RuntimeError("Kernel died before replying to kernel_info")
        return "manager", "client"

    return start, calls


def test_a_kernel_that_starts_at_once_is_returned_without_a_warning(monkeypatch, recwarn):
    start, calls = dies(0)
    monkeypatch.setattr(nbval_kernel, "_start_new_kernel", start)
    assert nbval_kernel.start_new_kernel(kernel_name="k", cwd=".") == ("manager", "client")
    assert len(calls) == 1 and calls[0]["cwd"] == "." and not recwarn.list


def test_a_kernel_that_died_once_is_started_again_with_a_warning(monkeypatch):
    start, calls = dies(1)
    monkeypatch.setattr(nbval_kernel, "_start_new_kernel", start)
    with open("/dev/null", "w") as devnull:
        with pytest.warns(nbval_kernel.KernelStartWarning, match="Address already in use"):
            started = nbval_kernel.start_new_kernel(kernel_name="k", stderr=devnull)
        assert devnull.closed  # nbval's own stream is replaced, not left open
    assert started == ("manager", "client") and len(calls) == 2


def test_a_kernel_that_never_starts_fails_with_what_each_attempt_printed(monkeypatch):
    start, calls = dies(nbval_kernel.ATTEMPTS, printed=b"ModuleNotFoundError: ipykernel")
    monkeypatch.setattr(nbval_kernel, "_start_new_kernel", start)
    with pytest.raises(RuntimeError, match="no kernel started in 3 attempts") as failed:
        nbval_kernel.start_new_kernel(kernel_name="k")
    assert str(failed.value).count("ModuleNotFoundError: ipykernel") == nbval_kernel.ATTEMPTS
    assert len(calls) == nbval_kernel.ATTEMPTS


def test_the_patch_fits_the_installed_nbval():
    """nbval still starts its kernels by calling kernel.start_new_kernel by name, with stderr as
    a keyword, and the plugin has put itself in that place: a newer nbval that changed either
    would make the patch a silent no-op."""
    import inspect

    import nbval.kernel

    assert nbval.kernel.start_new_kernel is nbval_kernel.start_new_kernel
    assert "kwargs" in inspect.signature(nbval_kernel._start_new_kernel).parameters
    starts = inspect.getsource(nbval.kernel.RunningKernel.__init__)
    assert "start_new_kernel(" in starts and "stderr=" in starts
