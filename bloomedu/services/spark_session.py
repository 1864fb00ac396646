"""A quiet local Spark for the lesson on engines and the Spark tests, and what it needs.

Spark runs here in local mode: pyspark (``pip install 'bloomedu[spark]'``; ``make test`` puts it
in ``.venv``) starts a Java virtual machine, which needs Java 17 or later (Debian:
``apt-get install openjdk-17-jre-headless``; ``make java`` does it as root).  When a part is
missing, :func:`unavailable_reason` says which and how to get it; under ``make test``
(``BLOOMEDU_REQUIRE_ENGINES=1``, :func:`required`) the tests fail on it instead of skipping.

:class:`LocalSpark` starts one session in a temporary folder of its own (``local[1]`` by
default, no web UI, no progress bar, errors only, 512 MiB for the driver, one shuffle
partition, on 127.0.0.1), and :meth:`LocalSpark.stop` stops it and removes the folder.  The
rest moves Spark's Bloom filters between the JVM and Python as ``writeTo`` bytes, which
:class:`bloomedu.compat.spark.SparkBloomFilter` reads and writes.

Tested in ``tests/test_spark.py`` (against a real Spark) and ``tests/test_spark_session.py``.

>>> reason = unavailable_reason()
>>> reason is None or "install" in reason
True
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["SparkUnavailable", "LocalSpark", "required", "unavailable_reason", "find_java",
           "java_version", "parse_java_version", "check_pyspark", "filter_bytes", "read_in_jvm",
           "dataframe_bloom_filter", "py4j_handle", "REQUIRE_ENV", "MIN_JAVA"]

REQUIRE_ENV = "BLOOMEDU_REQUIRE_ENGINES"  # set to 1 by `make test`: a missing Java or pyspark fails
MIN_JAVA = 17                             # Spark 4 runs on Java 17 and 21
HOW_TO_GET_JAVA = ("install Java 17 or later: apt-get install openjdk-17-jre-headless on Debian "
                   "(`make java` does this when run as root), or set JAVA_HOME to a JDK")
HOW_TO_GET_PYSPARK = ("install it: pip install 'bloomedu[spark]' (about 450 MB; `make test` "
                      "installs it into .venv)")
_LOG_CONFIG = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


class SparkUnavailable(RuntimeError):
    """Java or pyspark is missing, or Spark did not start; the message says what and how to
    get it.

    >>> str(SparkUnavailable("no Java")).startswith("no Java")
    True
    """


def required() -> bool:
    """True when the environment demands the engines (``make test`` sets
    BLOOMEDU_REQUIRE_ENGINES=1): a missing Java or pyspark is then a failure, not a skip.

    >>> isinstance(required(), bool)
    True
    """
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


def find_java() -> str:
    """The ``java`` pyspark will start: ``$JAVA_HOME/bin/java``, else the one on the PATH;
    :class:`SparkUnavailable` saying how to get one if there is none.

    >>> saved = os.environ.get("JAVA_HOME"); os.environ["JAVA_HOME"] = "/nowhere"
    >>> find_java()
    Traceback (most recent call last):
    bloomedu.services.spark_session.SparkUnavailable: JAVA_HOME is /nowhere, which has no bin/java: install Java 17 or later: ...
    >>> del os.environ["JAVA_HOME"]; os.environ.update({"JAVA_HOME": saved} if saved else {})
    """
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        if not os.access(candidate, os.X_OK):
            raise SparkUnavailable(f"JAVA_HOME is {home}, which has no bin/java: "
                                   f"{HOW_TO_GET_JAVA}")
        return str(candidate)
    found = shutil.which("java")
    if found is None:
        raise SparkUnavailable(f"no Java on this machine (pyspark starts a JVM): {HOW_TO_GET_JAVA}")
    return found


def java_version(java: str) -> int:
    """The major version of a ``java`` binary, from what ``java -version`` prints
    (:func:`parse_java_version`)."""
    try:
        run = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except OSError as error:
        raise SparkUnavailable(f"{java} does not run ({error}): {HOW_TO_GET_JAVA}") from error
    major = parse_java_version(run.stderr + run.stdout) if run.returncode == 0 else None
    if major is None:
        raise SparkUnavailable(f"{java} -version failed ({(run.stderr or run.stdout).strip()[:200]}): "
                               f"{HOW_TO_GET_JAVA}")
    return major


def parse_java_version(text: str) -> int | None:
    """The major version in ``java -version``'s output (``"1.8.0"`` is Java 8), or None.

    >>> parse_java_version('openjdk version "17.0.15" 2025-04-15'), parse_java_version('java version "1.8.0_392"')
    (17, 8)
    >>> parse_java_version("no java here") is None
    True
    """
    match = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def check_pyspark() -> str:
    """pyspark's version, found without importing it, or :class:`SparkUnavailable` saying how
    to get it.

    >>> try:
    ...     print(check_pyspark()[0].isdigit())
    ... except SparkUnavailable as missing:
    ...     print("bloomedu[spark]" in str(missing))
    True
    """
    if importlib.util.find_spec("pyspark") is None:
        raise SparkUnavailable(f"pyspark is not installed in this environment: {HOW_TO_GET_PYSPARK}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pyspark")
    except PackageNotFoundError:  # on the path but not installed (a PYTHONPATH copy)
        import pyspark

        return pyspark.__version__


def unavailable_reason() -> str | None:
    """None when pyspark and Java 17+ are here; else what is missing and how to get it.

    >>> unavailable_reason() is None or "install" in unavailable_reason()
    True
    """
    try:
        check_pyspark()
        java = find_java()
        if java_version(java) < MIN_JAVA:
            raise SparkUnavailable(f"{java} is Java {java_version(java)}; Spark 4 needs "
                                   f"{MIN_JAVA} or later: {HOW_TO_GET_JAVA}")
    except SparkUnavailable as missing:
        return str(missing)
    return None


class LocalSpark:
    """A quiet local SparkSession in a temporary folder of its own.

    ``session`` is the ``pyspark.sql.SparkSession``; :meth:`stop` (or leaving a ``with``
    block) stops it and removes the folder.  Spark keeps one session a process: a second
    LocalSpark while one runs is refused.

    Used as ``with LocalSpark() as spark: spark.session.range(3).count()`` (about 15 s to
    start here; ``tests/test_spark.py`` starts one per module).  Its defaults:

    >>> LocalSpark.__init__.__defaults__   # cores, driver memory, application name
    (1, '512m', 'bloomedu')
    """

    def __init__(self, cores: int = 1, driver_memory: str = "512m", app_name: str = "bloomedu"):
        reason = unavailable_reason()
        if reason:
            raise SparkUnavailable(reason)
        from pyspark.sql import SparkSession

        if SparkSession.getActiveSession() is not None:
            raise SparkUnavailable("a SparkSession is already running in this process: stop it "
                                   "first (Spark keeps one a process)")
        self.folder = Path(tempfile.mkdtemp(prefix="bloomedu-spark-"))
        log_config = self.folder / "log4j2.properties"
        log_config.write_text(_LOG_CONFIG)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no warning about the host name
        try:
            self.session = (
                SparkSession.builder.master(f"local[{int(cores)}]").appName(app_name)
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.driver.memory", driver_memory)
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", str(int(cores)))
                .config("spark.local.dir", str(self.folder / "local"))
                .config("spark.sql.warehouse.dir", str(self.folder / "warehouse"))
                .config("spark.driver.extraJavaOptions",
                        f"-Dlog4j2.configurationFile={log_config} -Dderby.system.home={self.folder}")
                .getOrCreate())
        except Exception as error:  # noqa: BLE001 - the JVM's own reason is kept
            shutil.rmtree(self.folder, ignore_errors=True)
            raise SparkUnavailable(f"Spark did not start: {error}") from error
        self.session.sparkContext.setLogLevel("ERROR")

    @property
    def jvm(self):
        """The JVM's package tree (py4j), e.g. ``jvm.org.apache.spark.util.sketch.BloomFilter``."""
        return py4j_handle(self.session, "_jvm")

    def stop(self) -> None:
        """Stop the session and remove its folder (twice is harmless)."""
        session, self.session = getattr(self, "session", None), None
        if session is not None:
            session.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> "LocalSpark":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


