"""``bloomedu lab [DIR]``: the lessons in JupyterLab, from any Python that installed bloomedu.

``pip install "bloomedu[lessons]"`` then ``bloomedu lab`` is the whole set-up on Windows, macOS,
Linux or Anaconda: :func:`run_lab` copies the lessons a working folder lacks
(:func:`bloomedu.teaching.lessons.copy_lessons` with ``missing=True``: a student's edits are
kept), starts JupyterLab on that folder from the same Python (``sys.executable -m jupyterlab``,
no shell, no ``jupyter`` on the PATH needed), and prints one URL with its token: the one the
server really listens on, read from the server's own information file, so a busy port that
Jupyter moved past shows as the port it took.  JupyterLab's news question ("Would you like to
get notified about official Jupyter news?") is answered "no" for these sessions by a default
setting override (:data:`SETTING_OVERRIDES`) in a configuration folder only this server reads.
``make lab`` runs it on ``my-lessons/``.  ``language="it"`` (``bloomedu lab --lang it``) copies the
Italian edition instead (into ``my-lessons-it/`` by default, never mixed with the English copy)
and starts the server with ``BLOOMEDU_LANG=it`` in its environment, which every kernel it runs
inherits: the library speaks Italian there (:mod:`bloomedu.i18n`).  The server always gets the
language chosen, so ``bloomedu lab`` is English even where ``BLOOMEDU_LANG=it`` was left set.

Tested in ``tests/test_lab.py`` (a real JupyterLab, its URL asked for ``/api/status``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import webbrowser
from pathlib import Path

__all__ = ["DEFAULT_FOLDER", "SETTING_OVERRIDES", "default_folder", "lab_environment", "lab_command",
           "lab_url", "run_lab"]

DEFAULT_FOLDER = "my-lessons"  # the working copy `make lab` serves (git-ignored)


def default_folder(language: str = "en") -> str:
    """The working folder ``bloomedu lab`` serves when none is named: one per edition.

    >>> default_folder(), default_folder("it")
    ('my-lessons', 'my-lessons-it')
    """
    from ..i18n import check_language

    return DEFAULT_FOLDER if check_language(language) == "en" else f"{DEFAULT_FOLDER}-{language}"


def lab_environment(state: Path, language: str = "en", environ=None) -> dict:
    """The server's environment: this one, with the language of the lessons
    (``BLOOMEDU_LANG``, read by :mod:`bloomedu.i18n` in every kernel) and ``state`` first on
    ``JUPYTER_CONFIG_PATH`` (the settings only this server reads).

    >>> env = lab_environment(Path("/tmp/s"), "it", {"JUPYTER_CONFIG_PATH": "/etc/j"})
    >>> env["BLOOMEDU_LANG"], env["JUPYTER_CONFIG_PATH"].split(os.pathsep)
    ('it', ['/tmp/s', '/etc/j'])
    """
    from ..i18n import ENVIRONMENT, check_language

    environ = os.environ if environ is None else environ
    paths = [str(state), *filter(None, environ.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep))]
    return dict(environ, JUPYTER_CONFIG_PATH=os.pathsep.join(paths),
                **{ENVIRONMENT: check_language(language)})

# JupyterLab's notification plugin: never ask to fetch the news, never check for updates.
SETTING_OVERRIDES = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false",
                                                     "checkForUpdates": False},
}

# The lines of Jupyter's own banner that name a URL or the file that opens one: the URL this
# command prints replaces them, so that exactly one URL is printed.
_BANNER = re.compile(r"token=|jpserver-\S*\.html|To access the server|"
                     r"Or copy and paste one of these URLs|^\[C [^]]*ServerApp\]\s*$|^\s*$")


def lab_command(folder, *, port: int, as_root: bool | None = None) -> list[str]:
    """The command that starts JupyterLab on ``folder``: this Python, loopback only, no
    browser (:func:`run_lab` opens it), Ctrl+C stops it without a question, warnings and
    errors only in its log, ``--allow-root`` when running as root (as in a container).

    >>> cmd = lab_command("my-lessons", port=8888, as_root=True)
    >>> cmd[1:3], "--ServerApp.port=8888" in cmd, "--allow-root" in cmd
    (['-m', 'jupyterlab'], True, True)
    """
    if as_root is None:
        as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    return [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={os.fspath(folder)}",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
            "--ServerApp.open_browser=False", "--ServerApp.answer_yes=True",
            "--ServerApp.log_level=WARN", "--LabApp.log_level=WARN",
            *(["--allow-root"] if as_root else [])]


def lab_url(info: dict) -> str:
    """The URL of the lab a server's information file describes, with its token.

    >>> lab_url({"port": 8889, "base_url": "/", "token": "abc"})
    'http://127.0.0.1:8889/lab?token=abc'
    """
    return f"http://127.0.0.1:{info['port']}{info['base_url']}lab?token={info['token']}"


def _say(text: str) -> None:
    print(text, flush=True)


def _forward(stream, out) -> None:
    """Copy the server's log to ``out``, without the lines of its own URL banner."""
    for line in stream:
        if not _BANNER.search(line):
            out.write(line)
            out.flush()


