"""The course from a wheel, as a student with pip only gets it: built from this project,
installed far from the clone, ``bloomedu lessons DIR`` there, and lessons 01 and 08 run top to
bottom from DIR.

The sdist and then the wheel are built as ``python -m build`` builds them (the wheel from the
unpacked sdist), by setuptools' PEP 517 hooks in this environment: offline, nothing downloaded.
The wheel goes into a new virtual environment with pip's ``--no-index --no-deps``; the packages
it depends on (numpy, JupyterLab, nbval, ...) come from this environment through a ``.pth`` line
that comes after the new environment's own site-packages, where nothing that line names is
processed, so this environment's editable install of bloomedu (the clone) is not seen: the
test checks that bloomedu, its lessons and its command come from the new environment.
"""

import json
import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from bloomedu.teaching.lessons import EDITIONS, LESSON_GLOB, course_notebooks
from lab_support import get, start_lab, stop

pytestmark = pytest.mark.full  # builds, installs and runs two lessons: a minute, not a unit test

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
COURSE = [name.as_posix() for name in course_notebooks(NOTEBOOKS)]  # the English edition
# and every edition the wheel carries beside it (notebooks/it/...)
EVERY_EDITION = COURSE + [f"{code}/{name.as_posix()}" for code in EDITIONS
                          if (NOTEBOOKS / code).is_dir()
                          for name in course_notebooks(NOTEBOOKS / code)]
PACKED = "bloomedu/notebooks/"


def _build(hook: str, source: Path, out: Path) -> Path:
    """Run setuptools' PEP 517 ``hook`` in ``source``, as a build frontend does; the file made."""
    done = subprocess.run([sys.executable, "-c", "import sys, setuptools.build_meta as backend; "
                           f"print(backend.{hook}(sys.argv[1]))", str(out)],
                          cwd=source, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return out / done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """The sdist built from the clone, and the wheel built from that sdist."""
    out = tmp_path_factory.mktemp("dist")
    sdist = _build("build_sdist", ROOT, out)
    with tarfile.open(sdist) as archive:
        archive.extractall(out / "src", **({"filter": "data"} if hasattr(tarfile, "data_filter")
                                            else {}))
    (source,) = (out / "src").iterdir()
    return sdist, _build("build_wheel", source, out)


def test_the_wheel_carries_every_notebook_byte_for_byte(dist):
    with zipfile.ZipFile(dist[1]) as wheel:
        packed = {name[len(PACKED):]: wheel.read(name) for name in wheel.namelist()
                  if name.startswith(PACKED)}
    assert sorted(packed) == sorted(EVERY_EDITION)  # every lesson, deeper one, solution; no twin
    assert {name.split("/")[0] for name in COURSE if "/" in name} >= {"deeper", "solutions"}
    assert any(Path(name).match(LESSON_GLOB) for name in COURSE if "/" not in name)
    assert all(packed[name] == (NOTEBOOKS / name).read_bytes() for name in EVERY_EDITION)
    assert all(json.loads(packed[name])["cells"] for name in EVERY_EDITION)
    tracked = subprocess.run(["git", "ls-files", "notebooks/*.ipynb", "notebooks/**/*.ipynb"],
                             cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode == 0 and tracked.stdout:  # a clone: the committed notebooks, none other
        assert sorted(packed) == sorted(line[len("notebooks/"):]
                                        for line in set(tracked.stdout.splitlines()))


def test_the_sdist_carries_the_notebooks_and_the_license(dist):
    with tarfile.open(dist[0]) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {f"notebooks/{name}" for name in EVERY_EDITION} <= names
    assert {"LICENSE", "setup.py", "MANIFEST.in", "README.md", "pyproject.toml"} <= names
    assert not any(name.startswith("notebooks/") and name.endswith(".py") for name in names)


def test_the_wheel_metadata_says_what_an_index_shows(dist):
    with zipfile.ZipFile(dist[1]) as wheel:
        (info,) = {name.split("/")[0] for name in wheel.namelist() if ".dist-info/" in name}
        metadata = Parser().parsestr(wheel.read(f"{info}/METADATA").decode())
        license_text = wheel.read(f"{info}/licenses/LICENSE")
    assert license_text == (ROOT / "LICENSE").read_bytes()
    assert b"MIT License" in license_text and b"the bloomedu authors" in license_text
    assert metadata["License-Expression"] == "MIT" and metadata["License-File"] == "LICENSE"
    classifiers = metadata.get_all("Classifier")
    assert {"Framework :: Jupyter", "Topic :: Education", "Intended Audience :: Education",
            "Programming Language :: Python :: 3"} <= set(classifiers)
    floor = metadata["Requires-Python"]
    assert floor == ">=3.10" and f"Programming Language :: Python :: {floor[2:]}" in classifiers
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata.get_payload().strip() == (ROOT / "README.md").read_text().strip()
    assert metadata["Version"] and metadata["Version"] in dist[1].name
    assert "lessons" in metadata.get_all("Provides-Extra")
    assert any(r.startswith("jupyterlab") and 'extra == "lessons"' in r
               for r in metadata.get_all("Requires-Dist"))


@pytest.fixture(scope="module")
def installed(dist, tmp_path_factory):
    """A new virtual environment far from the clone with the wheel installed; its python and
    the environment variables to run it with (no PYTHONPATH, Jupyter's folders its own)."""
    home = tmp_path_factory.mktemp("student")
    venv = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    env = {name: value for name, value in os.environ.items()
           if name not in ("PYTHONPATH", "PYTHONHOME", "DISPLAY", "WAYLAND_DISPLAY")}
    env.update(JUPYTER_RUNTIME_DIR=str(home / "jupyter" / "runtime"),
               JUPYTER_CONFIG_DIR=str(home / "jupyter" / "config"),
               JUPYTER_DATA_DIR=str(home / "jupyter" / "data"), IPYTHONDIR=str(home / "ipython"),
               PYDEVD_DISABLE_FILE_VALIDATION="1")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                           "--quiet", "--no-index", "--no-deps", str(dist[1])],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True, env=env).stdout.strip()
    ours = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    (Path(site) / "zz_dependencies_from_the_test_environment.pth").write_text("\n".join(ours) + "\n")
    return home, python, env


