"""A reveal.js deck and a PDF handout per lesson, built from the lessons and served from the machine.

    python -m tools.slides                  # make slides: every lesson, solution and deeper notebook
    python -m tools.slides --no-handouts notebooks/05_bloom_filter.ipynb
    python -m tools.slides --no-handouts --measure   # and the height of every screen, in Chromium

Each notebook becomes ``build/slides/<group>/NN_slug.slides.html`` (lessons at the top,
``solutions/`` and ``deeper/`` below) by nbconvert's slides exporter, which reads the cell
marks ``tools/slide_marks.py`` writes (slides, fragments, notes), with the template in
``tools/slides/templates/bloomedu_reveal``: reveal.js and require.js from npm
(``tools/slides/package.json`` and its lock, installed once into ``build/npm/``, never
committed), MathJax 3 from the ``sphinx-mathjax-offline`` package of the docs extra, the
theme ``white`` (the default ``simple`` loads Google Fonts), all copied into
``build/slides/_assets/``.  Nothing is fetched when a deck opens, from its files or a server.

Every screen fits 1280×800: ``tools/slide_marks.py`` starts a subslide where the cells would run
past the screen and cuts a cell taller than a screen for the deck (``--measure`` measures every
screen in Chromium and names any taller than 800 px).

The handout ``NN_slug.handout.pdf`` is the deck printed by headless Chromium (reveal.js's
``?print-pdf`` layout: one slide a page, its speaker notes on a page after it, every page
numbered "n / total" once), driven by playwright with Debian's ``chromium``; a request for
anything off the machine stops the build.  ``build/slides/index.html`` lists every deck under its
lesson's title, with its handout.  The build prints a line as it starts each step and one per deck
(its slides, fragments and notes) and per handout (its pages).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import html
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from tools import lesson_cells, slide_marks

ROOT = lesson_cells.ROOT
HERE = Path(__file__).resolve().parent / "slides"
TEMPLATES = HERE / "templates"
OUT = ROOT / "build" / "slides"
NPM_CACHE = ROOT / "build" / "npm"
ASSETS = "_assets"
THEME = "white"  # reveal.js's default, simple, loads Google Fonts; white loads its font from beside it
CHROMIUM = os.environ.get("BLOOMEDU_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WIDGET_NOTE = ("<p><em>An interactive widget is shown here when the lesson runs in Jupyter "
               "(<code>make lab</code>); a slide cannot run it.</em></p>")
LOCAL_SCHEMES = ("file", "data", "blob", "about")
# What recorded_page's guard is asked about (matched inside playwright's driver): any URL whose
# scheme is not one of LOCAL_SCHEMES, so loopback and every other host still reach is_local.
NOT_A_LOCAL_SCHEME = re.compile(rf"^(?!(?:{'|'.join(LOCAL_SCHEMES)}):)", re.IGNORECASE)
PRINT_TIMEOUT_MS = 120_000


def is_local(url: str) -> bool:
    """True for a URL that stays on this machine: a file, data or blob URL, or loopback.

    >>> is_local("file:///tmp/deck.html"), is_local("https://unpkg.com/reveal.js"), is_local("//cdn.x/y.js")
    (True, False, False)
    """
    parts = urlsplit(url.strip())
    if parts.scheme in LOCAL_SCHEMES:
        return True
    if parts.scheme in ("http", "https", "ws") or parts.netloc:
        return parts.hostname in ("127.0.0.1", "localhost", "::1")
    return not parts.scheme  # a relative URL: beside the deck


# --- the scripts: npm's reveal.js and require.js, the docs extra's MathJax ---------------------

def npm_modules(cache: Path = NPM_CACHE) -> Path:
    """``node_modules`` with exactly the lock's packages, installed by ``npm ci`` when the lock changes."""
    cache.mkdir(parents=True, exist_ok=True)
    lock = (HERE / "package-lock.json").read_bytes()
    stamp = hashlib.sha256((HERE / "package.json").read_bytes() + lock).hexdigest()
    with open(cache / ".lock", "w") as guard:  # one install at a time, across processes
        fcntl.flock(guard, fcntl.LOCK_EX)
        done = cache / ".installed"
        if not (done.exists() and done.read_text() == stamp and (cache / "node_modules").is_dir()):
            for name in ("package.json", "package-lock.json"):
                shutil.copyfile(HERE / name, cache / name)
            npm = shutil.which("npm")
            if npm is None:
                raise RuntimeError("make slides needs npm (Debian: apt-get install npm) for reveal.js")
            subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
                           cwd=cache, check=True)
            done.write_text(stamp)
    return cache / "node_modules"


