"""The one build step pyproject.toml cannot declare: the lessons go into the wheel.

``notebooks/`` stays the one source of the lessons.  Building a wheel copies every notebook
under it (the lessons, ``deeper/`` and ``solutions/``, executed, with their outputs; not the
``.py`` twins, not a hidden folder such as ``.ipynb_checkpoints``) into ``bloomedu/notebooks/``
of the build, where :func:`bloomedu.teaching.lessons.lessons_folder` finds them once installed:
``pip install "bloomedu[lessons]"`` then ``bloomedu lessons DIR`` needs no repository.  An
editable install (``pip install -e .``) copies nothing: it reads the clone's ``notebooks/``.
The sdist carries ``notebooks/`` (MANIFEST.in), so a wheel built from it has them too.

Tested in ``tests/test_wheel.py``.
"""

import shutil
import warnings
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

# setuptools' banner at every editable install (pip install -e ., as make lab runs): "Please be
# careful with folders in your working directory with the same name as your package". Ours is
# the package itself, so the advice has nothing to act on; a student saw ten lines of it.
warnings.filterwarnings("ignore", message="Editable installation")

SOURCE = Path("notebooks")  # a PEP 517 build runs in the project's folder
TARGET = Path("bloomedu", "notebooks")


def course_files(source: Path = SOURCE) -> list[Path]:
    """Every notebook under ``source``, relative to it, none in a hidden folder."""
    return sorted(path.relative_to(source) for path in source.rglob("*.ipynb")
                  if not any(part.startswith(".") for part in path.relative_to(source).parts))


class BuildWithLessons(build_py):
    """build_py, then the notebooks of ``notebooks/`` copied into the built package."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / TARGET
        shutil.rmtree(target, ignore_errors=True)  # no notebook left from an earlier build
        names = course_files()
        if not any(len(name.parts) == 1 for name in names):
            raise SystemExit(f"no lessons in {SOURCE.resolve()}: the wheel would carry none")
        for name in names:
            self.mkpath(str((target / name).parent))
            self.copy_file(str(SOURCE / name), str(target / name), preserve_mode=False)


setup(cmdclass={"build_py": BuildWithLessons})
