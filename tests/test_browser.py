"""The lessons whose point is the browser, run where students run them: JupyterLab in Chromium.

Which lessons: every notebook (lessons, optional lessons, solutions: any folder under
``notebooks/``) whose code cells import one of the course's widgets (:data:`WIDGETS`: the toy
for one key of :mod:`bloomedu.teaching.toy`, the explorer of :mod:`bloomedu.teaching.explorer`),
found by reading its cells' imports, and the last lesson without a widget that starts no engine
(today 20, after Bloom, which starts a Redis server from its kernel and draws its plots; lesson
21's Spark would spend most of the run starting a JVM) as a smoke test of a plain lesson.  Every lesson is executed by strict nbval in both environments anyway (``make
test`` runs it on a copy): here it is the browser that is tested, in the newest environment only.

A fresh JupyterLab server (loopback, random free port, random token, its own
runtime, settings and workspace folders) serves a COPY of ``notebooks/`` with
the outputs of those lessons cleared (beside links to the rest of the project),
so what the page shows afterwards was produced by this run and the committed
files are never autosaved.  Headless Debian Chromium, driven by the PyPI
``playwright`` package (``executable_path``, never a browser download), opens
each lesson, clicks Run → Run All Cells and waits for the kernel to go idle.
Then, for each lesson: every code cell shows an execution count, no output is
an error, the lesson shows at least as many images as its committed notebook
has PNG outputs, and widget outputs render as live widgets (the explorer: its
sliders and its plot, and a click on a button redraws them; the toy for one
key: a key typed into it changes its words and its drawing).  A screenshot of
each lesson goes to ``build/screenshots/``.  The server is stopped by its PID,
with the kernels it started.

Chromium missing is a failure, not a skip: CI installs it (Debian package
``chromium``).
"""

from __future__ import annotations

import ast
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from bloomedu.teaching.lessons import LESSON_GLOB, course_notebooks

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SCREENSHOTS = ROOT / "build" / "screenshots"
LESSONS = sorted(NOTEBOOKS.glob(LESSON_GLOB))  # the lessons, in reading order
# The course's widgets: the module, and the function that makes the widget.
WIDGETS = {"bloomedu.teaching.toy": "toy", "bloomedu.teaching.explorer": "explorer"}


def widgets_imported(path: Path) -> set[str]:
    """The modules of :data:`WIDGETS` whose widget a notebook's code cells import (the
    function itself, or its whole module)."""
    found = set()
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join(line for line in cell.source.splitlines()
                           if not line.lstrip().startswith(("%", "!")))  # IPython magics
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names if alias.name in WIDGETS}
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    if WIDGETS.get(node.module) == alias.name:  # from M import toy
                        found.add(node.module)
                    elif f"{node.module}.{alias.name}" in WIDGETS:  # from bloomedu.teaching import toy
                        found.add(f"{node.module}.{alias.name}")
    return found


def starts_an_engine(path: Path) -> bool:
    """Whether a notebook imports :mod:`bloomedu.teaching.engines` (Spark and PostgreSQL: a JVM
    whose start would be most of its run here; strict nbval runs it in full anyway)."""
    return "bloomedu.teaching.engines" in path.read_text(encoding="utf-8")


def lessons_for_the_browser() -> list[Path]:
    """The notebooks that use a widget, then the last lesson that uses none and starts no engine."""
    notebooks = [NOTEBOOKS / name for name in course_notebooks(NOTEBOOKS)]
    chosen = [path for path in notebooks if widgets_imported(path)]
    plain = next((path for path in reversed(LESSONS)
                  if not widgets_imported(path) and not starts_an_engine(path)), None)
    return chosen + ([plain] if plain else [])


BROWSER_LESSONS = lessons_for_the_browser()
CHROMIUM = os.environ.get("BLOOMEDU_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage"]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
SERVER_START_S = 120
LESSON_RUN_S = 300

# JupyterLab settings for the test's own settings folder: render every cell (no
# virtual scrolling), no news or update checks.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
}