def mathjax_dir() -> Path:
    """MathJax 3 as the ``sphinx-mathjax-offline`` package ships it (the docs extra)."""
    spec = importlib.util.find_spec("sphinx-mathjax-offline")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("make slides needs the docs extra's sphinx-mathjax-offline (make env)")
    found = Path(list(spec.submodule_search_locations)[0]) / "static" / "mathjax"
    if not (found / "tex-chtml.js").is_file():
        raise RuntimeError(f"no MathJax in {found}")
    return found


def copy_assets(out: Path, modules: Path) -> Path:
    """reveal.js (the script, its styles, the white theme and its font, the notes plugin),
    require.js and MathJax, under ``out/_assets``."""
    assets = out / ASSETS
    reveal, copied = modules / "reveal.js", assets / "reveal.js"
    trees = {reveal / "plugin" / "notes": copied / "plugin" / "notes",
             reveal / "dist" / "theme" / "fonts" / "source-sans-pro":
                 copied / "dist" / "theme" / "fonts" / "source-sans-pro",  # the white theme's font
             mathjax_dir(): assets / "mathjax"}
    for source, target in trees.items():
        shutil.copytree(source, target, dirs_exist_ok=True)
    files = {reveal / "dist" / name: copied / "dist" / name for name in ("reveal.js", "reveal.css", "reset.css")}
    files[reveal / "dist" / "theme" / f"{THEME}.css"] = copied / "dist" / "theme" / f"{THEME}.css"
    files[modules / "requirejs" / "require.js"] = assets / "require.js"
    for source, target in files.items():
        shutil.copyfile(source, target)
    return assets


# --- decks --------------------------------------------------------------------------------------

def deck_path(notebook: Path, out: Path) -> Path:
    """Where a notebook's deck goes: its folder under notebooks/, mirrored under ``out``.

    >>> deck_path(ROOT / "notebooks/solutions/03_bit_vector_solutions.ipynb", Path("/o")).as_posix()
    '/o/solutions/03_bit_vector_solutions.slides.html'
    """
    try:
        folder = notebook.resolve().parent.relative_to(lesson_cells.NOTEBOOKS)
    except ValueError:  # a notebook from elsewhere: at the top
        folder = Path()
    return out / folder / f"{notebook.stem}.slides.html"


def handout_path(deck: Path) -> Path:
    return deck.with_name(deck.name.replace(".slides.html", ".handout.pdf"))


def exporter():
    from nbconvert import SlidesExporter

    return SlidesExporter(template_name="bloomedu_reveal", extra_template_basedirs=[str(TEMPLATES)],
                          reveal_theme=THEME, reveal_transition="none")


def write_deck(notebook: Path, out: Path, slides=None) -> Path:
    """One notebook's deck, its scripts found at ``out/_assets`` by a relative path."""
    nb = slide_marks.split_tall_cells(lesson_cells.replace_widgets(lesson_cells.read(notebook), WIDGET_NOTE))
    target = deck_path(notebook, out)
    target.parent.mkdir(parents=True, exist_ok=True)
    assets = os.path.relpath(out / ASSETS, target.parent).replace(os.sep, "/")
    resources = {"metadata": {"name": lesson_cells.title(nb)}, "bloomedu": {"assets": assets}}
    slides = slides or exporter()
    slides.reveal_url_prefix = f"{assets}/reveal.js"  # the theme's and reveal.css's links
    body, _ = slides.from_notebook_node(nb, resources=resources)
    target.write_text(NOTEBOOK_LINK.sub(r'href="\1.slides.html\2"', body), encoding="utf-8")
    return target


