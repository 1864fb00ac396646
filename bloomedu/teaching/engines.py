"""What the lesson on engines needs around Spark and PostgreSQL: a check that says what is
missing, a Spark whose Java process keeps its chatter out of the notebook, and plans as text
that strict nbval can compare.

- :func:`missing_engines` lists what is missing (Java, pyspark, PostgreSQL or its ``bloom``
  extension), each with how to get it, from :mod:`bloomedu.services.spark_session` and
  :mod:`bloomedu.services.postgres_server`; :func:`require_engines` raises with that list, so
  the lesson stops at its first cell instead of midway.
- :func:`quiet_spark` starts :class:`~bloomedu.services.spark_session.LocalSpark` with the
  file descriptors 1 and 2 of this process sent to a log file while the JVM is launched: the
  JVM inherits them, so what it prints (``WARNING: Using incubator modules``, log4j's first
  lines, a stage's progress) goes to ``spark.log`` in the session's folder, never into a
  notebook's outputs, whatever the kernel captures.
- :func:`without_ids` removes Spark's expression IDs (``campaign#12L``) from a plan's text,
  which change from run to run.

Taught in ``notebooks/21_inside_the_engines.ipynb``; tested in ``tests/test_engines_lesson.py``.

>>> without_ids("Filter (isnotnull(campaign#7L) AND might_contain(x#14, xxhash64(campaign#7L, 42)))")
'Filter (isnotnull(campaign) AND might_contain(x, xxhash64(campaign, 42)))'
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
from pathlib import Path

from ..i18n import gettext as _

__all__ = ["missing_engines", "require_engines", "output_to", "quiet_spark", "without_ids",
           "EnginesMissing"]

_EXPRESSION_ID = re.compile(r"#\d+L?")


class EnginesMissing(RuntimeError):
    """Java, pyspark or PostgreSQL is missing; the message lists each, with how to get it.

    >>> str(EnginesMissing("x")).startswith("x")
    True
    """


def missing_engines(spark: bool = True, postgres: bool = True) -> list[str]:
    """What the lesson's engines lack, one line each with how to get it; empty when all are here.

    >>> isinstance(missing_engines(), list)
    True
    >>> missing_engines(spark=False, postgres=False)
    []
    """
    from ..services import postgres_server, spark_session

    reasons = []
    if spark:
        reasons.append(spark_session.unavailable_reason())
    if postgres:
        reasons.append(postgres_server.unavailable_reason())
    return [reason for reason in reasons if reason]


def require_engines(spark: bool = True, postgres: bool = True) -> str:
    """A line saying the engines are here; :class:`EnginesMissing` listing what is not, if any.

    >>> try:
    ...     line = require_engines()
    ... except EnginesMissing as missing:
    ...     line = str(missing)
    >>> line.startswith(("Java, pyspark and PostgreSQL", "This lesson runs Spark and PostgreSQL"))
    True
    """
    missing = missing_engines(spark=spark, postgres=postgres)
    if missing:
        raise EnginesMissing("This lesson runs Spark and PostgreSQL on this machine, and some "
                             "of what they need is missing:\n- " + "\n- ".join(missing))
    return _("Java, pyspark and PostgreSQL (with its bloom extension) are here")


@contextlib.contextmanager
def output_to(path):
    """Send this process's file descriptors 1 and 2 to the file ``path`` (appended) while
    inside, and restore them after: a child process started inside keeps writing there.

    >>> import subprocess, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     log = Path(folder) / "child.log"
    ...     with output_to(log):
    ...         _ = subprocess.run(["sh", "-c", "echo to-the-log >&2"])
    ...     log.read_text()
    'to-the-log\\n'
    """
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with open(path, "ab") as log:
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            yield Path(path)
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        for fd, copy in zip((1, 2), saved):
            os.dup2(copy, fd)
            os.close(copy)


def quiet_spark(cores: int = 2, **options):
    """A :class:`~bloomedu.services.spark_session.LocalSpark` whose JVM writes to
    ``spark.log`` in the session's folder instead of this process's output; the session's
    ``stop()`` removes it with the folder.

    If Spark fails to start, the error raised names the log (kept, for reading) and its last lines.
    """
    import tempfile

    from ..core.checks import whole_number
    from ..services.spark_session import LocalSpark, SparkUnavailable

    cores = whole_number(cores, "cores", 1, 1024)
    # the session's folder is made by LocalSpark, so the launch logs into a folder of its own
    # first and the log moves into the session's folder once there is one (the JVM keeps writing
    # to it: a rename keeps the file), which the session's stop() removes
    log = Path(tempfile.mkdtemp(prefix="bloomedu-spark-log-")) / "spark.log"
    try:
        with output_to(log):
            session = LocalSpark(cores=cores, **options)
    except Exception as error:  # noqa: BLE001 - the JVM's own words are added to any failure
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise SparkUnavailable(f"{error}\nthe JVM's output ({log}) ends:\n{tail}") from error
    shutil.move(log, session.folder / log.name)
    log.parent.rmdir()
    return session


def without_ids(plan: str) -> str:
    """``plan`` with Spark's expression IDs (``#12``, ``#7L``) removed.

    >>> without_ids("Aggregate [bloom_filter_agg(xxhash64(campaign#8L, 42), 1000000, 8388608, 0, 0) AS bloomFilter#13]")
    'Aggregate [bloom_filter_agg(xxhash64(campaign, 42), 1000000, 8388608, 0, 0) AS bloomFilter]'
    """
    return _EXPRESSION_ID.sub("", plan)