# In the page: the state of the open notebook, from the DOM only.
NOTEBOOK_STATE_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel) return null;
  const indicator = panel.querySelector('.jp-Notebook-ExecutionIndicator');
  const codeCells = [...panel.querySelectorAll('.jp-Notebook .jp-CodeCell')];
  const prompts = codeCells.map(c => (c.querySelector('.jp-InputPrompt')?.textContent || '').trim());
  const stderr = [...panel.querySelectorAll(
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')].map(e => e.textContent);
  const kernel = (panel.querySelector('.jp-KernelName')?.textContent || '').trim();
  return {
    kernel: kernel,
    // the indicator says 'idle' before any kernel exists: only a named kernel counts
    status: indicator && kernel && kernel !== 'No Kernel' ? indicator.getAttribute('data-status') : null,
    prompts: prompts,
    stderr: stderr,
    images: panel.querySelectorAll('.jp-OutputArea-output img').length,
    widgets: panel.querySelectorAll('.jp-OutputArea-output .jupyter-widgets').length,
    sliders: panel.querySelectorAll('.jp-OutputArea-output .widget-slider').length,
    explorer: panel.querySelectorAll('.bloomedu-explorer').length,
    explorerImages: panel.querySelectorAll('.bloomedu-explorer img').length,
    text: panel.innerText,
  };
}"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def committed_counts(path: Path) -> dict:
    """What the committed notebook shows: code cells, PNG outputs, widget outputs."""
    nb = nbformat.read(path, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    return {"code_cells": sum(c.cell_type == "code" for c in nb.cells),
            "png": sum("image/png" in o.get("data", {}) for o in outputs),
            "widgets": sum(WIDGET_MIME in o.get("data", {}) for o in outputs)}


def copy_lessons_without_outputs(target: Path) -> None:
    shutil.copytree(NOTEBOOKS, target, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "*.py"))
    for path in (target / lesson.relative_to(NOTEBOOKS) for lesson in BROWSER_LESSONS):
        nb = nbformat.read(path, as_version=4)
        nb.metadata.pop("widgets", None)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        nbformat.write(nb, path)


class LabServer:
    """A JupyterLab server of our own, started fresh and stopped by its PID."""

    def __init__(self, workdir: Path):
        self.port, self.token = free_port(), secrets.token_hex(24)
        self.base = f"http://127.0.0.1:{self.port}"
        project = workdir / "project"
        self.root = project / "notebooks"
        copy_lessons_without_outputs(self.root)
        for entry in ROOT.iterdir():  # lessons may read ../tests/data and the like
            if entry.name not in {"notebooks", ".git", "build"}:
                (project / entry.name).symlink_to(entry)
        workdir = workdir / "lab"  # the server's own state
        settings = workdir / "settings"
        for name, values in LAB_SETTINGS.items():
            (settings / name).parent.mkdir(parents=True, exist_ok=True)
            (settings / name).write_text(json.dumps(values))
        env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(workdir / "runtime"),
                   JUPYTER_CONFIG_DIR=str(workdir / "config"), IPYTHONDIR=str(workdir / "ipython"),
                   MPLBACKEND="module://matplotlib_inline.backend_inline")
        jupyter = Path(sys.executable).with_name("jupyter")
        command = [str(jupyter), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={self.port}",
                   "--ServerApp.port_retries=0", f"--ServerApp.token={self.token}",
                   f"--ServerApp.root_dir={self.root}",
                   f"--LabApp.user_settings_dir={settings}",
                   f"--LabApp.workspaces_dir={workdir / 'workspaces'}",
                   # nothing from the network: no extension index, no update check
                   "--LabApp.extension_manager=readonly",
                   "--LabApp.check_for_updates_class="
                   "jupyterlab.handlers.announcements.NeverCheckForUpdate"]
        if os.geteuid() == 0:
            command.append("--allow-root")
        self.log = (workdir / "server.log").open("w")
        self.process = subprocess.Popen(command, cwd=self.root, env=env, stdout=self.log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_until_up()

    def api(self, path: str, method: str = "GET"):
        request = urllib.request.Request(f"{self.base}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
        return json.loads(body) if body else None

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + SERVER_START_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.process.returncode}: "
                                   f"{Path(self.log.name).read_text()[-2000:]}")
            try:
                self.api("/api/status")
                return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"jupyter lab did not answer within {SERVER_START_S} s")

    def shut_down_kernels(self) -> None:
        for session in self.api("/api/sessions"):
            self.api(f"/api/sessions/{session['id']}", method="DELETE")

    def stop(self) -> None:
        try:
            self.api("/api/shutdown", method="POST")  # shuts its kernels down too
            self.process.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)
        try:  # anything it started and left behind (kernels), by its process group
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.log.close()