# A link between lessons (``[lesson 03](03_bit_vector.ipynb)``) goes to that lesson's deck.
NOTEBOOK_LINK = re.compile(r'href="((?![a-z][a-z0-9+.-]*:)[^"#]*?)\.ipynb(#[^"]*)?"')


GROUP_TITLES = {"lessons": "Lessons", "solutions": "Worked solutions", "deeper": "Going deeper"}


def group_of(deck: Path, out: Path) -> str:
    """The group a deck belongs to, from its folder under ``out`` ("lessons" at the top).

    >>> group_of(Path("/o/deeper/04_chi_square.slides.html"), Path("/o")), group_of(Path("/o/01_a.slides.html"), Path("/o"))
    ('deeper', 'lessons')
    """
    folder = deck.parent.relative_to(out).as_posix().strip(".")
    return next((group for group, name in lesson_cells.GROUPS.items() if name == folder), folder)


def write_index(out: Path, decks: dict[Path, str]) -> Path:
    """``index.html``: every deck under its lesson's title (its first heading), grouped as the
    notebooks are (lessons, worked solutions, deeper), with its handout when there is one.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> page = write_index(out, {out / "01_seen.slides.html": "01 · Remembering <every> click ID"})
    >>> "<h2>Lessons</h2>" in page.read_text() and "01 · Remembering &lt;every&gt; click ID</a>" in page.read_text()
    True
    """
    groups: dict[str, list[str]] = {}
    for deck, title in decks.items():
        name = deck.relative_to(out).as_posix()
        handout = handout_path(deck)
        link = (f' · <a href="{html.escape(handout.relative_to(out).as_posix())}">handout (PDF)</a>'
                if handout.exists() else "")
        groups.setdefault(group_of(deck, out), []).append(
            f'<li><a href="{html.escape(name)}">{html.escape(title)}</a>{link}</li>')
    sections = "".join(f"<h2>{html.escape(GROUP_TITLES.get(group, group))}</h2>\n<ul>\n{chr(10).join(rows)}\n</ul>\n"
                       for group, rows in groups.items())
    page = out / "index.html"
    page.write_text("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<title>bloomedu slides</title></head><body><h1>bloomedu: slides and handouts</h1>\n"
                    f"{sections}</body></html>\n", encoding="utf-8")
    return page


# --- handouts -----------------------------------------------------------------------------------

@contextlib.contextmanager
def chromium():
    """Headless Debian Chromium under playwright (no browser download)."""
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} not found: the handouts need Debian's chromium "
                           "(apt-get install chromium; make test installs it when run as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def recorded_page(browser, width: int = 1280, height: int = 800):
    """A page in a context of its own that records every request in ``page.requests``, refuses
    and records in ``page.remote`` any for another machine, and keeps script and console errors
    and HTTP failures in ``page.errors``."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.requests, page.remote, page.errors = [], [], []
    page.on("request", lambda request: page.requests.append(request.url))
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on("console", lambda message: page.errors.append(message.text) if message.type == "error" else None)
    page.on("response", lambda response: page.errors.append(f"{response.status} {response.url}")
            if response.status >= 400 else None)

    def guard(route):
        if is_local(route.request.url):
            route.continue_()
        else:
            page.remote.append(route.request.url)
            route.abort()

    # Only a request that is not a file, data, blob or about URL goes to the guard: routing every
    # request sent each of a page's two dozen files through Python and back (playwright's
    # interception), about a fifth of a site page's load, for URLs the guard lets through anyway.
    context.route(NOT_A_LOCAL_SCHEME, guard)
    return page


def forget_records(page) -> None:
    """Empty a :func:`recorded_page`'s records, so that they hold only what the next document asks for."""
    page.requests.clear()
    page.remote.clear()
    page.errors.clear()


