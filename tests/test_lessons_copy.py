"""The lessons run anywhere: ``bloomedu lessons DIR`` copies them (their subfolders and their
solutions too) out of the repository; ``make lab`` opens such a copy, a working copy it refreshes
with ``--missing`` (new lessons added, a student's edits kept), never the committed notebooks.

That every lesson runs in such a copy, and reproduces its committed outputs there, is checked
by ``make test`` itself: in each environment it copies the lessons with the ``bloomedu lessons``
command of that environment into a temporary folder far from ``tests/data`` and runs strict
nbval on that folder (the last test here checks that the Makefile still does so).
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from bloomedu.cli import main
from bloomedu.teaching import lessons as lessons_module
from bloomedu.teaching.lessons import EDITIONS, copy_lessons, course_notebooks, lessons_folder

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
# The English edition: every notebook but the checkpoints and the other editions' (notebooks/it/)
EVERY = sorted(p.relative_to(NOTEBOOKS).as_posix() for p in NOTEBOOKS.rglob("*.ipynb")
               if ".ipynb_checkpoints" not in p.parts
               and p.relative_to(NOTEBOOKS).parts[0] not in EDITIONS)
SOLUTIONS = [name for name in EVERY if name.startswith("solutions/")]


@pytest.fixture(scope="module")
def copied(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class") / "bloom-class"  # not there yet: it is created
    assert main(["lessons", str(folder)]) == 0
    return folder


def test_the_command_copies_every_lesson_and_solution_and_nothing_else(copied, capsys, tmp_path):
    assert lessons_folder() == NOTEBOOKS
    assert SOLUTIONS and len(EVERY) > len(SOLUTIONS)
    assert sorted(p.relative_to(copied).as_posix() for p in copied.rglob("*")
                  if p.is_file()) == EVERY
    assert all((copied / name).read_bytes() == (NOTEBOOKS / name).read_bytes() for name in EVERY)
    capsys.readouterr()
    assert main(["lessons", str(tmp_path / "again")]) == 0
    out = capsys.readouterr().out
    deeper = [name for name in EVERY if name.startswith("deeper/")]
    lessons = [name for name in EVERY if "/" not in name]
    assert len(lessons) + len(deeper) + len(SOLUTIONS) == len(EVERY)
    assert f"copied {len(lessons)} lessons, {len(deeper)} deeper notebooks and " \
        f"{len(SOLUTIONS)} worked solutions to {tmp_path / 'again'}" in out
    assert "open them with: bloomedu lab" in out and "jupyter lab" not in out
    assert main(["lessons", str(tmp_path / "only"), "--no-solutions"]) == 0
    assert f"copied {len(lessons)} lessons and {len(deeper)} deeper notebooks to" \
        in capsys.readouterr().out


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A notebooks/ folder of our own: two lessons, an optional one in deeper/, a solution,
    and what must not be copied (jupytext twins, a checkpoint, a hidden folder)."""
    folder = tmp_path / "notebooks"
    for name in ["02_second.ipynb", "01_first.ipynb", "deeper/01_first_proof.ipynb",
                 "solutions/01_first_solutions.ipynb", "01_first.py", "deeper/01_first_proof.py",
                 ".ipynb_checkpoints/01_first-checkpoint.ipynb", "deeper/.hidden/x.ipynb"]:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f'{{"name": "{name}"}}')
    monkeypatch.setattr(lessons_module, "_roots", lambda: (folder,))
    return folder


def test_subfolders_are_copied_as_subfolders_lessons_first(course, tmp_path):
    written = copy_lessons(tmp_path / "class")
    names = [p.relative_to(tmp_path / "class").as_posix() for p in written]
    assert names == ["01_first.ipynb", "02_second.ipynb", "deeper/01_first_proof.ipynb",
                     "solutions/01_first_solutions.ipynb"]
    assert all(p.read_bytes() == (course / name).read_bytes() for p, name in zip(written, names))
    assert sorted(p.relative_to(tmp_path / "class").as_posix()
                  for p in (tmp_path / "class").rglob("*") if p.is_file()) == sorted(names)
    assert [p.as_posix() for p in course_notebooks(course, solutions=False)] == names[:3]


def test_an_existing_lesson_is_replaced_only_when_asked(copied, capsys, tmp_path):
    assert main(["lessons", str(copied)]) == 1
    assert "exists" in capsys.readouterr().err
    assert main(["lessons", str(copied), "--overwrite", "--no-solutions"]) == 0
    only = copy_lessons(tmp_path / "only", solutions=False)
    assert [p.relative_to(tmp_path / "only").as_posix() for p in only] == \
        [name for name in sorted(EVERY, key=lambda n: ("/" in n, n)) if name not in SOLUTIONS]
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(NotADirectoryError, match="exists and is not a folder"):
        copy_lessons(tmp_path / "a-file")
    with pytest.raises(TypeError, match="target must be a folder path"):
        copy_lessons(3)