def run_lesson(page, server: LabServer, name: str, workspace: str, expected: dict) -> dict:
    """Open one lesson, Run → Run All Cells, wait for idle and for the ``expected`` figures and
    widgets to render (a loaded machine draws them late); return what the page shows."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.goto(f"{server.base}/lab/workspaces/{workspace}/tree/{name}?token={server.token}",
              wait_until="domcontentloaded")
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=120_000)
    deadline = time.monotonic() + 120
    while (page.evaluate(f"({NOTEBOOK_STATE_JS})") or {}).get("status") != "idle":
        if time.monotonic() > deadline:
            raise AssertionError(f"{name}: no kernel became idle within 120 s")
        dismiss_popups(page)  # e.g. a "Select Kernel" dialog
        page.wait_for_timeout(500)
    dismiss_popups(page)
    for attempt in range(3):  # a click that lands while the page is still settling does nothing
        page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.click()
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-item:not(.lm-mod-disabled) .lm-Menu-itemLabel",
                     has_text=re.compile(r"^Run All Cells$")).click()
        try:
            page.wait_for_function(
                f"() => ({NOTEBOOK_STATE_JS})()?.prompts.some(p => p !== '[ ]:')",
                timeout=60_000, polling=500)
            break
        except PlaywrightTimeout:
            dismiss_popups(page)
    else:
        raise AssertionError(f"{name}: Run All Cells started nothing after 3 tries")
    started = time.monotonic()
    page.wait_for_function(
        f"""() => {{ const s = ({NOTEBOOK_STATE_JS})();
            return s && s.status === 'idle' && s.prompts.length > 0 &&
                   (s.prompts.every(p => /^\\[\\d+\\]:$/.test(p)) ||
                    s.stderr.some(t => t.includes('Traceback'))); }}""",
        timeout=LESSON_RUN_S * 1000, polling=500)
    settle(page, f"""() => {{ const s = ({NOTEBOOK_STATE_JS})();  // figures and widgets come late
               return s && s.images >= {expected['png']} && s.widgets >= {expected['widgets']}; }}""",
           polling=250)
    state = page.evaluate(f"({NOTEBOOK_STATE_JS})")
    state["seconds"] = time.monotonic() - started
    return state


def dismiss_popups(page) -> None:
    """Answer a kernel-choice dialog with its default, close notifications."""
    dialog = page.locator(".jp-Dialog .jp-mod-accept")
    if dialog.count():
        dialog.first.click()
    for button in page.locator(".jp-Notification-Toast-Close, .Toastify__close-button").all():
        button.click()


def screenshot(page, path: Path) -> None:
    """The viewport, scrolled to the explorer panel if there is one, else to the first figure."""
    for selector in (".bloomedu-explorer", ".jp-OutputArea-output img"):
        target = page.locator(selector)
        if target.count():
            target.first.scroll_into_view_if_needed()
            break
    page.screenshot(path=str(path))


def settle(page, expression: str, arg=None, polling="raf") -> bool:
    """Wait up to 60 s for ``expression`` to hold in the page. False if it never did: the
    test's assertions then say what was shown (a loaded machine draws late, not wrongly)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(expression, arg=arg, timeout=60_000, polling=polling)
        return True
    except PlaywrightTimeout:
        return False


def use_explorer(page, shot: Path) -> dict:
    """Click the explorer's "URL strings" button; the numbers before, and after the redraw."""
    panel = page.locator(".bloomedu-explorer").first
    numbers = panel.locator(".bloomedu-explorer-numbers")
    before = numbers.inner_text()
    panel.get_by_role("button", name="URL strings").click()
    if settle(page, """() => [...document.querySelectorAll('.bloomedu-explorer-numbers')]
                           .some(e => e.textContent.includes('keys = url'))"""):
        settle(page, "() => document.querySelectorAll('.bloomedu-explorer img').length >= 1")
    screenshot(page, shot)
    return {"explorer_before": before, "explorer_after": numbers.inner_text(),
            "explorer_images_after": panel.locator("img").count()}


