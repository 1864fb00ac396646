"""``bloomedu lab [DIR]``: the lessons copied into a working folder and served by a real
JupyterLab from this Python, with one URL printed, the real one (``bloomedu/teaching/lab.py``).

The server test starts JupyterLab on a port that is already taken, so the URL must name the
port Jupyter moved to; it asks that URL's server for ``/api/status`` and ``/lab`` with the
printed token, reads the notification settings the lab gives its page (no news question), and
stops the command by its process ID: the server it started stops with it.
"""

import json
import socket
import sys
from pathlib import Path

import pytest

from bloomedu.cli import main
from bloomedu.teaching.lab import SETTING_OVERRIDES, lab_command, lab_url, run_lab
from bloomedu.teaching.lessons import course_notebooks, lessons_folder
from lab_support import URL, alive, get, isolated_jupyter, start_lab, stop


def check_lab(url: str, token: str) -> None:
    """The URL's server answers with this token: its status, the lab's page, and the news
    question switched off in the settings the page reads."""
    status, body = get(url, token, "/api/status")
    assert status == 200 and "started" in json.loads(body)
    status, page = get(url, token, "/lab")
    assert status == 200 and b"JupyterLab" in page
    plugin = "@jupyterlab/apputils-extension:notification"
    status, body = get(url, token, f"/lab/api/settings/{plugin}")
    defaults = {key: value.get("default")  # the overrides become the schema's defaults
                for key, value in json.loads(body)["schema"]["properties"].items()}
    assert defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False


@pytest.mark.full  # starts JupyterLab: seconds, not a unit test
def test_lab_copies_the_lessons_serves_them_and_prints_the_port_it_really_took(tmp_path):
    work, state = tmp_path / "class" / "my-lessons", tmp_path / "jupyter"
    with socket.socket() as taken:  # the port asked for is busy: Jupyter moves past it
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        process, lines, found = start_lab(
            [sys.executable, "-m", "bloomedu", "lab", str(work), "--no-browser", "--port", str(busy)],
            cwd=tmp_path, env=isolated_jupyter(state))
        try:
            port, token = int(found.group(1)), found.group(2)
            assert port != busy
            check_lab(found.group(0), token)
            info = [json.loads(p.read_text()) for p in (state / "runtime").glob("jpserver-*.json")]
            assert [(i["port"], i["token"], i["root_dir"]) for i in info] == [(port, token, str(work))]
            server = info[0]["pid"]
            assert server != process.pid and alive(server)
        finally:
            status = stop(process)
    process.reader.join(timeout=30)
    out = "".join(lines)
    assert status != 0 and not alive(server), out  # the server stopped with the command
    assert out.count("token=") == 1 and len(URL.findall(out)) == 1, out  # one URL, the real one
    course = course_notebooks(lessons_folder())
    assert sorted(p.relative_to(work) for p in work.rglob("*.ipynb")) == sorted(course)
    assert all((work / name).read_bytes() == (lessons_folder() / name).read_bytes()
               for name in course)
    lessons = [name for name in course if len(name.parts) == 1]
    assert f"copied {len(lessons)} lessons, " in out and "already there" not in out
    assert not list((state / "runtime").glob("jpserver-*.json"))  # the server cleaned up


@pytest.mark.full
def test_lab_keeps_a_student_s_edit_and_defaults_to_my_lessons(tmp_path):
    """No FOLDER: ``my-lessons`` in the current folder, as the README and make lab say; a
    notebook already there is kept as the student left it."""
    work = tmp_path / "my-lessons"
    work.mkdir()
    first = course_notebooks(lessons_folder())[0]
    (work / first).write_text('{"a student": "edit"}')
    process, lines, found = start_lab([sys.executable, "-m", "bloomedu", "lab", "--no-browser",
                                       "--port", "0"], cwd=tmp_path,
                                      env=isolated_jupyter(tmp_path / "jupyter"))
    try:
        status, body = get(found.group(0), found.group(2), "/api/contents")
        served = {entry["name"] for entry in json.loads(body)["content"]}
        assert first.name in served and "solutions" in served
    finally:
        stop(process)
    process.reader.join(timeout=30)
    assert (work / first).read_text() == '{"a student": "edit"}'
    assert "left 1 notebook already there untouched; 1 differs from the course's " \
        f"({first.as_posix()})" in "".join(lines)


def test_the_command_runs_this_python_on_loopback_as_root_too():
    command = lab_command(Path("w"), port=8890, as_root=True)
    assert command[:3] == [sys.executable, "-m", "jupyterlab"]
    assert {"--ServerApp.ip=127.0.0.1", "--ServerApp.port=8890", "--ServerApp.root_dir=w",
            "--ServerApp.open_browser=False", "--allow-root"} <= set(command)
    assert "--allow-root" not in lab_command(Path("w"), port=8890, as_root=False)
    assert lab_url({"port": 8890, "base_url": "/base/", "token": "t"}) == \
        "http://127.0.0.1:8890/base/lab?token=t"
    assert SETTING_OVERRIDES["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"


@pytest.mark.parametrize("port", ["70000", "-1", "eighty", "1.5"])
def test_a_bad_port_is_a_usage_error_naming_it(capsys, port, tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        main(["lab", str(tmp_path / "w"), "--port", port])
    assert exit_info.value.code == 2 and "--port" in capsys.readouterr().err
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize("port", [-1, 65536, 1.5, True, "8888"])
def test_run_lab_refuses_a_bad_port_before_copying(tmp_path, port):
    with pytest.raises(ValueError, match="port must be a whole number in 0..65535"):
        run_lab(tmp_path / "w", port=port)
    assert not (tmp_path / "w").exists()


def test_an_empty_folder_name_is_refused(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["lab", ""]) == 1
    assert "FOLDER must name a folder" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_without_jupyterlab_it_says_which_extra_to_install(capsys, tmp_path, monkeypatch):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *rest: None if name == "jupyterlab" else find_spec(name, *rest))
    assert main(["lab", str(tmp_path / "w")]) == 1
    assert 'pip install "bloomedu[lessons]"' in capsys.readouterr().err
    assert not (tmp_path / "w").exists()