def open_deck(browser, deck: Path, query: str = "", prepare=None, page=None):
    """A page (:func:`recorded_page`) showing ``deck`` once reveal.js is ready and MathJax has typeset it.

    ``prepare(page)``, if given, runs before the deck is loaded (a test's routes).  ``page``, if
    given, is a :func:`recorded_page` to load the deck into, its records emptied first: a loop
    over every deck reuses one page, which costs about half a second less a deck than a new
    context each (its creation, and scripts parsed again with no code cache)."""
    if page is None:
        page = recorded_page(browser)
    else:
        forget_records(page)
    if prepare is not None:
        prepare(page)
    page.goto(deck.resolve().as_uri() + query, wait_until="load")
    page.wait_for_function("() => document.querySelector('.reveal.ready') && "
                           "document.documentElement.getAttribute('data-mathjax') === 'typeset'",
                           timeout=PRINT_TIMEOUT_MS)
    return page


SCREEN_HEIGHTS_JS = """() => {
  const deck = window.bloomeduDeck, heights = [];
  document.querySelectorAll('.reveal .slides > section').forEach((column, h) => {
    const below = column.querySelectorAll(':scope > section');
    (below.length ? [...below] : [column]).forEach((screen, v) => {
      deck.slide(h, v);
      heights.push([h, v, screen.scrollHeight]);
    });
  });
  return heights;
}"""


def screen_heights(browser, deck: Path, width: int = 1280, height: int = 800,
                  page=None) -> list[tuple[int, int, int]]:
    """(column, row, pixels) of every screen of a deck shown in a ``width`` × ``height`` window:
    each screen's ``scrollHeight``, in the slide's own pixels (reveal.js lays a slide out at 1280×800
    and scales it to the window), so a screen fits when it is at most 800.  ``page``, if given, is
    a :func:`recorded_page` of that size to load the deck into (and leave open), as :func:`measure`
    does for every deck."""
    own = page is None
    page = recorded_page(browser, width, height) if own else page
    try:
        page.goto(deck.resolve().as_uri(), wait_until="load")
        page.wait_for_function("() => document.querySelector('.reveal.ready') && "
                               "document.documentElement.getAttribute('data-mathjax') === 'typeset'",
                               timeout=PRINT_TIMEOUT_MS)
        page.evaluate("() => document.fonts.ready")
        return [tuple(row) for row in page.evaluate(SCREEN_HEIGHTS_JS)]
    finally:
        if own:
            page.context.close()


def print_handout(browser, deck: Path, page=None) -> Path:
    """The deck printed to PDF in reveal.js's print layout; fails if it asked for anything remote.

    ``page``, if given, is a :func:`recorded_page` to print in (left open, its records emptied
    first), as :func:`build` does for every handout."""
    own = page is None
    page = open_deck(browser, deck, "?print-pdf", page=page)
    try:
        page.wait_for_function("() => document.documentElement.hasAttribute('data-pages-numbered')",
                               timeout=PRINT_TIMEOUT_MS)
        page.evaluate("() => document.fonts.ready")
        # reveal.js hides every slide but the current one from assistive technology, even when
        # printing: shown to it, each slide's text and each figure's alt go into the tagged PDF
        page.evaluate("() => document.querySelectorAll('.reveal .slides section').forEach("
                      "s => { s.removeAttribute('aria-hidden'); s.removeAttribute('hidden'); })")
        target = handout_path(deck)
        page.pdf(path=str(target), prefer_css_page_size=True, print_background=True,
                 tagged=True)  # a tagged PDF: a figure keeps its alt for a screen reader
        if page.remote or page.errors:
            raise RuntimeError(f"{deck.name}: remote requests {page.remote}, errors {page.errors}")
        return target
    finally:
        if own:
            page.context.close()


SECTION = re.compile(r"<section\b")
COLUMN = re.compile(r"<section\b[^>]*>\s*<section\b")  # a slide: a column opening on its first screen
FRAGMENT = re.compile(r"""class="[^"]*\bfragment\b""")
NOTES = re.compile(r"<aside\b[^>]*\bclass=\"notes\"")
PDF_PAGE = re.compile(rb"/Type\s*/Page\b(?!s)")


