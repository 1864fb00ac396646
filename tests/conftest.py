"""Set-up shared by test modules: the Hypothesis profiles, the course site (built once per
run), and the bulk paths run on one thread, then on two workers.

Hypothesis profiles, chosen by ``BLOOMEDU_HYPOTHESIS`` (no test names its own number of examples):

- ``dev`` (the default, and ``make check``): 10 examples a property, for every change;
- ``full`` (``make test``): 200 examples a property, as many as the most any test asked for
  before the profiles, so no property is tried less than it was.

Neither has a deadline or the too-slow health check: how fast this machine happens to be
decides no test.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import bloomedu.core.pipeline as pipeline

ROOT = Path(__file__).resolve().parent.parent

HYPOTHESIS_ENV = "BLOOMEDU_HYPOTHESIS"
HYPOTHESIS_PROFILES = {"dev": 10, "full": 200}  # examples a property
for _name, _examples in HYPOTHESIS_PROFILES.items():
    settings.register_profile(_name, max_examples=_examples, deadline=None, print_blob=True,
                              suppress_health_check=[HealthCheck.too_slow])
_profile = os.environ.get(HYPOTHESIS_ENV) or "dev"
if _profile not in HYPOTHESIS_PROFILES:
    raise pytest.UsageError(f"{HYPOTHESIS_ENV} must be one of {sorted(HYPOTHESIS_PROFILES)}, "
                            f"got {_profile!r}")
settings.load_profile(_profile)


def sphinx_flags() -> list[str]:
    """The flags ``make html`` builds with (``SPHINX_FLAGS`` in the Makefile)."""
    match = re.search(r"^SPHINX_FLAGS\s*:?=\s*(.+)$", (ROOT / "Makefile").read_text(), re.M)
    assert match, "the Makefile defines SPHINX_FLAGS"
    return match.group(1).split()


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """``build/html`` as ``make html`` writes it, built from scratch into a temporary folder.

    The build must succeed with warnings as errors, and print no warning at all.
    """
    try:
        import myst_nb  # noqa: F401
        import sphinx  # noqa: F401
    except ImportError:
        pytest.fail("the site test needs the docs extra: make html (or pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "sphinx", *sphinx_flags(), "-d", str(out / "doctrees"),
                          str(ROOT / "docs"), str(out / "html")],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    log = run.stdout + run.stderr
    (out / "build.log").write_text(f"{log}\n{time.monotonic() - started:.1f} s\n")
    assert run.returncode == 0, log[-5000:]
    assert "WARNING" not in log and "ERROR" not in log, log[-5000:]
    return out / "html"


@pytest.fixture(params=[1, 2], ids=["one thread", "two workers"])
def workers(request, monkeypatch):
    """Run the test with the bulk methods on the calling thread alone, then with 2 workers."""
    monkeypatch.setattr(pipeline, "WORKERS", request.param)
    return request.param