def _may_open_a_browser() -> bool:
    """A graphical browser can be had: Windows, macOS, or a Linux desktop session (never a
    text browser taking over the terminal of a server or container)."""
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def run_lab(folder=None, *, port: int = 8888, browser: bool = True,
            startup_timeout: float = 300, language: str = "en") -> int:
    """Copy the lessons ``folder`` lacks, start JupyterLab on it and print its URL; returns
    the server's exit status once it stops (Ctrl+C, or its File > Shut Down).

    ``folder`` defaults to :func:`default_folder` of ``language`` (``"en"`` or ``"it"``: the
    edition copied, and the language the library speaks in its kernels).
    A port that is taken is passed over by Jupyter (the next free one is used, and printed).
    A SIGTERM to this process stops the server too.  A bad argument is refused before
    anything is copied:

    >>> run_lab("my-lessons", port=70000)
    Traceback (most recent call last):
    ...
    ValueError: port must be a whole number in 0..65535, got 70000
    >>> run_lab(language="fr")
    Traceback (most recent call last):
    ...
    ValueError: language must be one of 'en', 'it', got 'fr'
    """
    from ..i18n import check_language
    from .lessons import copy_lessons, course_notebooks, kept_note, lessons_folder, tally

    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        raise ValueError(f"port must be a whole number in 0..65535, got {port!r}")
    check_language(language)
    folder = default_folder(language) if folder is None else folder
    if importlib.util.find_spec("jupyterlab") is None:
        raise OSError(f"JupyterLab is not installed in this Python ({sys.executable}): "
                      "pip install \"bloomedu[lessons]\"")
    from jupyter_core.paths import jupyter_runtime_dir  # JupyterLab's own dependency
    target = Path(folder)
    written = copy_lessons(target, missing=True, language=language)
    course = course_notebooks(lessons_folder(language))
    _say(f"copied {tally([path.relative_to(target) for path in written], course)} to {folder}")
    note = kept_note(target, written, course, lessons_folder(language))
    if note:
        _say(note)
    _say(f"Starting JupyterLab on {folder} (this Python: {sys.executable}) ...")
    state = Path(tempfile.mkdtemp(prefix="bloomedu-lab-"))
    overrides = state / "labconfig" / "default_setting_overrides.json"
    overrides.parent.mkdir()
    overrides.write_text(json.dumps(SETTING_OVERRIDES, indent=2))
    env = lab_environment(state, language)
    server = subprocess.Popen(lab_command(target, port=port), env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              errors="replace", bufsize=1)
    forwarder = threading.Thread(target=_forward, args=(server.stdout, sys.stdout), daemon=True)
    forwarder.start()
    previous = _stop_on_sigterm()
    try:
        info = _wait_for_info(server, Path(jupyter_runtime_dir()) / f"jpserver-{server.pid}.json",
                              startup_timeout)
        if info is None:
            forwarder.join(timeout=10)
            _say(f"bloomedu lab: JupyterLab did not start (exit status {server.poll()}); "
                 "its messages are above. Is bloomedu installed with its lessons extra? "
                 "pip install \"bloomedu[lessons]\"")
            return 1
        url = lab_url(info)
        _say(f"JupyterLab is serving {folder}; open this URL in a browser:\n    {url}\n"
             "Stop it with Ctrl+C here (or File > Shut Down in JupyterLab).")
        if browser and _may_open_a_browser():
            webbrowser.open(url)
        while True:
            try:
                return server.wait()
            except KeyboardInterrupt:  # Jupyter got the Ctrl+C too and stops (answer_yes)
                continue
    finally:
        _stop(server)
        forwarder.join(timeout=10)
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(state, ignore_errors=True)


def _stop_on_sigterm():
    def stop(signum, frame):
        raise SystemExit(128 + signum)
    return signal.signal(signal.SIGTERM, stop)


def _wait_for_info(server: subprocess.Popen, path: Path, timeout: float) -> dict | None:
    """The server's information file (its real port and token) once written; None if the
    server exits first."""
    deadline = time.monotonic() + timeout
    while server.poll() is None:
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):  # not written yet, or half written
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"JupyterLab wrote no server information in {timeout:.0f} s")
        time.sleep(0.1)
    return None


def _stop(server: subprocess.Popen) -> None:
    if server.poll() is not None:
        return
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=30)
