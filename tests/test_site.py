"""The course site (``make html``: Sphinx with MyST-NB, the book theme and autodoc, in ``docs/``).

The site is built once per session into a temporary folder (the ``site`` fixture in
``tests/conftest.py``, with the Makefile's flags: warnings are errors), from the committed
notebooks without executing them (nbval and the real-browser test execute every lesson).
These tests read what it wrote: every lesson and solution page with its title and
figures, each figure's alt the sentence its output carries, the sidebar in reading order, the README's table as the front page, an API
entry for every public name, the search index, and not one reference to a script,
style sheet, font or image on the network.  ``tests/test_browser.py`` opens the same
build in Chromium.  The last tests check the site's own helpers (``docs/_ext``) on small
inputs made here: a module added to a package is documented with no edit to the site.
"""

from __future__ import annotations

import doctest
import importlib
import json
import math
import pkgutil
import posixpath
import re
import sys
import zlib
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest

import bloomedu
from tools import lesson_cells

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
SOLUTIONS = sorted((NOTEBOOKS / "solutions").glob("[0-9][0-9]_*.ipynb"))
DEEPER = sorted((NOTEBOOKS / "deeper").glob("[0-9][0-9]_*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

# Names an engineer comes to the API reference for (each as the tail of its full name).
MUST_HAVE = [
    "BloomFilter", "BloomFilter.from_capacity", "BloomFilter.add_many", "BloomFilter.contains_many",
    "BloomFilter.to_bytes", "BloomFilter.from_bytes", "BloomFilter.__contains__",
    "GuavaBloomFilter", "Bip37Filter", "SaltedBloomFilter", "BitVector", "BitArray", "SeenIds",
    "HashedIds", "deduplicate", "murmurhash2", "n_bit_hash_function",
    "theory.exact_false_positive_rate", "theory.false_positive_rate", "theory.num_bits_for",
    "theory.optimal_num_hashes", "click_stream", "urls.malicious_urls", "BlacklistCache",
    "experiments.measure_false_positive_rate", "explorer.explore", "exercises.check", "cli.size_report",
]


class Elements(HTMLParser):
    """Every start tag of a page with its attributes and its ancestors, and the text under each."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
            "track", "wbr"}

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict, tuple]] = []
        self.styles: list[str] = []  # <style> blocks and style="..." attributes
        self._stack: list[tuple[str, dict]] = []
        self._text: dict[int, list[str]] = {}
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = {key: value or "" for key, value in attrs}
        self.tags.append((tag, attrs, tuple(self._stack)))
        if "style" in attrs:
            self.styles.append(attrs["style"])
        if tag not in self.VOID:
            self._stack.append((tag, attrs))
            self._text[id(attrs)] = []

    def handle_endtag(self, tag):
        if any(name == tag for name, _ in self._stack):  # a stray end tag closes nothing
            while self._stack.pop()[0] != tag:
                pass

    def handle_data(self, data):
        for _, attrs in self._stack:
            self._text[id(attrs)].append(data)
        if self._stack and self._stack[-1][0] == "style":
            self.styles.append(data)

    def text(self, attrs: dict) -> str:
        """The text under an element, spaces collapsed, typographic quotes made plain."""
        text = " ".join("".join(self._text.get(id(attrs), [])).split())
        return text.translate(str.maketrans("‘’“”", "''\"\""))

    def find(self, tag: str, inside: str | None = None, **wanted) -> list[dict]:
        """Tags named ``tag`` whose attributes hold ``wanted`` (a class among their classes),
        below an element whose class list holds ``inside``."""
        def has(attrs, key, value):
            return value in attrs.get("class", "").split() if key == "class_" else attrs.get(key) == value
        return [attrs for name, attrs, ancestors in self.tags
                if name == tag and all(has(attrs, k, v) for k, v in wanted.items())
                and (inside is None or any(inside in a.get("class", "").split() for _, a in ancestors))]


def page_of(path: Path) -> str:
    """A notebook's page in the site, relative to its root."""
    return path.relative_to(ROOT).with_suffix(".html").as_posix()


def read(site: Path, page: str) -> Elements:
    assert (site / page).is_file(), f"{page} is missing from the site"
    return Elements((site / page).read_text(encoding="utf-8"))


def resolve(page: str, href: str) -> str:
    """A relative link on ``page``, as a path from the site's root (no fragment)."""
    path = urlsplit(href).path
    return posixpath.normpath(posixpath.join(posixpath.dirname(page), path)) if path else page


def first_heading(path: Path) -> str:
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "markdown" and (m := re.search(r"^#\s+(.+)$", cell.source, re.M)):
            return m.group(1).strip()
    raise AssertionError(f"{path.name} has no heading")


def outputs(path: Path, mime: str) -> int:
    return sum(mime in output.get("data", {})
               for cell in nbformat.read(path, as_version=4).cells for output in cell.get("outputs", []))


def inventory(site: Path) -> dict[str, str]:
    """objects.inv: every documented name and the page#anchor of its entry."""
    raw = (site / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):
        header_end = raw.index(b"\n", header_end) + 1
    entries = {}
    for line in zlib.decompress(raw[header_end:]).decode().splitlines():
        match = re.match(r"(.+?)\s+(\S+):(\S+)\s+(-?\d+)\s+(\S*)\s+(.*)", line)
        if match and match.group(2) == "py":
            name, uri = match.group(1), match.group(5)
            entries[name] = uri[:-1] + name if uri.endswith("$") else uri
    return entries


def public_modules() -> list[str]:
    """Every module and subpackage of bloomedu with no ``_`` part, found on disk."""
    found = ["bloomedu"] + [info.name for info in
                            pkgutil.walk_packages(bloomedu.__path__, "bloomedu.")]
    return sorted(n for n in found if not any(p.startswith("_") for p in n.split(".")))


def test_there_are_lessons_and_solutions_to_build():
    assert LESSONS and SOLUTIONS and DEEPER, f"no lessons, solutions or deeper notebooks in {NOTEBOOKS}"


@pytest.mark.parametrize("notebook", LESSONS + SOLUTIONS + DEEPER, ids=lambda p: p.stem)
def test_every_lesson_and_solution_has_a_page_with_its_title_and_figures(site, notebook):
    page = page_of(notebook)
    tags = read(site, page)
    heading = first_heading(notebook)
    assert tags.text(tags.find("title")[0]).startswith(heading)
    assert [tags.text(h).rstrip("#").strip() for h in tags.find("h1", inside="bd-article")] == [heading]
    images = [img["src"] for img in tags.find("img", inside="cell_output")]
    assert len(images) == outputs(notebook, "image/png"), page
    for src in images:
        assert src.startswith("data:image/") or (
            not urlsplit(src).scheme and (site / resolve(page, src)).is_file()), (page, src)


@pytest.mark.parametrize("notebook", LESSONS + SOLUTIONS + DEEPER, ids=lambda p: p.stem)
def test_every_image_on_a_notebooks_page_says_in_words_what_it_shows(site, notebook):
    """Each <img> has an alt of words, not a file name (Sphinx's default) and not empty: the
    sentence its output's metadata carries (``plots.show``; ``docs/_ext/bloomedu_site.py``)."""
    page = page_of(notebook)
    tags = read(site, page)
    alts = [img.get("alt") for img in tags.find("img")]
    problems = [f"image {i}: {problem}" for i, alt in enumerate(alts) if (problem := lesson_cells.alt_problem(alt))]
    assert problems == [], f"{page}:\n  " + "\n  ".join(problems)
    figures = lesson_cells.figures(lesson_cells.read(notebook))
    assert [img.get("alt") for img in tags.find("img", inside="cell_output")] == \
        [" ".join((lesson_cells.figure_alt(output) or "").split()) or None for _, output in figures], page


def sidebar(tags: Elements, page: str) -> list[str]:
    return [resolve(page, a["href"]) for a in tags.find("a", inside="bd-docs-nav", class_="reference")]


def test_the_sidebar_lists_lessons_in_reading_order_then_solutions_deeper_and_the_api(site):
    lessons, solutions = [page_of(p) for p in LESSONS], [page_of(p) for p in SOLUTIONS]
    deeper = [page_of(p) for p in DEEPER]
    for page in ["index.html", lessons[0], lessons[-1], deeper[0], "api/bloomedu.core.filter.html"]:
        links = sidebar(read(site, page), page)
        assert [link for link in links if link in lessons] == lessons, page
        assert [link for link in links if link in solutions] == solutions, page
        assert [link for link in links if link in deeper] == deeper, page
        assert (links.index(lessons[-1]) < links.index(solutions[0]) < links.index(solutions[-1])
                < links.index(deeper[0]) < links.index("api/bloomedu.html"))


def test_previous_and_next_follow_the_reading_order(site):
    order = ["index.html"] + [page_of(p) for p in LESSONS + SOLUTIONS + DEEPER]
    for before, page, after in zip(order, order[1:], order[2:] + ["api/bloomedu.html"]):
        tags = read(site, page)
        assert [resolve(page, a["href"]) for a in tags.find("a", class_="left-prev")] == [before]
        assert [resolve(page, a["href"]) for a in tags.find("a", class_="right-next")] == [after]


def readme_rows() -> list[list[str]]:
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("| article step | module | lesson | test |"):]
    lines = table[:table.index("\n\n")].splitlines()[2:]
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines]


