"""What the Spark helper says is missing, without starting Spark (make check).

Starting a real one is tests/test_spark.py's (its module fixture, tests/spark_support.py).
"""

from __future__ import annotations

import importlib.util
import stat

import pytest

from bloomedu.services import spark_session
from bloomedu.services.spark_session import (LocalSpark, SparkUnavailable, find_java, java_version,
                                             required, unavailable_reason)


def test_make_test_requires_the_engines(monkeypatch):
    for value, expected in [("1", True), ("", False), ("0", False)]:
        monkeypatch.setenv("BLOOMEDU_REQUIRE_ENGINES", value)
        assert required() is expected


def test_no_java_is_named_with_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SparkUnavailable, match="no Java on this machine.*openjdk-17-jre-headless"):
        find_java()
    monkeypatch.setattr(spark_session, "check_pyspark", lambda: "4.3.0")
    assert "make java" in unavailable_reason()


def test_an_old_java_is_named(monkeypatch, tmp_path):
    fake = tmp_path / "bin" / "java"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho \'openjdk version "11.0.2" 2019-01-15\' >&2\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    assert java_version(str(fake)) == 11
    monkeypatch.setattr(spark_session, "check_pyspark", lambda: "4.3.0")
    assert "is Java 11; Spark 4 needs 17 or later" in unavailable_reason()
    with pytest.raises(SparkUnavailable, match="Java 11"):
        LocalSpark()


def test_no_pyspark_is_named_with_the_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyspark" else real(name, *a))
    reason = unavailable_reason()
    assert "pyspark is not installed" in reason and "bloomedu[spark]" in reason
    with pytest.raises(SparkUnavailable, match=r"bloomedu\[spark\]"):
        LocalSpark()


def test_a_java_that_does_not_run_is_named(tmp_path):
    broken = tmp_path / "java"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o700)
    with pytest.raises(SparkUnavailable, match="-version failed"):
        java_version(str(broken))
