"""A real local Spark for a test module: started once (``LocalSpark``), stopped at the end.

Under ``make test`` (BLOOMEDU_REQUIRE_ENGINES=1) a Spark that cannot be started FAILS the tests
that need it; elsewhere (an environment without the ``bloomedu[spark]`` extra or without Java)
they skip, saying what is missing and how to get it.  ``conftest.py`` marks every test that asks
for the ``spark`` fixture ``spark`` and ``full``: ``make check`` never starts a JVM.
"""

from __future__ import annotations

import pytest

from bloomedu.services.spark_session import LocalSpark, SparkUnavailable, required


@pytest.fixture(scope="module")
def spark():
    """One quiet ``local[1]`` Spark for the test module (about 15 s to start)."""
    try:
        local = LocalSpark(cores=1, app_name="bloomedu-tests")
    except SparkUnavailable as missing:
        if required():
            pytest.fail(f"no Spark under `make test`: {missing}")
        pytest.skip(str(missing))
    yield local
    local.stop()
