"""A pytest plugin for make test's lesson phases: nbval's kernel start, tried again when it dies.

nbval starts one kernel per notebook and gives up at once when that kernel dies before it
answers (jupyter_client: "Kernel died before replying to kernel_info"), failing every cell of
the notebook.  With two xdist workers starting kernels side by side this happens now and then
in ``.venv-oldest`` (ipykernel 6.3.1) for no fault of the lesson: jupyter_client picks five
free ports, closes them and hands them to the kernel, and another process can take one first.
A kernel that died there never ran a cell, so starting it again changes nothing a lesson
checks.

This plugin wraps ``nbval.kernel.start_new_kernel``: up to ``TRIES`` starts, each failure
printed with the kernel's own error output (nbval sends it to /dev/null), and the last one
raised as nbval would.  Load it with ``-p tools.nbval_kernel_start`` (the Makefile does).
Tested in ``tests/test_nbval_kernel_start.py``.
"""

from __future__ import annotations

import sys
import tempfile

TRIES = 3


def patient(start, tries: int = TRIES, report=sys.stderr):
    """``start`` (nbval's ``start_new_kernel``) tried up to ``tries`` times on RuntimeError.

    >>> calls = []
    >>> def flaky(**kwargs):
    ...     calls.append(kwargs["stderr"])
    ...     if len(calls) < 2:
    ...         raise RuntimeError("Kernel died before replying to kernel_info")
    ...     return "km", "kc"
    >>> import io
    >>> patient(flaky, report=io.StringIO())(kernel_name="python3", stderr=None)
    ('km', 'kc')
    >>> len(calls)
    2
    """
    if tries < 1:
        raise ValueError(f"tries must be at least 1, not {tries!r}")

    def start_with_retries(*args, **kwargs):
        for attempt in range(1, tries + 1):
            with tempfile.TemporaryFile("w+") as errors:
                kwargs["stderr"] = errors
                try:
                    return start(*args, **kwargs)
                except RuntimeError as failure:
                    errors.seek(0)
                    said = errors.read().strip()[-2000:] or "(the kernel wrote nothing)"
                    again = "starting it again" if attempt < tries else "giving up"
                    print(f"\nnbval: kernel start {attempt} of {tries} failed ({failure}); "
                          f"{again}. The kernel's stderr:\n{said}", file=report, flush=True)
                    if attempt == tries:
                        raise

    return start_with_retries


def pytest_configure(config):
    import nbval.kernel

    if not getattr(nbval.kernel.start_new_kernel, "_bloomedu_patient", False):
        wrapped = patient(nbval.kernel.start_new_kernel)
        wrapped._bloomedu_patient = True
        nbval.kernel.start_new_kernel = wrapped


__all__ = ["TRIES", "patient"]
