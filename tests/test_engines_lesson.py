"""What lesson 21 needs around the engines (bloomedu/teaching/engines.py), with no engine started:
the message when one is missing, the JVM's output kept out of the notebook, plans without IDs."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from bloomedu.services import postgres_server, spark_session
from bloomedu.teaching import engines


def test_a_missing_engine_is_named_with_how_to_get_it(monkeypatch):
    monkeypatch.setattr(spark_session, "unavailable_reason",
                        lambda: "pyspark is missing: pip install 'bloomedu[spark]'")
    monkeypatch.setattr(postgres_server, "unavailable_reason",
                        lambda: "no initdb: apt-get install postgresql postgresql-contrib")
    assert engines.missing_engines() == ["pyspark is missing: pip install 'bloomedu[spark]'",
                                         "no initdb: apt-get install postgresql postgresql-contrib"]
    assert engines.missing_engines(spark=False) == [
        "no initdb: apt-get install postgresql postgresql-contrib"]
    with pytest.raises(engines.EnginesMissing) as raised:
        engines.require_engines()
    lines = str(raised.value).splitlines()
    assert lines[1:] == ["- pyspark is missing: pip install 'bloomedu[spark]'",
                         "- no initdb: apt-get install postgresql postgresql-contrib"]


def test_all_engines_here_is_one_line(monkeypatch):
    monkeypatch.setattr(spark_session, "unavailable_reason", lambda: None)
    monkeypatch.setattr(postgres_server, "unavailable_reason", lambda: None)
    assert engines.missing_engines() == []
    assert engines.require_engines() == "Java, pyspark and PostgreSQL (with its bloom extension) are here"


def test_a_child_started_inside_output_to_writes_to_the_log_and_never_to_ours(tmp_path, capfd):
    log = tmp_path / "jvm.log"
    print("before", flush=True)
    with engines.output_to(log):
        child = subprocess.Popen([sys.executable, "-c", "import sys, time; time.sleep(0.2); "
                                  "print('out'); print('err', file=sys.stderr)"])
    print("after", flush=True)
    child.wait()  # the child writes after the descriptors were given back, still to the log
    assert log.read_text().split() == ["out", "err"]
    seen = capfd.readouterr()
    assert seen.out.split() == ["before", "after"] and seen.err == ""


def test_output_to_gives_the_descriptors_back_after_an_error(tmp_path, capfd):
    with pytest.raises(ZeroDivisionError):
        with engines.output_to(tmp_path / "log"):
            1 / 0
    os.write(2, b"back\n")
    assert capfd.readouterr().err == "back\n"


class NoisySpark:
    """A stand-in for LocalSpark whose launch writes to the process's stderr, as the JVM does."""

    def __init__(self, cores=1, fail=False):
        os.write(2, b"WARNING: Using incubator modules: jdk.incubator.vector\n")
        if fail:
            raise RuntimeError("Java gateway process exited before sending its port number")
        self.cores = cores
        self.folder = Path(tempfile.mkdtemp(prefix="bloomedu-spark-"))


def test_quiet_spark_keeps_the_launch_output_out_in_the_session_s_folder(monkeypatch, capfd,
                                                                          tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(spark_session, "LocalSpark", NoisySpark)
    session = engines.quiet_spark(cores=2)
    assert session.cores == 2 and capfd.readouterr().err == ""
    assert (session.folder / "spark.log").read_text().startswith("WARNING: Using incubator")
    assert list(tmp_path.iterdir()) == [session.folder]  # no log folder left behind


@pytest.mark.parametrize("cores", [0, -1, 2.5, float("nan"), True, "2", None])
def test_quiet_spark_refuses_odd_cores_before_starting_anything(monkeypatch, cores):
    def never(*args, **kwargs):
        raise AssertionError("LocalSpark was started")

    monkeypatch.setattr(spark_session, "LocalSpark", never)
    with pytest.raises((ValueError, TypeError), match="cores"):
        engines.quiet_spark(cores=cores)


def test_quiet_spark_that_fails_says_why_with_the_jvms_last_words(monkeypatch, capfd, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(spark_session, "LocalSpark", lambda cores: NoisySpark(cores, fail=True))
    with pytest.raises(spark_session.SparkUnavailable) as raised:
        engines.quiet_spark()
    message = str(raised.value)
    assert message.startswith("Java gateway process exited")
    assert message.endswith("WARNING: Using incubator modules: jdk.incubator.vector")
    assert capfd.readouterr().err == ""
    (log,) = tmp_path.glob("bloomedu-spark-log-*/spark.log")  # kept for reading, and named
    assert str(log) in message


def test_plans_lose_their_expression_ids_and_nothing_else():
    plan = ("Filter (isnotnull(campaign#7L) AND might_contain(scalar-subquery#14 [], "
            "xxhash64(campaign#7L, 42)))")
    assert engines.without_ids(plan) == ("Filter (isnotnull(campaign) AND might_contain("
                                         "scalar-subquery [], xxhash64(campaign, 42)))")