def test_the_front_page_is_the_readme_table_with_links(site):
    tags = read(site, "index.html")
    rows = [tr for tr in tags.find("tr", inside="bd-article") if tags.text(tr)]
    expected = readme_rows()
    assert len(rows) == len(expected) + 1  # and the header row
    shown = [tags.text(tr) for tr in rows[1:]]
    for row, text in zip(expected, shown):
        cells = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", " ".join(row))  # a link shows its text
        plain = " ".join(re.sub(r"`|\*\*", "", cells).replace("\\|", "|").split())  # code, bold
        assert text == plain
    links = {resolve("index.html", a["href"]) for a in tags.find("a", inside="bd-article")}
    for row in expected:
        for path in re.findall(r"`(bloomedu/[\w/]+\.py)`", row[1]):
            module = path[:-3].replace("/", ".").removesuffix(".__init__")
            assert f"api/{module}.html" in links, path
        for stem in re.findall(r"`(\d\d_\w+)`", row[2]):
            assert f"notebooks/{stem}.html" in links, stem
    assert all((site / link).is_file() for link in links if link.endswith(".html"))


def test_the_front_page_lists_each_lesson_with_its_summary(site):
    tags = read(site, "index.html")
    items = tags.find("li", inside="bloomedu-lessons")
    assert len(items) == len(LESSONS)
    for item, path in zip(items, LESSONS):
        summary = nbformat.read(path, as_version=4).metadata["bloomedu"]["summary"]
        summary = re.sub(r"\$([^$]+)\$", r"\\(\1\\)", summary)  # a formula, as MathJax reads it
        assert tags.text(item).startswith(f"{first_heading(path)}: {summary}")
    hrefs = [resolve("index.html", a["href"]) for a in tags.find("a", inside="bloomedu-lessons")]
    for path in LESSONS:
        assert page_of(path) in hrefs
    for path in SOLUTIONS:
        assert page_of(path) in hrefs


