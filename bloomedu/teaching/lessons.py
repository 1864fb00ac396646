"""Copy the lessons (and their worked solutions) into a folder for a class.

``bloomedu lessons DIR`` (:func:`copy_lessons`) puts every executed notebook of the
course into ``DIR``, in the same folders: the lessons ``NN_slug.ipynb``, the optional ones
of a subfolder such as ``deeper/``, and the worked solutions under ``solutions/``.
The lessons read nothing outside their folder (the data they need ships inside
the package: :mod:`bloomedu.teaching.vectors`), so the copy runs anywhere the
package is installed.  ``notebooks/`` of the repository is their one source: an
installed wheel carries them as ``bloomedu/notebooks/`` (the build copies them there,
``setup.py``), and a package installed from a clone (``pip install -e .``, as ``make lab``
does) reads the clone's ``notebooks/`` itself.

``bloomedu lab`` (and ``make lab``, which runs it) serves such a copy, never ``notebooks/``
itself (JupyterLab's autosave would change the committed lessons): like ``bloomedu lessons
my-lessons --missing`` it copies only the notebooks the working copy lacks, so the lessons a
``git pull`` or an upgrade brings appear there and a student's own edits are never overwritten
(a student who wants a lesson as the course has it deletes their copy; the next ``bloomedu lab``
copies it again).

Each edition has the same layout: the English one is ``notebooks/`` itself, another language's
is a folder in it named for its code (the Italian: ``notebooks/it/01_seen_ids.ipynb``,
``notebooks/it/deeper/...``, ``notebooks/it/solutions/...``), and ``language="it"`` (``bloomedu
lessons DIR --lang it``) copies that one into ``DIR`` in the same layout.  The English edition
never counts another edition's folder among its notebooks.

Tested in ``tests/test_lessons_copy.py``, ``tests/test_cli.py`` and ``tests/test_wheel.py``
(a wheel built, installed far from the clone, its lessons copied and run); ``make test`` runs
strict nbval on the folder this command writes, so the committed outputs are checked where a
class would run them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..i18n import LANGUAGES, check_language

__all__ = ["EDITIONS", "lessons_folder", "course_notebooks", "copy_lessons", "tally", "kept_note"]

LESSON_GLOB = "[0-9][0-9]_*.ipynb"
SOLUTIONS = "solutions"
EDITIONS = tuple(code for code in LANGUAGES if code != "en")  # folders of notebooks/, one each


def _roots() -> tuple[Path, ...]:
    """Where the English lessons may be: the wheel's ``bloomedu/notebooks/``, then the clone's."""
    package = Path(__file__).resolve().parents[1]
    return package / "notebooks", package.parent / "notebooks"


def lessons_folder(language: str = "en") -> Path:
    """Where the lessons of ``language`` are: ``bloomedu/notebooks/`` of an installed wheel, or
    else the ``notebooks/`` folder of the clone this package was installed from (for another
    language than English, its folder ``it/`` there).

    >>> any(lessons_folder().glob(LESSON_GLOB))
    True
    >>> lessons_folder("fr")
    Traceback (most recent call last):
    ...
    ValueError: language must be one of 'en', 'it', got 'fr'
    """
    check_language(language)
    roots = _roots()
    for root in roots:
        if any(root.glob(LESSON_GLOB)):
            break
    else:
        raise FileNotFoundError(
            f"no lessons in {str(roots[0])!r} nor in {str(roots[-1])!r}: this bloomedu was "
            "installed without them; install a wheel built from the project "
            "(pip install 'bloomedu[lessons]') or install it from a clone (pip install -e .)")
    if language == "en":
        return root
    if not any((root / language).glob(LESSON_GLOB)):
        raise FileNotFoundError(f"no lessons of the language {language!r} in "
                                f"{str(root / language)!r}: this bloomedu carries the English "
                                "edition only (its lessons are in "
                                f"{str(root)!r}); install a newer one")
    return root / language


def course_notebooks(folder: Path, *, solutions: bool = True) -> list[Path]:
    """Every notebook under ``folder``, relative to it: the lessons first, then each
    subfolder's (``deeper/``, ``solutions/``, ...) in order; never a hidden folder's
    (``.ipynb_checkpoints``), nor another edition's (``it/``, the Italian lessons beside the
    English ones).  ``solutions=False`` leaves out the ``solutions/`` folder.

    >>> names = course_notebooks(lessons_folder())
    >>> names[0].parent.as_posix(), names[-1].parent.as_posix()
    ('.', 'solutions')
    """
    names = [path.relative_to(folder) for path in folder.rglob("*.ipynb")]
    names = [name for name in names if not any(part.startswith(".") for part in name.parts)
             and (len(name.parts) == 1 or name.parts[0] not in EDITIONS)
             and (solutions or name.parts[0] != SOLUTIONS)]
    return sorted(names, key=lambda name: (len(name.parts) > 1, name.as_posix()))


def _kind(name: Path) -> tuple[str, str]:
    """What a notebook is, by its folder: a lesson, a worked solution, or a ``deeper``
    (or other subfolder's) notebook; singular and plural."""
    folder = name.parts[0] if len(name.parts) > 1 else None
    if folder is None:
        return "lesson", "lessons"
    if folder == SOLUTIONS:
        return "worked solution", "worked solutions"
    return f"{folder} notebook", f"{folder} notebooks"


def tally(names, course) -> str:
    """How many of ``names`` are of each kind that ``course`` holds, lessons first and
    worked solutions last (the kinds of :func:`course_notebooks`' folders).

    >>> course = [Path("01_a.ipynb"), Path("02_b.ipynb"), Path("deeper/01_c.ipynb"),
    ...           Path("solutions/01_a_solutions.ipynb")]
    >>> tally(course, course)
    '2 lessons, 1 deeper notebook and 1 worked solution'
    >>> tally(course[1:2], course[:2])
    '1 lesson'
    """
    kinds = sorted({_kind(Path(name)) for name in course},
                   key=lambda kind: (kind[0] != "lesson", kind[0] == "worked solution", kind))
    counted = [_kind(Path(name)) for name in names]
    parts = [f"{counted.count(kind)} {kind[0] if counted.count(kind) == 1 else kind[1]}"
             for kind in kinds]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def kept_note(target, written, course, source) -> str | None:
    """What a copy with ``missing=True`` left in ``target`` (None if nothing): how many of the
    ``course`` notebooks were already there, and which of them differ from ``source``'s,
    the course's (a student's edits), with the way to get the course's version back.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = (Path(folder) / "01_a.ipynb").write_text("an edit")
    ...     kept_note(folder, [], [Path("01_seen_ids.ipynb")], lessons_folder()) is None
    ...     _ = (Path(folder) / "01_seen_ids.ipynb").write_text("an edit")
    ...     kept_note(folder, [], [Path("01_seen_ids.ipynb")], lessons_folder())
    True
    "left 1 notebook already there untouched; 1 differs from the course's (01_seen_ids.ipynb): delete one to get the course's version back"
    """
    target, source = Path(target), Path(source)
    kept = [name for name in course if target / name not in written and (target / name).exists()]
    if not kept:
        return None
    changed = [name.as_posix() for name in kept
               if (target / name).read_bytes() != (source / name).read_bytes()]
    named = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
    note = f"left {len(kept)} notebook{'' if len(kept) == 1 else 's'} already there untouched"
    if changed:
        note += (f"; {len(changed)} {'differs' if len(changed) == 1 else 'differ'} from the "
                 f"course's ({named}): delete one to get the course's version back")
    return note


def copy_lessons(target, *, solutions: bool = True, overwrite: bool = False,
                 missing: bool = False, language: str = "en") -> list[Path]:
    """Copy every lesson (and, with ``solutions``, the solutions notebooks) into ``target``.

    ``language`` chooses the edition: ``"en"`` (the default) or ``"it"``, copied in the same
    layout (``target/01_seen_ids.ipynb``, ``target/deeper/...``, ``target/solutions/...``).

    Subfolders of ``notebooks/`` are copied as subfolders of ``target``.  ``target`` is
    created if missing.  An existing file is never replaced unless ``overwrite``: without it
    nothing is copied and ``FileExistsError`` names it, and with ``missing`` only the
    notebooks ``target`` lacks are copied, every one already there is kept as it is (a
    working copy a student edits, refreshed with the lessons added since).  Returns the paths
    written, lessons first (:func:`course_notebooks`).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     written = copy_lessons(folder)
    ...     print(written[0].parent == Path(folder), written[-1].relative_to(folder).parent.as_posix())
    ...     _ = written[0].write_text("a student's edit")
    ...     print(copy_lessons(folder, missing=True), written[0].read_text())
    True solutions
    [] a student's edit
    """
    if not isinstance(target, (str, os.PathLike)):
        raise TypeError(f"target must be a folder path (str or os.PathLike), not "
                        f"{type(target).__name__}")
    if not os.fspath(target).strip():  # Path("") is the current folder: never a choice by accident
        raise ValueError(f"target must name a folder, got {os.fspath(target)!r} (use '.' for "
                         "the current folder)")
    check_language(language)
    if overwrite and missing:
        raise ValueError("overwrite and missing exclude each other: overwrite replaces the "
                         "notebooks already in target, missing keeps them")
    source, target = lessons_folder(language), Path(target)
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"target {str(target)!r} exists and is not a folder")
    names = course_notebooks(source, solutions=solutions)
    linked = [name for name in names if _through_a_link(target, name)]
    if linked:
        raise ValueError(f"{str(target / linked[0])!r} is a symbolic link or lies in a linked "
                         f"folder: bloomedu lessons writes only inside {str(target)!r}, never "
                         "through a link (remove the link, or choose another folder)")
    clashes = [name for name in names if os.path.lexists(target / name)]
    if missing:
        names = [name for name in names if name not in clashes]
    elif clashes and not overwrite:
        raise FileExistsError(f"{str(target / clashes[0])!r} exists ({len(clashes)} of the "
                              f"{len(names)} files do): choose an empty folder, add --missing "
                              "to copy only the lessons it lacks, or --overwrite to replace them")
    written = []
    for name in names:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        written.append(_copy_into(source / name, target / name))
    return written


def _through_a_link(target: Path, name: Path) -> bool:
    """True if ``target / name`` or a folder between it and ``target`` is a symbolic link."""
    path = target
    for part in name.parts:
        path = path / part
        if path.is_symlink():
            return True
    return False


def _copy_into(source: Path, destination: Path) -> Path:
    """Copy ``source`` to ``destination`` through a new file beside it, renamed over it at the
    end: a link planted at ``destination`` meanwhile is replaced, never written through."""
    temporary = destination.with_name(f".{destination.name}.{os.getpid()}.partial")
    try:
        with open(source, "rb") as reader, open(temporary, "xb") as writer:
            shutil.copyfileobj(reader, writer)
        os.replace(temporary, destination)
    finally:
        if os.path.lexists(temporary):
            os.unlink(temporary)
    return destination
