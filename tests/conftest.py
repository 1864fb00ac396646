"""Fixtures shared by test modules: the course site, built once per session, and the bulk
paths run on one thread, then on two workers."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import bloomedu.core.pipeline as pipeline

ROOT = Path(__file__).resolve().parent.parent


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