def test_the_installed_wheel_speaks_italian(dist, installed):
    with zipfile.ZipFile(dist[1]) as wheel:
        catalog = wheel.read("bloomedu/i18n/locale/it/LC_MESSAGES/bloomedu.mo")
    assert catalog == (ROOT / "bloomedu/i18n/locale/it/LC_MESSAGES/bloomedu.mo").read_bytes()
    home, python, env = installed
    said = subprocess.run([str(python), "-c", "from bloomedu.teaching.predict import predict; "
                           "predict('q', None).reveal(3)"], cwd=home, capture_output=True,
                          text=True, check=True, env=dict(env, BLOOMEDU_LANG="it"))
    assert said.stdout.splitlines()[0] == "Prevedi: q" and said.stdout.splitlines()[-1] == "Misurato: 3."
    italian = [name for name in EVERY_EDITION if name.startswith("it/")]
    script = python.with_name("bloomedu.exe" if os.name == "nt" else "bloomedu")
    copied = subprocess.run([str(script), "lessons", "class-it", "--lang", "it"], cwd=home,
                            capture_output=True, text=True, env=env)
    if not italian:  # the Italian lessons have not landed: the command says so, naming the folder
        assert copied.returncode == 1 and "no lessons of the language 'it'" in copied.stderr
        return
    assert copied.returncode == 0, copied.stderr
    target = home / "class-it"
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) \
        == sorted(name[len("it/"):] for name in italian)


def test_lessons_from_the_installed_wheel_copy_and_run(installed):
    home, python, env = installed
    where = subprocess.run([str(python), "-c", "import bloomedu, bloomedu.teaching.lessons as l; "
                            "print(bloomedu.__file__); print(l.lessons_folder())"],
                           cwd=home, capture_output=True, text=True, check=True, env=env)
    module, folder = where.stdout.splitlines()
    assert Path(module).is_relative_to(home / "venv") and Path(folder).is_relative_to(home / "venv")
    assert not Path(module).is_relative_to(ROOT)

    script = python.with_name("bloomedu.exe" if os.name == "nt" else "bloomedu")
    copied = subprocess.run([str(script), "lessons", "class"], cwd=home, capture_output=True,
                            text=True, env=env)
    assert copied.returncode == 0, copied.stderr
    lessons = [name for name in COURSE if "/" not in name]
    solutions = [name for name in COURSE if name.startswith("solutions/")]
    assert f"copied {len(lessons)} lessons, {len(COURSE) - len(lessons) - len(solutions)} deeper " \
        f"notebooks and {len(solutions)} worked solutions to class" in copied.stdout
    target = home / "class"
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) \
        == sorted(COURSE)
    assert all((target / name).read_bytes() == (NOTEBOOKS / name).read_bytes() for name in COURSE)

    # lessons 01 and 08 top to bottom in the new environment's own kernel; a cell that raises fails
    run = [sorted(target.glob(f"{number}_*.ipynb"))[0] for number in ("01", "08")]
    done = subprocess.run([str(python), "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "--nbval-lax", "--nbval-current-env", "-q", *map(str, run)],
                          cwd=home, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout


def test_bloomedu_lab_from_the_installed_wheel_prints_a_url_that_answers(installed):
    """``bloomedu lab`` of the new environment: its lessons copied into my-lessons of the
    folder it runs in, its JupyterLab started from that environment's Python, one URL."""
    home, python, env = installed
    script = python.with_name("bloomedu.exe" if os.name == "nt" else "bloomedu")
    process, lines, found = start_lab([str(script), "lab", "--no-browser", "--port", "0"],
                                      cwd=home, env=env)
    try:
        status, body = get(found.group(0), found.group(2), "/api/status")
        assert status == 200 and "started" in json.loads(body)
        status, body = get(found.group(0), found.group(2), "/api/contents")
        assert {entry["name"] for entry in json.loads(body)["content"]} >= \
            {name.split("/")[0] for name in COURSE}
    finally:
        stop(process)
    process.reader.join(timeout=30)
    assert "".join(lines).count("token=") == 1
    assert sorted(p.relative_to(home / "my-lessons").as_posix()
                  for p in (home / "my-lessons").rglob("*.ipynb")) == sorted(COURSE)


def test_an_editable_install_prints_no_setuptools_banner(tmp_path):
    """``pip install -e .`` (make lab's first run) builds an editable wheel: setuptools' banner
    about folders named like the package is silenced by setup.py, every other warning shown."""
    done = subprocess.run([sys.executable, "-W", "always", "-c",
                           "import sys, setuptools.build_meta as backend; "
                           "print(backend.build_editable(sys.argv[1]))", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / done.stdout.strip().splitlines()[-1]).name.endswith(".whl")
    assert "Editable installation" not in done.stderr and "Please be careful" not in done.stderr
