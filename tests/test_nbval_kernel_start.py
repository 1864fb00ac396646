"""tools/nbval_kernel_start.py: a kernel that dies at start is started again, then nbval's error."""

import io

import nbval.kernel
import pytest

from tools import nbval_kernel_start
from tools.nbval_kernel_start import patient


def _dies(times):
    calls = []

    def start(*args, **kwargs):
        calls.append(kwargs)
        kwargs["stderr"].write(f"Address already in use (start {len(calls)})\n")
        if len(calls) <= times:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return "km", "kc"

    return start, calls


def test_a_kernel_that_dies_twice_is_started_a_third_time_and_each_failure_is_told():
    start, calls = _dies(2)
    report = io.StringIO()
    assert patient(start, report=report)(kernel_name="python3", cwd="/x") == ("km", "kc")
    assert len(calls) == 3 and all(c["cwd"] == "/x" for c in calls)
    told = report.getvalue()
    assert "kernel start 1 of 3 failed" in told and "kernel start 2 of 3 failed" in told
    assert "Address already in use (start 2)" in told and "giving up" not in told


def test_after_the_last_try_nbvals_own_error_is_raised():
    start, calls = _dies(5)
    report = io.StringIO()
    with pytest.raises(RuntimeError, match="Kernel died before replying"):
        patient(start, tries=2, report=report)(kernel_name="python3")
    assert len(calls) == 2 and "giving up" in report.getvalue()


def test_a_first_start_that_works_is_not_repeated_and_other_errors_pass_through():
    start, calls = _dies(0)
    assert patient(start, report=io.StringIO())() == ("km", "kc") and len(calls) == 1

    def broken(**kwargs):
        raise OSError("no such kernel")

    with pytest.raises(OSError):
        patient(broken)()
    with pytest.raises(ValueError, match="tries"):
        patient(start, tries=0)


def test_the_plugin_wraps_nbvals_start_once(monkeypatch):
    original, calls = _dies(1)
    monkeypatch.setattr(nbval.kernel, "start_new_kernel", original)
    nbval_kernel_start.pytest_configure(None)
    nbval_kernel_start.pytest_configure(None)
    wrapped = nbval.kernel.start_new_kernel
    assert wrapped is not original and wrapped._bloomedu_patient
    assert wrapped(kernel_name="python3") == ("km", "kc") and len(calls) == 2