def test_every_public_module_has_an_api_page(site):
    modules = public_modules()
    for part in ("steps", "core", "compat", "services", "workloads", "teaching"):
        assert f"bloomedu.{part}" in modules
    names = inventory(site)
    for module in modules:
        assert names.get(module) == f"api/{module}.html#module-{module}", module
    assert sorted(p.stem for p in (site / "api").glob("*.html")) == modules


@pytest.mark.parametrize("wanted", MUST_HAVE)
def test_the_api_reference_has_the_names_engineers_look_for(site, wanted):
    names = inventory(site)
    found = [name for name in names if name.startswith("bloomedu.") and
             (name == wanted or name.endswith("." + wanted))]
    assert found, f"{wanted} is not in the API reference"
    page, _, anchor = names[found[0]].partition("#")
    assert any(a.get("id") == anchor for _, a, _ in read(site, page).tags), (page, anchor)


def test_every_name_in_every_all_appears_on_its_module_page(site):
    """Documented there (its own entry), or, when it is defined elsewhere and re-exported,
    named there by a link to its entry.  Private modules (a ``_`` part, such as
    ``exercises._feedback``) have no page: their names appear where a public module exports them."""
    names = inventory(site)
    checked = 0
    for module in public_modules():
        exported = getattr(importlib.import_module(module), "__all__", [])
        page = f"api/{module}.html"
        tags = read(site, page)
        targets = {urlsplit(a["href"]).fragment: tags.text(a) for a in tags.find("a", inside="bd-article")
                   if "href" in a}
        for name in exported:
            checked += 1
            if f"{module}.{name}" in names:
                continue
            linked = [t for t, text in targets.items()
                      if t.endswith("." + name) and t in names and text.endswith(name)]
            assert linked, f"{module}.{name} is neither documented nor linked on {page}"
    assert checked > 60


def test_api_pages_link_the_lessons_their_docstrings_name(site):
    pairs = 0
    for module in public_modules():
        doc = importlib.import_module(module).__doc__ or ""
        page = f"api/{module}.html"
        hrefs = {resolve(page, a["href"]) for a in read(site, page).find("a") if "href" in a}
        for stem in re.findall(r"``notebooks/(\d\d_\w+)\.ipynb``", doc):
            pairs += 1
            assert f"notebooks/{stem}.html" in hrefs, (module, stem)
    assert pairs >= 10


def test_lesson_pages_link_the_api_pages_of_the_modules_they_name(site):
    for path in LESSONS:
        closing = [c.source for c in nbformat.read(path, as_version=4).cells
                   if c.cell_type == "markdown" and "Where this lesson's code lives" in c.source]
        assert closing, f"{path.name} has no closing 'where this lesson's code lives' paragraph"
        named = re.findall(r"`(bloomedu/[\w/]+\.py)`", closing[-1])
        assert named, path.name
        page = page_of(path)
        hrefs = {resolve(page, a["href"]) for a in read(site, page).find("a", inside="bd-article")}
        for file in named:
            target = f"api/{file[:-3].replace('/', '.').removesuffix('.__init__')}.html"
            assert target in hrefs and (site / target).is_file(), (path.name, file)


def test_every_deeper_notebook_is_linked_from_the_lessons_that_name_it(site):
    for deeper in DEEPER:
        name, target = re.compile(rf"`deeper/{deeper.stem}(\.ipynb)?`"), page_of(deeper)
        naming = [path for path in LESSONS if any(
            c.cell_type == "markdown" and name.search(c.source) for c in nbformat.read(path, as_version=4).cells)]
        assert naming, f"no lesson names deeper/{deeper.stem}: a deeper notebook is linked from the place it deepens"
        for path in naming:
            page = page_of(path)
            hrefs = {resolve(page, a["href"]) for a in read(site, page).find("a", inside="bd-article")}
            assert target in hrefs, (path.name, deeper.stem)


def test_api_pages_link_the_lessons_whose_code_lives_there(site):
    """The reverse of the closing paragraphs: every module a lesson names links that lesson."""
    pairs = 0
    for path in LESSONS:
        closing = [c.source for c in nbformat.read(path, as_version=4).cells
                   if c.cell_type == "markdown" and "Where this lesson's code lives" in c.source][-1]
        for file in re.findall(r"`(bloomedu/[\w/]+\.py)`", closing):
            page = f"api/{file[:-3].replace('/', '.').removesuffix('.__init__')}.html"
            hrefs = {resolve(page, a["href"]) for a in read(site, page).find("a", inside="bloomedu-lessons-here")}
            assert page_of(path) in hrefs, (page, path.name)
            pairs += 1
    assert pairs >= len(LESSONS)


def test_the_search_index_finds_from_capacity(site):
    text = (site / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1:text.rindex(")")])
    assert "from_capacity" in json.dumps(index["objects"])
    assert any(term.startswith("from_capac") for term in index["terms"])


URL_IN_CSS = re.compile(r"""url\(\s*['"]?([^'")]+)['"]?\s*\)|@import\s+['"]([^'"]+)['"]""")


def remote(url: str) -> bool:
    """True for a URL that names another machine (a scheme other than data: or file:, or //host)."""
    url = url.strip()
    return url.startswith("//") or urlsplit(url).scheme not in ("", "data", "file", "about", "blob")