def test_make_test_runs_strict_nbval_on_the_copy_in_both_environments():
    """``make -n test`` (print the commands, run nothing): each environment's own ``bloomedu
    lessons`` writes a folder of each edition that the same environment's pytest then runs with
    ``--nbval``, keeping each notebook's cells on one worker."""
    dry = subprocess.run(["make", "-n", "-B", "test"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    for venv in (".venv", ".venv-oldest"):
        copy = re.search(rf"{re.escape(venv)}/bin/bloomedu lessons (\S+)", dry)
        assert copy, f"make test copies no lessons with {venv}'s bloomedu"
        nbval = re.search(rf"{re.escape(venv)}/bin/python -m pytest .*--nbval .*", dry)
        assert nbval and copy.group(1) in nbval.group(0), f"{venv}: nbval does not run the copy"
        assert "--nbval-lax" not in nbval.group(0) and "--dist loadfile" in nbval.group(0)
        italian = re.search(rf"{re.escape(venv)}/bin/bloomedu lessons (\S+) --lang it", dry)
        assert italian and italian.group(1) != copy.group(1) and italian.group(1) in nbval.group(0)


# --- make lab's working copy --------------------------------------------------------------

def test_missing_copies_only_what_the_folder_lacks_and_keeps_every_edit(course, tmp_path, capsys):
    """A student's working copy after a ``git pull``: the new lesson and the one the student
    deleted are copied, the edited one is kept as the student left it, and the command says so."""
    work = tmp_path / "my-lessons"
    copy_lessons(work)
    (work / "01_first.ipynb").write_text("the student's own")
    (work / "02_second.ipynb").unlink()
    (course / "03_third.ipynb").write_text('{"name": "new after a pull"}')
    assert main(["lessons", str(work), "--missing"]) == 0
    out = capsys.readouterr().out
    assert "copied 2 lessons, 0 deeper notebooks and 0 worked solutions" in out
    assert "left 3 notebooks already there untouched; 1 differs from the course's " \
        "(01_first.ipynb)" in out
    assert (work / "01_first.ipynb").read_text() == "the student's own"
    for name in ["02_second.ipynb", "03_third.ipynb", "deeper/01_first_proof.ipynb"]:
        assert (work / name).read_bytes() == (course / name).read_bytes()
    assert copy_lessons(work, missing=True) == []  # nothing left to copy; nothing touched
    assert (work / "01_first.ipynb").read_text() == "the student's own"
    with pytest.raises(ValueError, match="overwrite and missing exclude each other"):
        copy_lessons(work, overwrite=True, missing=True)
    with pytest.raises(SystemExit):
        main(["lessons", str(work), "--missing", "--overwrite"])
    assert "not allowed with argument" in capsys.readouterr().err
    assert (work / "01_first.ipynb").read_text() == "the student's own"


def test_the_help_says_what_missing_keeps():
    help_text = subprocess.run([sys.executable, "-m", "bloomedu", "lessons", "--help"],
                               capture_output=True, text=True, check=True).stdout
    assert "--missing" in help_text and "make lab" in help_text
    assert "your edits" in help_text and "git pull" in help_text


def make_lab_dry_run(**variables) -> str:
    """``make -n lab``: the commands make lab runs, none of them run."""
    assignments = [f"{name}={value}" for name, value in variables.items()]
    return subprocess.run(["make", "-n", "-B", "lab", *assignments], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout


@pytest.mark.parametrize("language, lab_dir", [("en", "my-lessons"), ("it", "my-lessons-it")])
def test_make_lab_serves_a_git_ignored_working_copy_that_make_clean_keeps(language, lab_dir):
    dry = make_lab_dry_run(LESSONS_LANG=language) if language != "en" else make_lab_dry_run()
    serve = re.search(rf"bin/bloomedu lab (\S+) --lang {language} --port 8888", dry)  # copies, then serves
    assert serve and serve.group(1) == lab_dir
    assert "redis_server --check" in dry[:serve.start()]  # lesson 17's server is checked first
    assert "jupyter lab" not in dry and "notebooks" not in dry[serve.start():]
    ignored = subprocess.run(["git", "check-ignore", "-q", f"{lab_dir}/01_x.ipynb"], cwd=ROOT)
    assert ignored.returncode == 0, f"{lab_dir}/ is not git-ignored"
    assert not Path(lab_dir).parts[0] == "build"
    clean = subprocess.run(["make", "-n", "clean"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout
    assert lab_dir not in clean.split() and "rm" in clean
    assert f"bin/bloomedu lab {ROOT}/x --lang {language} --port 8890 --no-browser" in \
        make_lab_dry_run(LAB_DIR=f"{ROOT}/x", PORT=8890, LAB_FLAGS="--no-browser", LESSONS_LANG=language)


def test_make_lab_says_what_it_does_before_each_slow_step_of_a_first_build():
    """``make lab`` on a fresh clone builds .venv first: a line before each step, and the
    pip steps run under a ticker that says every 10 s that they are still at work."""
    lines = make_lab_dry_run(VENV="/nowhere/venv").splitlines()
    slow = [i for i, line in enumerate(lines) if " -m venv " in line or " -m pip install" in line
            or "ipykernel install" in line]
    assert len(slow) == 4, lines
    for i in slow:
        assert lines[i].startswith("test -x") or lines[i - 1].startswith("echo "), lines[i]
    assert all("still at work" in lines[i] for i in slow if " -m pip install" in lines[i])
    assert all("--quiet" in lines[i] for i in slow if " -m pip install" in lines[i])
    assert 'echo "  creating the virtual environment' in lines[slow[0]]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.full  # starts JupyterLab (and make lab's Redis check): seconds, not a unit test
def test_make_lab_prints_its_url_and_serves_the_working_copy(tmp_path):
    """``make lab`` for real, on a free loopback port, with its working copy in a temporary
    folder that already holds a student's edited lesson: the edit is kept, the rest copied, the
    URL printed, and JupyterLab serves that folder (no ``.py`` twin, as ``notebooks/`` has),
    the edited lesson as edited, with the environment's kernel.  Stopped by its process
    group's ID."""
    import nbformat

    work, port, venv = tmp_path / "my-lessons", free_port(), Path(sys.prefix)
    first = EVERY[0]
    edited = nbformat.read(NOTEBOOKS / first, as_version=4)
    edited.cells[0].source += "\n\nA student's note."
    work.mkdir()
    nbformat.write(edited, work / first)
    mine = (work / first).read_bytes()
    state = tmp_path / "jupyter"  # the server's own runtime, config and settings
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(state / "runtime"),
               JUPYTER_CONFIG_DIR=str(state / "config"), IPYTHONDIR=str(state / "ipython"),
               JUPYTERLAB_SETTINGS_DIR=str(state / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(state / "workspaces"))
    stamp = venv / ".installed"  # the environment is built: make must not rebuild it
    process = subprocess.Popen(["make", "-o", str(stamp), "lab", f"VENV={venv}", f"PORT={port}",
                                f"LAB_DIR={work}", "LAB_FLAGS=--no-browser"], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stdout), daemon=True)
    reader.start()
    try:
        url = rf"http://127\.0\.0\.1:{port}/lab\?token=(\w+)"
        deadline = time.monotonic() + 180
        while not re.search(url, "".join(lines)):
            assert process.poll() is None, "make lab exited:\n" + "".join(lines)[-3000:]
            assert time.monotonic() < deadline, "no URL printed:\n" + "".join(lines)[-3000:]
            time.sleep(0.2)
        token = re.search(url, "".join(lines)).group(1)

        def api(path, method="GET"):
            request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                             headers={"Authorization": f"token {token}"})
            with urllib.request.urlopen(request, timeout=30) as response:
                body = response.read()
            return json.loads(body) if body else None

        served = sorted(entry["name"] for entry in api("/api/contents")["content"])
        assert served == sorted(p.name for p in work.iterdir()), served
        assert not any(name.endswith(".py") for name in served)
        assert (work / first).read_bytes() == mine  # the student's edit survived
        assert all((work / name).read_bytes() == (NOTEBOOKS / name).read_bytes()
                   for name in EVERY if name != first)
        opened = api(f"/api/contents/{first}")["content"]
        assert opened["cells"][0]["source"].endswith("A student's note.")
        spec = api("/api/kernelspecs")["kernelspecs"]["python3"]["spec"]
        assert spec["display_name"] == "Python 3 (bloomedu)"
        assert "".join(lines).count("token=") == 1  # one URL, no placeholder
        assert f"JupyterLab is serving {work}" in "".join(lines)
        api("/api/shutdown", method="POST")
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        reader.join(timeout=10)


# --- never outside the folder: links planted in the target are refused, not followed ---------
@pytest.mark.parametrize("mode", ["fresh", "missing", "overwrite"])
@pytest.mark.parametrize("where", ["a lesson", "a subfolder"])
def test_a_symbolic_link_in_the_target_is_never_written_through(course, tmp_path, mode, where):
    outside = tmp_path / "outside"
    outside.mkdir()
    target = tmp_path / "class"
    target.mkdir()
    if where == "a lesson":  # a dangling link (missing would create its target) and a live one
        (target / "01_first.ipynb").symlink_to(outside / "created.ipynb")
        (outside / "kept.ipynb").write_text("not the course's")
        (target / "02_second.ipynb").symlink_to(outside / "kept.ipynb")
    else:
        (target / "deeper").symlink_to(outside, target_is_directory=True)
    options = {"fresh": {}, "missing": {"missing": True}, "overwrite": {"overwrite": True}}[mode]
    with pytest.raises(ValueError, match="symbolic link"):
        copy_lessons(target, **options)
    assert sorted(p.name for p in outside.iterdir()) == ([] if where == "a subfolder" else
                                                         ["kept.ipynb"])
    assert where == "a subfolder" or (outside / "kept.ipynb").read_text() == "not the course's"


def test_the_refusal_of_a_second_copy_names_both_ways_out(copied, capsys):
    assert main(["lessons", str(copied)]) == 1
    err = capsys.readouterr().err
    assert "--missing" in err and "--overwrite" in err