def use_toy(page, shot: Path) -> dict:
    """Type a key into the toy for one key; its words and drawing before and after."""
    panel = page.locator(".bloomedu-toy").first
    words, image = panel.locator(".bloomedu-toy-text"), panel.locator("img").first
    before = {"toy_before": words.inner_text(), "toy_image_before": image.get_attribute("src")}
    box = panel.locator("input[type=text]").first
    box.fill("")
    box.press_sequentially("plum", delay=100)  # the toy redraws as each letter arrives
    page.wait_for_function("""() => [...document.querySelectorAll('.bloomedu-toy-text')]
                              .some(e => e.textContent.includes("key 'plum'"))""", timeout=60_000)
    settle(page, """(before) => { const img = document.querySelector('.bloomedu-toy img');
                                  return img && img.getAttribute('src') !== before; }""",
           arg=before["toy_image_before"])  # the drawing follows the words
    panel.scroll_into_view_if_needed()
    page.screenshot(path=str(shot))
    return {**before, "toy_after": words.inner_text(), "toy_image_after": image.get_attribute("src")}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: the real-browser test needs Debian's chromium "
                    "(apt-get install chromium; make test installs it when run as root)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.fail("the real-browser test needs the PyPI package playwright (the test extra: "
                    "pip install -e '.[dev]'); it drives Debian's chromium, it downloads no browser")
    server = LabServer(tmp_path_factory.mktemp("lab"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def chromium_browser():
    """One headless Chromium for every test here (Playwright's sync API allows one at a time)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: the real-browser test needs Debian's chromium "
                    "(apt-get install chromium; make test installs it when run as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                             headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def browser_page(lab, chromium_browser):
    page = chromium_browser.new_page(viewport={"width": 1280, "height": 1000})
    page.set_default_timeout(60_000)
    yield page
    page.close()


def test_there_are_lessons_to_open():
    assert LESSONS, f"no lessons in {NOTEBOOKS}"
    used = set().union(*(widgets_imported(path) for path in BROWSER_LESSONS))
    assert used == set(WIDGETS), f"no lesson imports the widgets of {set(WIDGETS) - used}"
    assert not widgets_imported(BROWSER_LESSONS[-1])  # and one plain lesson


def test_widgets_are_found_by_what_the_cells_import(tmp_path):
    cells = {"a.ipynb": ["from bloomedu.teaching.toy import toy, toy_view"],
             "b.ipynb": ["%matplotlib inline\nimport numpy as np", "import bloomedu.teaching.explorer"],
             "c.ipynb": ["from bloomedu.teaching import toy as t"],
             "d.ipynb": ["from bloomedu.teaching.explorer import explore, make_keys",
                         "# toy(['apple'])\nprint('explorer(')"]}
    for name, sources in cells.items():
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources]
                                                + [nbformat.v4.new_markdown_cell("toy(")]),
                       tmp_path / name)
    assert {name: widgets_imported(tmp_path / name) for name in cells} == {
        "a.ipynb": {"bloomedu.teaching.toy"}, "b.ipynb": {"bloomedu.teaching.explorer"},
        "c.ipynb": {"bloomedu.teaching.toy"}, "d.ipynb": set()}


def lesson_id(path: Path) -> str:
    return path.relative_to(NOTEBOOKS).with_suffix("").as_posix()


def test_every_notebook_that_shows_a_widget_is_driven_here():
    """A committed widget output means a widget lesson, whatever form its import takes:
    ``import bloomedu.teaching as teaching; teaching.toy(...)`` is not found by
    :func:`widgets_imported`, and strict nbval skips widget outputs (their model IDs are
    random), so such a lesson would otherwise be checked by nothing."""
    notebooks = [NOTEBOOKS / name for name in course_notebooks(NOTEBOOKS)]
    showing = {lesson_id(path) for path in notebooks if committed_counts(path)["widgets"]}
    chosen = {lesson_id(path) for path in BROWSER_LESSONS}
    assert showing, "no committed notebook shows a widget"
    assert showing <= chosen, f"widget lessons left out of the browser test: {showing - chosen}"


@pytest.mark.parametrize("lesson", BROWSER_LESSONS, ids=[lesson_id(p) for p in BROWSER_LESSONS])
def test_lesson_runs_in_jupyterlab(lesson, lab, browser_page):
    expected, used = committed_counts(lesson), widgets_imported(lesson)
    name, shots = lesson.relative_to(NOTEBOOKS).as_posix(), lesson_id(lesson).replace("/", "_")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    try:
        state = run_lesson(browser_page, lab, name, workspace=shots.replace("_", "-"), expected=expected)
        if "bloomedu.teaching.explorer" in used:
            state.update(use_explorer(browser_page, SCREENSHOTS / f"{shots}_url_keys.png"))
        if "bloomedu.teaching.toy" in used:
            state.update(use_toy(browser_page, SCREENSHOTS / f"{shots}_toy.png"))
    finally:
        screenshot(browser_page, SCREENSHOTS / f"{shots}.png")
        lab.shut_down_kernels()
    errors = [text for text in state["stderr"] if "Traceback" in text or re.search(r"\w+Error\b", text)]
    assert errors == [], f"{name} shows errors:\n" + "\n".join(errors)[:3000]
    assert len(state["prompts"]) == expected["code_cells"]
    not_run = [p for p in state["prompts"] if not re.fullmatch(r"\[\d+\]:", p)]
    assert not_run == [], f"{name}: cells without an execution count: {not_run}"
    counts = [int(p[1:-2]) for p in state["prompts"]]
    assert counts == sorted(counts) and len(set(counts)) == len(counts)
    assert state["images"] >= expected["png"], f"{name}: {state['images']} images shown"
    assert "Error displaying widget" not in state["text"]
    if expected["widgets"]:
        assert state["widgets"] >= expected["widgets"], f"{name}: widgets did not render"
    if "bloomedu.teaching.explorer" in used:
        assert state["explorer"] >= 1 and state["sliders"] >= 3, "the explorer panel did not render"
        assert state["explorerImages"] >= 1, "the explorer drew no plot"
        # the panel is live: a click went to the kernel and the numbers came back redrawn
        assert "keys = uint64" in state["explorer_before"]
        assert "keys = url" in state["explorer_after"], state["explorer_after"]
        assert state["explorer_images_after"] >= 1
    if "bloomedu.teaching.toy" in used:  # typed into: its words and its drawing changed
        assert "key 'lime'" in state["toy_before"] and "key 'plum'" in state["toy_after"]
        assert state["toy_image_after"] and state["toy_image_after"] != state["toy_image_before"]


# --- the course site (make html), read in the browser, offline ----------------------------
# The site fixture (tests/conftest.py) builds it once per session; these tests open its front
# page, a lesson and an API page from the files (file://) and served over loopback, search
# with the site's own search box, and fail if any request would leave the machine.

SITE_LESSON = "notebooks/09_one_million_urls.html"
SITE_API = "api/bloomedu.core.filter.html"
SITE_SEARCH_HIT = "api/bloomedu.core.filter.html#bloomedu.core.filter.BloomFilter.from_capacity"
LOCAL_SCHEMES = ("file", "data", "blob", "about", "chrome-error")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")


def is_local(url: str) -> bool:
    """file:, data: and the like, or http(s) to this machine's loopback address."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.scheme in LOCAL_SCHEMES or (
        parts.scheme in ("http", "https", "ws") and parts.hostname in LOOPBACK_HOSTS)


class SiteServer:
    """The built site served by Python's http.server on a free loopback port, in a thread."""

    def __init__(self, folder: Path):
        import functools
        import http.server
        import threading

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

        handler = functools.partial(Quiet, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


@pytest.fixture(scope="module", params=["file", "loopback"])
def site_base(request, site):
    """The site's root URL: its folder as file://, then the same files over loopback HTTP."""
    if request.param == "file":
        yield site.as_uri() + "/"
        return
    server = SiteServer(site)
    try:
        yield server.base
    finally:
        server.stop()


@pytest.fixture
def site_page(chromium_browser):
    """A fresh page that records every request and every script error; any request for
    another machine is recorded and refused (Playwright routing)."""
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.requests, page.remote, page.errors = [], [], []
    page.on("request", lambda request: page.requests.append(request.url))
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("response", lambda response: page.errors.append(f"{response.status} {response.url}")
            if response.status >= 400 else None)  # names what the console's 404 does not
    page.on("console", lambda message: page.errors.append(message.text)
            if message.type == "error" else None)

    def guard(route):
        if is_local(route.request.url):
            route.continue_()
        else:
            page.remote.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    try:
        yield page
    finally:
        context.close()


def assert_stayed_on_this_machine(page) -> None:
    assert page.requests, "no request was recorded"
    assert page.remote == [] and [u for u in page.requests if not is_local(u)] == []
    assert page.errors == [], page.errors


def test_site_front_page_lesson_and_api_page_open_offline(site_page, site_base):
    page, scheme = site_page, "file" if site_base.startswith("file:") else "http"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    page.goto(site_base + "index.html", wait_until="load")
    assert "Article step → module → lesson → test" in page.locator("article").inner_text()
    sidebar = page.locator(".bd-docs-nav a.reference").evaluate_all("as => as.map(a => a.href)")
    lessons = [site_base + p.relative_to(ROOT).with_suffix(".html").as_posix() for p in LESSONS]
    assert [href for href in sidebar if href in lessons] == lessons
    page.wait_for_selector("mjx-container", timeout=30_000)  # the bundled MathJax typeset p
    page.screenshot(path=str(SCREENSHOTS / f"site_index_{scheme}.png"))

    page.goto(site_base + SITE_LESSON, wait_until="load")
    assert page.locator("article h1").first.inner_text().startswith("09 · One million URLs")
    figures = page.locator(".cell_output img")
    assert figures.count() == committed_counts(ROOT / "notebooks" / "09_one_million_urls.ipynb")["png"]
    widths = figures.evaluate_all("imgs => imgs.map(i => i.complete ? i.naturalWidth : 0)")
    assert all(width > 0 for width in widths), widths  # every figure loaded and decoded
    page.locator("article a[href*='api/bloomedu.core.filter.html']").first.click()
    page.wait_for_load_state("load")
    assert page.url.split("#")[0] == site_base + SITE_API
    page.screenshot(path=str(SCREENSHOTS / f"site_lesson_{scheme}.png"))

    page.goto(site_base + SITE_API + "#bloomedu.core.filter.BloomFilter.from_capacity", wait_until="load")
    entry = page.locator("dt[id='bloomedu.core.filter.BloomFilter.from_capacity']")
    assert entry.is_visible() and "from_capacity" in entry.inner_text()
    assert page.locator("article a[href*='notebooks/']").count() >= 1  # back to its lessons
    page.screenshot(path=str(SCREENSHOTS / f"site_api_{scheme}.png"))
    assert_stayed_on_this_machine(page)


def test_site_search_box_finds_from_capacity_offline(site_page, site_base):
    page, scheme = site_page, "file" if site_base.startswith("file:") else "http"
    page.goto(site_base + "index.html", wait_until="load")
    page.locator(".bd-sidebar-primary .search-button-field").first.click()
    box = page.locator("#pst-search-dialog input[type=search]")
    box.fill("from_capacity")
    box.press("Enter")
    page.wait_for_url("**/search.html?q=from_capacity*")
    page.wait_for_function("() => document.querySelectorAll('#search-results li').length > 0 && "
                           "/Search finished/.test(document.querySelector('#search-results').innerText)",
                           timeout=30_000)
    results = page.locator("#search-results li a")
    hrefs = results.evaluate_all("as => as.map(a => a.href)")
    assert hrefs[0] == site_base + SITE_SEARCH_HIT, hrefs[:5]  # the method itself, first
    assert site_base + SITE_LESSON in [h.split("#")[0] for h in hrefs]  # and the lesson using it
    if scheme == "http":  # served, each hit also shows the sentence it was found in
        page.wait_for_function("() => document.querySelectorAll('#search-results p.context').length > 0")
    page.screenshot(path=str(SCREENSHOTS / f"site_search_{scheme}.png"))
    results.first.click()
    page.wait_for_load_state("load")
    assert page.url == site_base + SITE_SEARCH_HIT
    assert page.locator("dt[id='bloomedu.core.filter.BloomFilter.from_capacity']").is_visible()
    assert_stayed_on_this_machine(page)