def test_no_page_or_style_sheet_loads_anything_from_the_network(site):
    """Every HTML and CSS file of the build: only relative or file-local URLs, except plain
    ``<a href>`` links to outside references, which a reader follows on purpose."""
    html_files, css_files = sorted(site.rglob("*.html")), sorted(site.rglob("*.css"))
    assert len(html_files) > len(LESSONS) + len(SOLUTIONS) and css_files
    bad = []
    for path in html_files:
        tags = Elements(path.read_text(encoding="utf-8"))
        for tag, attrs, _ in tags.tags:
            for key in ("src", "href", "data", "poster", "srcset", "action", "formaction"):
                if key not in attrs or (tag == "a" and key == "href"):
                    continue
                urls = [part.split()[0] for part in attrs[key].split(",") if part.strip()] \
                    if key == "srcset" else [attrs[key]]
                bad += [(path.name, tag, key, url) for url in urls if remote(url)]
        for style in tags.styles:
            bad += [(path.name, "style", url) for m in URL_IN_CSS.finditer(style)
                    for url in m.groups() if url and remote(url)]
    for path in css_files:
        text = path.read_text(encoding="utf-8", errors="replace")
        bad += [(str(path.relative_to(site)), url) for m in URL_IN_CSS.finditer(text)
                for url in m.groups() if url and remote(url)]
    assert bad == []


def test_math_is_typeset_by_the_mathjax_copy_in_the_site(site):
    """MathJax comes from the site's own _static/ (the sphinx-mathjax-offline package), never a CDN."""
    with_math = 0
    for path in sorted(site.rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        page = path.relative_to(site).as_posix()
        scripts = [a["src"] for a in Elements(text).find("script") if "src" in a]
        mathjax = [src for src in scripts if "mathjax" in src.lower()]
        if 'class="math' in text:
            with_math += 1
            assert [resolve(page, src) for src in mathjax] == ["_static/mathjax/tex-chtml.js"], page
        assert all(not remote(src) for src in mathjax)
    assert with_math >= 1  # the front page's formula at least
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert list((site / "_static" / "mathjax" / "output" / "chtml" / "fonts").rglob("*.woff"))


def test_widget_outputs_become_a_note_and_load_no_widget_scripts(site):
    with_widgets = [path for path in LESSONS + SOLUTIONS if outputs(path, WIDGET_VIEW)]
    assert with_widgets, "lesson 14's explorer is a widget"
    for path in with_widgets:
        text = (site / page_of(path)).read_text(encoding="utf-8")
        assert text.count('class="bloomedu-widget-note"') == outputs(path, WIDGET_VIEW)
        assert "make lab" in text
        assert "widget-state" not in text and WIDGET_VIEW not in text and "require.js" not in text


def test_every_lesson_carries_its_index_summary():
    # Lessons open with what they build on; the index line is the summary in the metadata.
    for path in LESSONS:
        summary = nbformat.read(path, as_version=4).metadata.get("bloomedu", {}).get("summary", "")
        assert 40 <= len(summary) <= 160 and summary.endswith("."), (path.name, summary)
        assert "`" not in summary, (path.name, "the index shows it as plain text, without code marks", summary)


# --- the site's helpers (docs/_ext), on small inputs ------------------------------------------

def test_a_module_added_to_a_package_gets_a_page_and_each_name_is_documented_once(tmp_path,
                                                                                 monkeypatch):
    """autosummary writes a page per public module; the plan says what each page documents."""
    import bloomedu_api

    package = tmp_path / "toypkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text(
        '"""Toy."""\nfrom .sub.thing import Thing, make\nfrom ._hidden import Helper\n'
        '__all__ = ["Thing", "make", "Helper", "LIMIT"]\nLIMIT = 3\n')
    (package / "sub" / "__init__.py").write_text('"""Sub."""\n')
    (package / "sub" / "thing.py").write_text(
        '"""Thing."""\n__all__ = ["Thing", "make"]\nclass Thing:\n    """A thing."""\n'
        'def make():\n    """Make one."""\n')
    (package / "_hidden.py").write_text('"""Private."""\nclass Helper:\n    """Helps."""\n')
    (package / "sub" / "new.py").write_text('"""Added later."""\ndef fresh():\n    """New."""\n'
                                            'def _private():\n    pass\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    pages = bloomedu_api.plan("toypkg")
    assert sorted(pages) == ["toypkg", "toypkg.sub", "toypkg.sub.new", "toypkg.sub.thing"]
    assert pages["toypkg"]["reexports"] == ["toypkg.sub.thing.Thing", "toypkg.sub.thing.make"]
    assert pages["toypkg"]["classes"] == [("Helper", False)]  # its definition is private: documented here
    assert pages["toypkg"]["data"] == [("LIMIT", True)]
    assert pages["toypkg.sub.thing"]["classes"] == [("Thing", False)]
    assert pages["toypkg.sub.thing"]["functions"] == ["make"]
    assert pages["toypkg.sub.new"]["functions"] == ["fresh"]


def test_a_reference_resolves_as_python_resolves_the_name_where_it_is_written():
    from bloomedu_api import resolve

    method = "bloomedu.core.filter.BloomFilter.from_capacity"
    documented = {method, "bloomedu.core.filter.BloomFilter", "bloomedu.teaching.exercises.Exercise"}
    assert resolve("bloomedu.BloomFilter.from_capacity", documented) == (method, True)  # re-exported
    assert resolve("BloomFilter.from_capacity", documented, "bloomedu.core.hashing") == (None, False)
    assert resolve("BloomFilter.from_capacity", documented, "bloomedu.teaching.explorer") == (method, True)
    assert resolve("from_capacity", documented, "bloomedu.core.filter", "BloomFilter") == (method, True)
    assert resolve("from_capacity", documented, "bloomedu.core.filter") == (method, True)  # its one class
    assert resolve("bloomedu.teaching.exercises.Exercise", documented) == \
        ("bloomedu.teaching.exercises.Exercise", True)  # defined in a private module
    assert resolve("_READ_HASHING", documented, "bloomedu.core.filter") == (None, True)  # private
    assert resolve("numpy.ndarray", documented) == (None, True)  # another package's
    assert resolve("BloomFilter.from_capacty", documented, "bloomedu.core.filter") == (None, False)


def test_a_class_shows_its_constructors_parameters_with_or_without_a_pass_through_new():
    """autodoc reads a class's signature from ``__new__`` first: a ``__new__(cls, *args, **kwargs)``
    that only passes them on is replaced by the ``__init__``'s; autodoc's own reading of an
    ``__init__`` is kept."""
    from types import SimpleNamespace

    from bloomedu_api import constructor_signature

    class Passing:
        def __new__(cls, *args, **kwargs):
            return super().__new__(cls)

        def __init__(self, num_bits: int, num_hashes: int = 3):
            pass

    app = SimpleNamespace(config=SimpleNamespace(autodoc_preserve_defaults=True))
    shown = constructor_signature(app, "class", "Passing", Passing, {}, "(*args, **kwargs)", "")
    assert shown == ("(num_bits: int, num_hashes: int = 3)", "")
    assert constructor_signature(app, "class", "Passing", Passing, {}, "(num_bits: int)", "") is None
    Passing.__init__ = object.__init__
    assert constructor_signature(app, "class", "Passing", Passing, {}, "(*args, **kwargs)", "")[0] == "()"


def test_sync_folder_rewrites_only_what_changed_and_deletes_what_is_gone(tmp_path):
    from bloomedu_site import sync_folder

    assert sync_folder(tmp_path, {"a.txt": b"1", "sub/b.txt": b"2"}, "**/*.txt") == ["a.txt", "sub/b.txt"]
    assert sync_folder(tmp_path, {"a.txt": b"1", "sub/b.txt": b"3"}, "**/*.txt") == ["sub/b.txt"]
    assert sync_folder(tmp_path, {"sub/b.txt": b"3"}, "**/*.txt") == []
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.txt")) == ["sub/b.txt"]


def test_a_widget_output_is_read_as_a_note_and_its_state_dropped():
    from bloomedu_site import read_notebook

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("panel")])
    nb.cells[0].outputs = [nbformat.v4.new_output("display_data", data={
        "text/plain": "VBox()", WIDGET_VIEW: {"model_id": "abc", "version_major": 2, "version_minor": 0}})]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    read = read_notebook(nbformat.writes(nb))
    assert "widgets" not in read.metadata
    assert list(read.cells[0].outputs[0].data) == ["text/html"]
    assert "make lab" in read.cells[0].outputs[0].data["text/html"]