def deck_counts(text: str) -> dict[str, int]:
    """Screens (slides and the subslides below them), fragments and speaker notes of a deck's HTML.

    >>> deck_counts('<section><section>a</section><section><div class="fragment">b</div>'
    ...             '<aside class="notes">c</aside></section></section>')
    {'screens': 2, 'fragments': 1, 'notes': 1}
    """
    return {"screens": len(SECTION.findall(text)) - len(COLUMN.findall(text)),
            "fragments": len(FRAGMENT.findall(text)), "notes": len(NOTES.findall(text))}


def say(text: str) -> None:
    print(text, flush=True)


def build(notebooks: list[Path] | None = None, out: Path = OUT, handouts: bool = True,
          npm_cache: Path = NPM_CACHE, log=say) -> list[Path]:
    """Decks (and handouts) for ``notebooks`` (default: every one) into ``out``; returns the decks.

    ``log`` gets a line as each step starts and one per deck and handout as it is written."""
    notebooks = notebooks or lesson_cells.every_notebook()
    stale = [p.name for p in notebooks if not slide_marks.is_marked(lesson_cells.read(p))]
    if stale:
        print(f"warning: stale slide marks in {', '.join(stale)}: run python -m tools.slide_marks",
              file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    log(f"reveal.js, require.js and MathJax into {out / ASSETS}")
    copy_assets(out, npm_modules(npm_cache))
    slides = exporter()
    log(f"{len(notebooks)} decks into {out}")
    decks = {}
    for number, path in enumerate(notebooks, 1):
        deck = write_deck(path, out, slides)
        decks[deck] = lesson_cells.title(lesson_cells.read(path))
        counts = deck_counts(deck.read_text(encoding="utf-8"))
        log(f"  deck {number}/{len(notebooks)} {deck.relative_to(out)}: {counts['screens']} slides, "
            f"{counts['fragments']} fragments, {counts['notes']} notes")
    if handouts:
        log(f"{len(decks)} handouts, printed by headless Chromium (a few seconds each)")
        with chromium() as browser:
            page = recorded_page(browser)  # one page prints every handout
            try:
                for number, deck in enumerate(decks, 1):
                    handout = print_handout(browser, deck, page)
                    pages = len(PDF_PAGE.findall(handout.read_bytes()))
                    log(f"  handout {number}/{len(decks)} {handout.relative_to(out)}: {pages} pages")
            finally:
                page.context.close()
    write_index(out, decks)
    (out / "decks.json").write_text(json.dumps([d.relative_to(out).as_posix() for d in decks], indent=1))
    return list(decks)


def measure(decks: list[Path], out: Path, log=say) -> list[str]:
    """Every screen of ``decks`` measured at 1280×800 in one Chromium (:func:`screen_heights`); a line
    per deck to ``log``; returns the screens taller than 800 px, named."""
    tall, screens = [], 0
    with chromium() as browser:
        page = recorded_page(browser, 1280, 800)  # one page measures every deck
        try:
            for deck in decks:
                heights = screen_heights(browser, deck, page=page)
                screens += len(heights)
                over = [f"{deck.relative_to(out)} slide {h}/{v}: {px} px" for h, v, px in heights if px > 800]
                tall += over
                log(f"  {deck.relative_to(out)}: {len(heights)} slides, tallest {max(px for *_, px in heights)} px"
                    + (f", {len(over)} taller than 800" if over else ""))
        finally:
            page.context.close()
    log(f"{len(tall)} of {screens} slides taller than 1280×800's 800 px")
    return tall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--no-handouts", action="store_true")
    parser.add_argument("--measure", action="store_true",
                        help="then measure every slide in Chromium at 1280x800; exit 1 if one is taller")
    args = parser.parse_args(argv)
    decks = build([p.resolve() for p in args.notebooks] or None, args.out, not args.no_handouts)
    print(f"{len(decks)} decks in {args.out}" + ("" if args.no_handouts else ", each with its handout")
          + f": open {args.out / 'index.html'}")
    if args.measure:
        tall = measure(decks, args.out)
        for line in tall:
            print(f"too tall: {line}")
        return 1 if tall else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