# --- Spark's Bloom filters as bytes --------------------------------------------------------------
def py4j_handle(obj, name: str):
    """pyspark's py4j handle on the JVM side of ``obj``: ``"_jvm"`` of a SparkSession (the
    JVM's package tree), ``"_jdf"`` of a DataFrame (its Java ``Dataset``).

    pyspark has no public name for either and no Python wrapper for ``stat.bloomFilter``, so
    this module reads them here, in one place, by the names pyspark's own code uses.

    >>> class Frame: _jdf = "the Java Dataset"
    >>> py4j_handle(Frame(), "_jdf")
    'the Java Dataset'
    """
    if name not in ("_jvm", "_jdf"):
        raise ValueError(f"name must be '_jvm' or '_jdf', got {name!r}")
    return getattr(obj, name)


def filter_bytes(jvm, java_filter) -> bytes:
    """The ``writeTo`` bytes of a JVM ``BloomFilter``, through a ``ByteArrayOutputStream``."""
    out = jvm.java.io.ByteArrayOutputStream()
    java_filter.writeTo(out)
    return bytes(out.toByteArray())


def read_in_jvm(jvm, data: bytes):
    """A JVM ``BloomFilter`` read by Spark's ``BloomFilter.readFrom`` from ``data``."""
    return jvm.org.apache.spark.util.sketch.BloomFilter.readFrom(bytearray(data))


def dataframe_bloom_filter(frame, column: str, expected_items: int, fpp: float) -> bytes:
    """``frame.stat.bloomFilter(column, expected_items, fpp)`` as ``writeTo`` bytes (pyspark
    has no Python wrapper for it: the JVM's ``DataFrameStatFunctions`` answers through py4j)."""
    java_filter = py4j_handle(frame, "_jdf").stat().bloomFilter(column, int(expected_items),
                                                               float(fpp))
    return filter_bytes(py4j_handle(frame.sparkSession, "_jvm"), java_filter)
