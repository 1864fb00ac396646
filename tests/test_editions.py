"""The Italian edition from the command line: ``bloomedu lessons DIR --lang it`` copies
``notebooks/it/`` in the English layout, ``bloomedu lab --lang it`` serves it with the library
speaking Italian (``BLOOMEDU_LANG=it``), and the English edition never counts ``it/`` as its own.

A course of our own stands in for the package's lessons (``lessons._roots`` pointed at it), so
these tests hold before and after the real Italian notebooks land.
"""

import io
import json

import pytest

from bloomedu.cli import main
from bloomedu.teaching import lab as lab_module
from bloomedu.teaching import lessons as lessons_module
from bloomedu.teaching.lab import default_folder, lab_environment, run_lab
from bloomedu.teaching.lessons import copy_lessons, course_notebooks, lessons_folder

ENGLISH = ["01_first.ipynb", "02_second.ipynb", "deeper/01_first_proof.ipynb",
           "solutions/01_first_solutions.ipynb"]
ITALIAN = ["01_first.ipynb", "deeper/01_first_proof.ipynb", "solutions/01_first_solutions.ipynb"]


def _write(folder, names, language):
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps({"name": name, "language": language}))


@pytest.fixture
def course(tmp_path, monkeypatch):
    """notebooks/ with the English lessons and, in it/, the Italian ones."""
    folder = tmp_path / "notebooks"
    _write(folder, ENGLISH, "en")
    _write(folder / "it", ITALIAN + [".ipynb_checkpoints/01_first-checkpoint.ipynb"], "it")
    monkeypatch.setattr(lessons_module, "_roots", lambda: (folder,))
    return folder


def names(paths, root):
    return [path.relative_to(root).as_posix() for path in paths]


def test_the_english_edition_leaves_the_italian_folder_out(course, tmp_path):
    assert lessons_folder() == course and lessons_folder("it") == course / "it"
    assert [name.as_posix() for name in course_notebooks(course)] == ENGLISH
    assert names(copy_lessons(tmp_path / "class"), tmp_path / "class") == ENGLISH
    assert not (tmp_path / "class" / "it").exists()


def test_the_italian_edition_is_copied_in_the_english_layout(course, tmp_path):
    written = copy_lessons(tmp_path / "classe", language="it")
    assert names(written, tmp_path / "classe") == ITALIAN
    assert all(json.loads(path.read_text())["language"] == "it" for path in written)
    assert names(copy_lessons(tmp_path / "only", language="it", solutions=False),
                 tmp_path / "only") == ITALIAN[:2]


def test_the_command_copies_the_italian_lessons(course, tmp_path, capsys):
    assert main(["lessons", str(tmp_path / "classe"), "--lang", "it"]) == 0
    out = capsys.readouterr().out
    assert f"copied 1 lesson, 1 deeper notebook and 1 worked solution to {tmp_path / 'classe'}" in out
    assert f"open them with: bloomedu lab {tmp_path / 'classe'} --lang it" in out
    assert json.loads((tmp_path / "classe" / "01_first.ipynb").read_text())["language"] == "it"
    assert main(["lessons", str(tmp_path / "english")]) == 0
    assert "--lang" not in capsys.readouterr().out


@pytest.mark.parametrize("language", ["fr", "IT", ""])
def test_an_unknown_language_is_a_usage_error_naming_the_flag(course, tmp_path, capsys, language):
    with pytest.raises(SystemExit) as exit_info:
        main(["lessons", str(tmp_path / "x"), "--lang", language])
    assert exit_info.value.code == 2
    assert "--lang must be one of 'en', 'it', got" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["lab", str(tmp_path / "x"), "--lang", language])
    assert not (tmp_path / "x").exists()
    with pytest.raises(ValueError, match="^language must be one of 'en', 'it'"):
        copy_lessons(tmp_path / "x", language=language)


def test_a_package_without_the_italian_lessons_says_so(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "notebooks"
    _write(folder, ENGLISH, "en")
    monkeypatch.setattr(lessons_module, "_roots", lambda: (folder,))
    with pytest.raises(FileNotFoundError, match="no lessons of the language 'it' in"):
        lessons_folder("it")
    assert main(["lessons", str(tmp_path / "classe"), "--lang", "it"]) == 1
    assert "carries the English edition only" in capsys.readouterr().err
    assert not (tmp_path / "classe").exists()


class FakeServer:
    """A JupyterLab that exits at once: what run_lab gave it is kept for the test."""

    started: list = []

    def __init__(self, command, env, **options):
        self.command, self.env, self.pid = command, env, 1
        self.stdout = io.StringIO("")
        FakeServer.started.append(self)

    def poll(self):
        return 1

    wait = poll


@pytest.fixture
def fake_server(monkeypatch):
    FakeServer.started = []
    monkeypatch.setattr(lab_module.subprocess, "Popen", FakeServer)
    return FakeServer.started


def test_lab_in_italian_serves_the_italian_lessons_with_the_library_in_italian(
        course, fake_server, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BLOOMEDU_LANG", "it")
    assert main(["lab", "--lang", "it", "--no-browser"]) == 1  # the fake server never starts
    (server,) = fake_server
    assert server.env["BLOOMEDU_LANG"] == "it"
    assert "--ServerApp.root_dir=my-lessons-it" in server.command
    assert sorted(names((tmp_path / "my-lessons-it").rglob("*.ipynb"), tmp_path / "my-lessons-it")) \
        == sorted(ITALIAN)
    assert "copied 1 lesson, 1 deeper notebook and 1 worked solution to my-lessons-it" in \
        capsys.readouterr().out
    run_lab(tmp_path / "mine", browser=False)  # English, even with BLOOMEDU_LANG=it left set
    assert fake_server[-1].env["BLOOMEDU_LANG"] == "en"
    assert sorted(names((tmp_path / "mine").rglob("*.ipynb"), tmp_path / "mine")) == sorted(ENGLISH)


def test_the_lab_s_folder_and_environment_per_language(tmp_path):
    assert (default_folder(), default_folder("it")) == ("my-lessons", "my-lessons-it")
    env = lab_environment(tmp_path, "it", {"PATH": "/bin", "BLOOMEDU_LANG": "en"})
    assert env["BLOOMEDU_LANG"] == "it" and env["PATH"] == "/bin"
    assert env["JUPYTER_CONFIG_PATH"] == str(tmp_path)
    with pytest.raises(ValueError, match="^language must be one of 'en', 'it', got 'de'"):
        run_lab(tmp_path / "w", language="de")
    assert not (tmp_path / "w").exists()