def test_an_image_takes_the_alt_of_its_outputs_metadata_and_only_that():
    from types import SimpleNamespace as MimeData

    from bloomedu_site import alt_from_output
    from docutils import nodes

    render = alt_from_output(lambda self, data: [nodes.image(uri="../_images/5ff1.png")])
    alt = "Measured rates  fall on the classic curve as k grows."
    [image] = render(None, MimeData(mime_type="image/png", output_metadata={"image/png": {"alt": alt}}))
    assert image["alt"] == " ".join(alt.split())
    for metadata in ({}, {"image/png": {"width": 300}}, {"image/png": {"alt": " "}}):
        [image] = render(None, MimeData(mime_type="image/png", output_metadata=metadata))
        assert "alt" not in image.attributes


def test_the_front_page_includes_readme_sections_that_exist():
    """index.md includes two of the README's sections (MyST's include, from one heading to the next)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    starts = re.findall(r':start-after: "(## [^"]+)\\n"', (DOCS / "index.md").read_text(encoding="utf-8"))
    assert len(starts) == 2 and all(f"\n{start}\n" in readme for start in starts), starts


def test_a_constant_does_not_borrow_its_types_docstring():
    import numpy as np
    from bloomedu_api import no_borrowed_docstring as _no_borrowed_docstring
    from sphinx.util.docstrings import prepare_docstring

    for value in (np.array([1, 2]), {"a": 1}, (1, 2)):
        lines = prepare_docstring(value.__doc__)
        _no_borrowed_docstring(None, "data", "X", value, {}, lines)
        assert lines == []
        lines = ["Parquet's eight salts."]  # a #: comment of its own stays
        _no_borrowed_docstring(None, "data", "X", value, {}, lines)
        assert lines == ["Parquet's eight salts."]


# --- the site as a reader sees it: front page, signatures, the pages beside the lessons ---------

DOCS = ROOT / "docs"
ISSUE_TERMS = ["fill", "false positive", "double hashing", "generation", "slice", "cache line",
               "consumer group", "shard", "outpoint", "SPV"]
SYSTEMS = ["npmjs.com/package/murmurhash", "github.com/google/guava", "bip-0037",
           "github.com/RedisBloom/RedisBloom", "parquet-format"]


def markdown_of(stem_page: str) -> str:
    """The prose of the lesson behind a page such as ``notebooks/09_one_million_urls.html``."""
    path = ROOT / stem_page.replace(".html", ".ipynb")
    return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")


def topics() -> dict:
    return {k: v for k, v in json.loads((DOCS / "lesson_topics.json").read_text()).items()
            if not k.startswith("_")}


def test_the_front_page_opens_with_the_path_through_the_lessons_then_the_table(site):
    text = (site / "index.html").read_text(encoding="utf-8")
    tags = read(site, "index.html")
    headings = [tags.text(h).rstrip("#").strip() for h in tags.find("h2", inside="bd-article")]
    assert headings[0] == "The path through the lessons"
    assert headings.index("The path through the lessons") < headings.index("Article step → module → lesson → test")
    assert text.index('bloomedu-lessons') < text.index("<table")
    assert tags.find("ol", class_="bloomedu-lessons")  # numbered: a reading order


def test_the_front_page_names_both_articles_and_links_the_systems_the_lessons_match(site):
    tags = read(site, "index.html")
    article = " ".join(tags.text(p) for p in tags.find("p", inside="bd-article") + tags.find("li", inside="bd-article"))
    for title in ("Filtro di Bloom: un elemento appartiene all'insieme?",
                  "Bloom Filter: come memorizzare 1 Milione di stringhe in meno di 2MB?"):
        assert title in article
    hrefs = [a["href"] for a in tags.find("a", inside="bd-article") if "href" in a]
    for system in SYSTEMS:
        assert any(system in href for href in hrefs), system
    items = [li for li in tags.find("li", inside="bd-article")
             if any(s in tags.text(li) for s in ("Guava", "BIP37", "RedisBloom", "Parquet"))]
    assert len(items) >= 4
    for page in ("toy.html", "cheatsheet.html", "glossary.html", "faq.html", "instructors.html"):
        assert page in {resolve("index.html", h) for h in hrefs}, page
    assert "Where the articles are wrong or loose" in " ".join(tags.text(h) for h in tags.find("h2"))


def signature_of(tags: Elements, anchor: str) -> str:
    found = [attrs for name, attrs, _ in tags.tags if name == "dt" and attrs.get("id") == anchor]
    assert found, anchor
    return tags.text(found[0])


def test_classes_show_the_signatures_their_constructors_declare(site):
    """No class shows ``(*args, **kwargs)`` (autodoc read the lock's ``__new__``): each shows the
    parameters of its ``__init__``."""
    import inspect

    names = inventory(site)
    checked = 0
    for name, uri in names.items():
        module_name, _, attr = name.rpartition(".")
        if not module_name.startswith("bloomedu"):
            continue
        try:
            cls = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError):
            continue
        if not inspect.isclass(cls) or not uri.startswith("api/"):
            continue
        page, _, anchor = uri.partition("#")
        shown = signature_of(read(site, page), anchor)
        assert "*args, **kwargs" not in shown, (name, shown)
        init = getattr(cls, "__init__")
        if inspect.isfunction(init) and not getattr(cls, "_is_protocol", False):  # a Protocol has no constructor
            for parameter in list(inspect.signature(init).parameters)[1:]:
                assert parameter in shown, (name, parameter, shown)
            checked += 1
    assert checked >= 15
    assert "num_bits" in signature_of(read(site, "api/bloomedu.core.filter.html"), "bloomedu.core.filter.BloomFilter")


def test_every_page_loads_the_sites_styles_and_script_from_its_own_folder(site):
    for path in [site / "index.html", site / "toy.html", site / page_of(LESSONS[-1])]:
        page = path.relative_to(site).as_posix()
        tags = Elements(path.read_text(encoding="utf-8"))
        sheets = [resolve(page, a["href"]).split("?")[0] for a in tags.find("link") if "href" in a]
        scripts = [resolve(page, a["src"]).split("?")[0] for a in tags.find("script") if "src" in a]
        assert "_static/bloomedu.css" in sheets and "_static/bloomedu-site.js" in scripts, page
    css = (site / "_static" / "bloomedu.css").read_text()
    assert "overflow-x: auto" in css and "overflow-wrap: anywhere" in css


def test_the_toy_page_runs_its_own_script_and_links_the_lesson(site):
    tags = read(site, "toy.html")
    assert tags.find("div", class_="bloomedu-toy-page")
    scripts = [a["src"] for a in tags.find("script") if "src" in a]
    assert "_static/bloomedu-toy.js" in scripts and (site / "_static" / "bloomedu-toy.js").is_file()
    hrefs = {resolve("toy.html", a["href"]) for a in tags.find("a", inside="bd-article") if "href" in a}
    assert f"notebooks/{topics()['toy']}.html" in hrefs
    for role in ("key", "m", "k", "add", "probe", "grid", "verdict"):
        assert any(a.get("data-toy") == role for _, a, _ in tags.tags), role


def test_the_widget_note_on_a_lesson_page_links_the_toy(site):
    with_widgets = [path for path in LESSONS if outputs(path, WIDGET_VIEW)]
    for path in with_widgets:
        page = page_of(path)
        notes = [a for a in read(site, page).find("a", inside="bloomedu-widget-note")]
        assert notes and all(resolve(page, a["href"]) == "toy.html" for a in notes), page


def test_the_glossary_has_the_courses_terms_each_linked_to_the_lesson_that_introduces_it(site):
    tags = read(site, "glossary.html")
    terms = [(a["id"], tags.text(a)) for a in tags.find("dt") if a.get("id", "").startswith("term-")]
    assert len(terms) >= 15
    names = [text.rstrip("¶#").strip() for _, text in terms]
    lowered = [n.lower() for n in names]
    for wanted in ISSUE_TERMS:
        assert wanted.lower() in lowered, wanted
    text = (site / "glossary.html").read_text(encoding="utf-8")
    definitions = re.findall(r'<dt id="term-[^"]*">(.*?)</dt>\s*<dd>(.*?)</dd>', text, re.S)
    assert len(definitions) == len(terms)
    for term_html, body in definitions:
        term = re.sub(r"<[^>]+>", "", term_html).rstrip("¶#").strip()
        lessons = [resolve("glossary.html", h) for h in re.findall(r'href="(notebooks/[^"#]+)"', body)]
        assert lessons, term
        assert (site / lessons[-1]).is_file()
        assert term.lower() in markdown_of(lessons[-1]).lower(), (term, lessons[-1])


def test_the_lesson_topics_name_existing_lessons_and_cover_every_link_the_pages_make():
    mapping = topics()
    for topic, stem in mapping.items():
        assert re.fullmatch(r"[a-z0-9-]+", topic), topic
        assert (NOTEBOOKS / f"{stem}.ipynb").exists() or (NOTEBOOKS / "deeper" / f"{stem}.ipynb").exists(), stem
    used = set()
    for page in DOCS.glob("*.md"):
        for role in re.findall(r"\{lesson\}`([^`]+)`", page.read_text(encoding="utf-8")):
            used.add(re.fullmatch(r"(?s)(?:.*?<)?([\w-]+)>?", role).group(1))
    assert used and used <= set(mapping), used - set(mapping)


def test_a_topic_naming_a_missing_lesson_stops_the_build(tmp_path):
    from bloomedu_pages import load_topics

    (tmp_path / "docs").mkdir()
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "01_a.ipynb").write_text("{}")
    (tmp_path / "docs" / "lesson_topics.json").write_text('{"a": "01_a", "b": "02_gone"}')
    with pytest.raises(ValueError, match="b: 02_gone"):
        load_topics(tmp_path / "docs")
    (tmp_path / "docs" / "lesson_topics.json").write_text('{"_comment": "x", "a": "01_a"}')
    assert load_topics(tmp_path / "docs") == {"a": "notebooks/01_a"}


def test_the_cheat_sheet_has_the_four_formulas_and_a_sizing_table_computed_by_the_library(site):
    from bloomedu import BloomFilter

    text = (site / "cheatsheet.html").read_text(encoding="utf-8")
    tags = Elements(text)
    assert text.count('class="math notranslate nohighlight"') >= 4  # the four display formulas
    for wanted in ("The rate", "The best k", "m from n and p", "Bits per key against the lower bound"):
        assert wanted in tags.text(tags.find("article")[0])
    rows = [[tags.text(td) for td in cells] for cells in _table_rows(tags, "bloomedu-sizing")]
    header, floor, body = rows[0], rows[1], rows[2:]
    ps = [float(p) for p in header[1:]]
    for p, cell in zip(ps, floor[1:]):
        assert cell == f"{-math.log2(p) / math.log(2):.2f} ({-math.log2(p):.2f})"
    assert len(body) >= 5 and len(ps) >= 4
    for row in body:
        n = int(row[0].replace(",", ""))
        for p, cell in zip(ps, row[1:]):
            m = math.ceil(-n * math.log(p) / math.log(2) ** 2)
            k = max(1, round(m / n * math.log(2)))
            if n <= 100_000:  # the library itself, where a filter is small enough to make
                f = BloomFilter.from_capacity(n, p)
                assert (f.num_bits, f.num_hashes, f.nbytes) == (m, k, 8 * -(-m // 64))
            assert cell.endswith(f"k = {k}"), (n, p, cell)
            value, unit = re.fullmatch(r"([\d.]+) (B|KiB|MiB|GiB), k = \d+", cell).groups()
            scale = {"B": 1, "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30}[unit]
            nbytes = 8 * -(-m // 64)
            assert abs(float(value) * scale - nbytes) <= 0.005 * nbytes, (n, p, cell)  # 3 digits
            assert 1 <= nbytes / scale < 1024 or unit == "B", (n, p, cell)  # the unit that fits


def _table_rows(tags: Elements, table_class: str) -> list[list[dict]]:
    tables = [attrs for attrs in tags.find("table") if table_class in attrs.get("class", "").split()]
    assert tables, table_class
    rows, current = [], None
    for name, attrs, ancestors in tags.tags:
        if not any(a is tables[0] for _, a in ancestors):
            continue
        if name == "tr":
            current = []
            rows.append(current)
        elif name in ("td", "th") and current is not None:
            current.append(attrs)
    return rows


def test_the_faq_answers_what_instructors_are_asked(site):
    tags = read(site, "faq.html")
    questions = " | ".join(tags.text(h) for h in tags.find("h2", inside="bd-article"))
    for wanted in ("ln", "cryptographic hash", "store the hashes", "never changes", "deleted"):
        assert wanted in questions, wanted
    hrefs = {resolve("faq.html", a["href"]) for a in tags.find("a", inside="bd-article") if "href" in a}
    assert sum(h.startswith("notebooks/") for h in hrefs) >= 4


def test_the_guide_has_a_page_per_lesson_read_from_the_lesson(site):
    sys.path.insert(0, str(ROOT))
    from tools import lesson_cells

    overview = read(site, "instructors.html")
    listed = {resolve("instructors.html", a["href"]) for a in overview.find("a", inside="bd-article") if "href" in a}
    for path in LESSONS:
        page = f"instructors/{path.stem}.html"
        assert page in listed, page
        tags = read(site, page)
        text = tags.text(tags.find("article")[0])
        nb = nbformat.read(path, as_version=4)
        for exercise in lesson_cells.exercises(nb):
            assert f"check.{exercise.checker}" in text, (page, exercise.checker)
        varying = sum(lesson_cells.machine_dependent(c) for c in nb.cells)
        section = text.split("Cells whose output depends on the machine", 1)[1].split("The slowest cells", 1)[0]
        assert section.count("cell ") == varying, page
        hrefs = {resolve(page, a["href"]) for a in tags.find("a", inside="bd-article") if "href" in a}
        assert page_of(path) in hrefs
        asked = text.split("Predictions to ask", 1)[1].split("Exercises", 1)[0]
        predictions = sum(lesson_cells.is_prediction(c) for c in nb.cells)
        items = [li for li in tags.find("li", inside="bd-article") if tags.text(li) and tags.text(li) in asked]
        assert len(items) == predictions, (page, predictions)
        parts = [h for h in tags.find("tr", inside="bd-article")]
        assert len(parts) >= 3  # the header, a part, the whole lesson


def test_every_hand_written_guide_note_belongs_to_a_lesson():
    notes = DOCS / "guide_notes"
    stems = {p.stem for p in LESSONS} | {p.stem for p in (NOTEBOOKS / "deeper").glob("[0-9][0-9]_*.ipynb")}
    orphans = [p.name for p in notes.glob("*.md") if p.stem not in stems] if notes.is_dir() else []
    assert orphans == []


def test_the_site_helpers_examples_run():
    sys.path.insert(0, str(ROOT))
    import bloomedu_pages
    from tools import guide

    for module in (guide, bloomedu_pages):
        assert doctest.testmod(module).failed == 0, module.__name__


def test_the_sites_own_extensions_stay_small():
    """Stock autodoc, autosummary and MyST do the rest; docs/_ext holds only what they cannot
    (among it a figure's alt, which MyST-NB does not take from the output's metadata), and the
    Italian edition's build (bloomedu_editions.py)."""
    lines = sum(len(path.read_text(encoding="utf-8").splitlines()) for path in (DOCS / "_ext").glob("*.py"))
    assert lines <= 680, lines


def test_sessions_group_consecutive_lessons_within_ninety_minutes():
    sys.path.insert(0, str(ROOT))
    from tools.guide import sessions

    assert sessions([("a", 90), ("b", 30), ("c", 30), ("d", 31), ("e", 120)]) == [["a"], ["b", "c"], ["d"], ["e"]]
    assert sessions([]) == []


# --- what a student meets first: one title, typed formulas, headings that break between words --

def test_the_front_page_is_named_once(site):
    """The front page's heading was the site's title, so the tab read "X — X" and the sidebar
    showed the same line twice, one above the other."""
    tags = read(site, "index.html")
    [title] = [tags.text(t) for t in tags.find("title")]
    names = [part.strip() for part in title.split("—")]
    assert len(names) == len(set(names)), title
    [heading] = [tags.text(h).rstrip("#").strip() for h in tags.find("h1", inside="bd-article")]
    logo = [tags.text(p) for p in tags.find("p", class_="logo__title")]
    assert logo and heading not in logo, (heading, logo)


def prose_of(page_html: str) -> str:
    """The article's text outside math, code and scripts, as a reader sees it."""
    from html import unescape

    article = page_html[page_html.index('<article class="bd-article"'):page_html.index("</article>")]
    for element in ("script", "style", "pre", "code"):
        article = re.sub(rf"<{element}\b.*?</{element}>", " ", article, flags=re.S)
    article = re.sub(r'<(span|div) class="math\b[^"]*">.*?</\1>', " ", article, flags=re.S)
    return unescape(re.sub(r"<[^>]+>", " ", article))


UNTYPED = re.compile(r"\^|\\[A-Za-z]+|\$|_\{")  # TeX a reader should never see


def test_every_formula_on_the_front_page_is_typeset(site):
    text = (site / "index.html").read_text(encoding="utf-8")
    assert 'class="math' in text
    prose = " ".join(prose_of(text).split())
    assert [prose[max(0, m.start() - 60):m.end() + 20] for m in UNTYPED.finditer(prose)] == []


def test_prose_of_leaves_out_math_and_code():
    page = ('<article class="bd-article"><p>rate <span class="math notranslate">\\(x^2\\)</span>, '
            '<code class="literal">a^b</code> and 1/m)^n</p></article>')
    assert UNTYPED.findall(prose_of(page)) == ["^"]


def test_a_module_pages_heading_may_break_only_at_its_dots_and_underscores(site):
    text = (site / "api" / "bloomedu.compat.redisbloom_cuckoo_subfilter.html").read_text(encoding="utf-8")
    assert "<h1>bloomedu<wbr>.compat<wbr>.redisbloom_<wbr>cuckoo_<wbr>subfilter<a" in text
    css = (site / "_static" / "bloomedu.css").read_text(encoding="utf-8")
    narrow = re.search(r"@media \(max-width: (\d+)px\) \{\s*\.bd-article h1 \{\s*font-size: ([\d.]+)rem", css)
    assert narrow and int(narrow[1]) >= 420 and float(narrow[2]) <= 2, "smaller headings on a phone"
    headings = re.search(r"\.bd-article h1,\s*\.bd-article h2,\s*\.bd-article h3 \{([^}]*)\}", css)
    assert headings and "anywhere" not in headings[1]


# That no heading breaks inside a word at 420 px is measured in Chromium, on the same visits that
# look for text past the column: tests/test_browser_instructor.py (the sweep fixture).
