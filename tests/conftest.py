"""Set-up shared by test modules: the Hypothesis profiles, the course site (built once per
run, whatever the number of pytest-xdist workers), and the bulk paths run on one thread, then
on two workers.

Hypothesis profiles, chosen by ``BLOOMEDU_HYPOTHESIS`` (no test names its own number of examples):

- ``dev`` (the default, and ``make check``): 10 examples a property, for every change;
- ``full`` (``make test`` in ``.venv``): 200 examples a property, as many as the most any test
  asked for before the profiles, so no property is tried less than it was;
- ``oldest`` (``make test`` in ``.venv-oldest``): 50 examples a property. That run checks that
  every property holds on the lower bounds' releases (numpy 1.24's casting rules, mmh3 4.0); the
  deep search for a counterexample is ``.venv``'s, and the suite stays inside its 20 minutes.

Neither has a deadline or the too-slow health check: how fast this machine happens to be
decides no test.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import bloomedu.kernels.threads as pipeline

ROOT = Path(__file__).resolve().parent.parent

HYPOTHESIS_ENV = "BLOOMEDU_HYPOTHESIS"
HYPOTHESIS_PROFILES = {"dev": 10, "oldest": 50, "full": 200}  # examples a property
for _name, _examples in HYPOTHESIS_PROFILES.items():
    settings.register_profile(_name, max_examples=_examples, deadline=None, print_blob=True,
                              suppress_health_check=[HealthCheck.too_slow])
_profile = os.environ.get(HYPOTHESIS_ENV) or "dev"
if _profile not in HYPOTHESIS_PROFILES:
    raise pytest.UsageError(f"{HYPOTHESIS_ENV} must be one of {sorted(HYPOTHESIS_PROFILES)}, "
                            f"got {_profile!r}")
settings.load_profile(_profile)

# The bulk paths' tests hold numpy's kernels to the reference (some patch their internals); with
# bloomedu[fast] installed they would otherwise run the native ones. tests/test_native_kernels.py
# and the tests parametrized over `kernels` run both (backend.use); BLOOMEDU_KERNELS, when set,
# still decides for the rest.
os.environ.setdefault("BLOOMEDU_KERNELS", "numpy")


def sphinx_flags() -> list[str]:
    """The flags ``make html`` builds with (``SPHINX_FLAGS`` in the Makefile)."""
    match = re.search(r"^SPHINX_FLAGS\s*:?=\s*(.+)$", (ROOT / "Makefile").read_text(), re.M)
    assert match, "the Makefile defines SPHINX_FLAGS"
    return match.group(1).split()


@contextlib.contextmanager
def run_lock(path: Path):
    """Held by one pytest-xdist worker of this run at a time (a lock on ``path``)."""
    import fcntl  # POSIX, as the Makefile

    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_folder(tmp_path_factory) -> Path:
    """The temporary folder of this whole run: under pytest-xdist, the parent of every worker's
    own folder, so what is made there once serves them all."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """``build/html`` as ``make html`` writes it, built from scratch into a temporary folder,
    once per run: the first worker that needs it builds it (Sphinx also writes docs/api and
    docs/notebooks, so two builds at once would collide), the others wait and read that build.

    The build must succeed with warnings as errors, and print no warning at all.
    """
    try:
        import myst_nb  # noqa: F401
        import sphinx  # noqa: F401
    except ImportError:
        pytest.fail("the site test needs the docs extra: make html (or pip install -e '.[docs]')")
    out = run_folder(tmp_path_factory) / "site"
    with run_lock(run_folder(tmp_path_factory) / "site.lock"):
        if not (out / "build.json").exists():
            out.mkdir(exist_ok=True)
            started = time.monotonic()
            run = subprocess.run([sys.executable, "-m", "sphinx", *sphinx_flags(), "-d",
                                  str(out / "doctrees"), str(ROOT / "docs"), str(out / "html")],
                                 cwd=ROOT, capture_output=True, text=True, timeout=600)
            log = run.stdout + run.stderr
            (out / "build.log").write_text(f"{log}\n{time.monotonic() - started:.1f} s\n")
            (out / "build.json").write_text(json.dumps({"returncode": run.returncode, "log": log}))
    build = json.loads((out / "build.json").read_text())
    assert build["returncode"] == 0, build["log"][-5000:]
    assert "WARNING" not in build["log"] and "ERROR" not in build["log"], build["log"][-5000:]
    return out / "html"


@pytest.fixture(params=[1, 2], ids=["one thread", "two workers"])
def workers(request, monkeypatch):
    """Run the test with the bulk methods on the calling thread alone, then with 2 workers."""
    monkeypatch.setattr(pipeline, "WORKERS", request.param)
    return request.param
