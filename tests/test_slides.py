"""Slides and handouts from the lessons, offline (``make slides``: ``tools/slide_marks.py``, ``tools/slides.py``).

Cheap checks run everywhere: every lesson, solution and deeper notebook carries exactly the
slide marks ``python -m tools.slide_marks`` would give it (so a lesson edited, split or
renumbered without re-marking fails here, naming the command), the rules on small notebooks
made here, and the npm packages pinned by a lock.  The ``slides`` tier builds every deck and
handout into a temporary folder and reads them: each deck has one ``<section>`` per slide mark,
its notes and fragments, and loads nothing from another machine (scripts, style sheets, fonts,
images, every ``url()`` in its CSS); every screen of every deck, measured in Chromium at 1280×800,
is at most 800 px tall; each handout is a PDF of exactly one page per slide and per slide's notes
whose links are the deck's own; the index names each deck by its lesson's title, and the build
says what it does, deck by deck.  ``tests/test_browser_instructor.py`` steps through a deck in
Chromium and checks the handout's page numbers.
"""

from __future__ import annotations

import doctest
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin

import nbformat
import pytest

from tools import lesson_cells, slide_marks, slides

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = lesson_cells.every_notebook()
md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
URL_IN_CSS = re.compile(r"""url\(\s*['"]?([^'")]+)['"]?\s*\)|@import\s+['"]([^'"]+)['"]""")


def test_there_are_notebooks_to_mark():
    assert lesson_cells.notebooks("lessons") and lesson_cells.notebooks("solutions")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT / "notebooks").as_posix())
def test_every_notebook_carries_the_slide_marks_its_structure_gives(notebook):
    nb = lesson_cells.read(notebook)
    assert slide_marks.current_types(nb) == slide_marks.slide_types(nb), \
        f"stale slide marks in {notebook.name}: run .venv/bin/python -m tools.slide_marks"
    assert slide_marks.filters_marks_out(nb.metadata["jupytext"]["cell_metadata_filter"])
    twin = notebook.with_suffix(".py")
    assert "slideshow" not in twin.read_text(encoding="utf-8").split("# ---", 2)[-1]  # cells unmarked


def test_every_deck_opens_on_a_slide_and_every_lesson_has_several():
    for path in lesson_cells.notebooks("lessons"):
        types = slide_marks.slide_types(lesson_cells.read(path))
        assert types[0] == "slide" and types.count("slide") >= 2, path.name


def test_the_rules_on_a_small_lesson():
    nb = nbformat.v4.new_notebook(cells=[
        md("Some words before any heading."),                      # 0: a deck opens on a slide
        md("## Part one\n\nIntro."),                                # 1: heading, slide
        md("### A detail"),                                         # 2: deeper heading, subslide
        md("**Predict:** how many bits will be set?"),              # 3: prediction, fragment
        code("bits = 12\nprint(bits)"),                             # 4: its answer: a new screen
        md("**Check your prediction:** twelve."),                   # 5: fragment
        md(" ".join(["word"] * (slide_marks.NOTES_WORDS + 1))),     # 6: long prose, notes
        code("plot()", outputs=[nbformat.v4.new_output(
            "display_data", data={"image/png": "iVBOR", "text/plain": "<Figure>"})]),  # 7: figure
        md("**01.1 (compute).** What is k?"),                       # 8: exercise question
        code("answer = None  # replace None with your answer\ncheck.optimal_k(answer, num_bits=8, n=1)"),
        code('guess = predict("How many?", None)'),                 # 10: a committed prediction
        code("measured = 3"),                                       # 11: new screen
        code("guess.reveal(measured)"),                             # 12: fragment
        code("x = 1"),                                              # 13
    ])
    assert slide_marks.slide_types(nb) == ["slide", "slide", "subslide", "fragment", "subslide",
                                           "fragment", "notes", "subslide", "subslide", "-",
                                           "fragment", "subslide", "fragment", "-"]


def test_a_long_run_of_cells_is_cut_into_screens_that_fit():
    cells = [md("## A long section")] + [md("word " * 110) for _ in range(10)] + [code("x = 1")]
    nb = nbformat.v4.new_notebook(cells=cells)
    types = slide_marks.slide_types(nb)
    assert types[0] == "slide" and types.count("subslide") >= 2
    screens, height = [], 0.0
    for cell, kind in zip(nb.cells, types):
        if kind in ("slide", "subslide"):
            screens.append(height)
            height = 0.0
        height += slide_marks.estimated_height(cell)
    assert max(screens + [height]) <= slide_marks.BUDGET
    # with room for all of them, nothing is cut
    assert slide_marks.fit_to_screens(nb, ["slide"] + ["-"] * 11, budget=10_000) == ["slide"] + ["-"] * 11


def test_a_cell_taller_than_a_screen_is_split_for_the_deck_and_keeps_everything():
    long_code = "\n".join(f"value_{i} = {i}" for i in range(50))
    table = nbformat.v4.new_output("stream", name="stdout", text="".join(f"row {i}\n" for i in range(30)))
    tall = code(long_code, outputs=[table, figure(ALT)], execution_count=4,
                metadata={"slideshow": {"slide_type": "-"}})
    tall["id"] = "tall"
    prose = md("\n\n".join(["word " * 120] * 6), metadata={"slideshow": {"slide_type": "-"}})
    notes = md("word " * 2000, metadata={"slideshow": {"slide_type": "notes"}})
    nb = nbformat.v4.new_notebook(cells=[md("# T", metadata={"slideshow": {"slide_type": "slide"}}),
                                         tall, prose, notes])
    deck = slide_marks.split_tall_cells(nb)
    assert all(slide_marks.estimated_height(c) <= slide_marks.BUDGET for c in deck.cells[:-1])
    pieces = [c for c in deck.cells if c.cell_type == "code"]
    assert len(pieces) >= 3 and [c.metadata["slideshow"]["slide_type"] for c in pieces[1:]] == ["subslide"] * (len(pieces) - 1)
    shown = [c for c in pieces if not c.metadata.get("transient", {}).get("remove_source")]
    assert "\n".join(c.source for c in shown) == long_code  # the code, cut between statements
    assert [o for c in pieces for o in c.outputs] == tall.outputs  # every output, in order
    assert len({c.get("id") for c in pieces}) == len(pieces)
    assert "\n\n".join(c.source for c in deck.cells if c.cell_type == "markdown"
                       and c.metadata["slideshow"]["slide_type"] != "notes")[len("# T\n\n"):] == prose.source
    assert deck.cells[-1] == notes and nb.cells[1] == tall  # notes never split; the notebook unchanged


def test_a_cells_height_is_estimated_from_what_it_shows():
    short, longer = md("One line."), md("A paragraph. " * 100)
    assert slide_marks.estimated_height(longer) > slide_marks.estimated_height(short)
    plain = code("plot()")
    drawn = code("plot()", outputs=[figure(ALT)])
    assert slide_marks.estimated_height(drawn) - slide_marks.estimated_height(plain) > 40


def test_marking_changes_only_the_marks_and_is_idempotent(tmp_path):
    lesson = lesson_cells.notebooks("lessons")[0]
    for suffix in (".ipynb", ".py"):
        shutil.copyfile(lesson.with_suffix(suffix), tmp_path / lesson.with_suffix(suffix).name)
    copy = tmp_path / lesson.name
    nb = nbformat.read(str(copy), as_version=4)
    for cell in nb.cells:
        cell.metadata.pop("slideshow", None)
    nbformat.write(nb, str(copy))
    twin_before = copy.with_suffix(".py").read_text(encoding="utf-8")
    assert slide_marks.main(["--check", str(copy)]) == 1
    assert slide_marks.mark(copy) is True and slide_marks.mark(copy) is False
    assert slide_marks.main(["--check", str(copy)]) == 0
    assert copy.read_bytes() == lesson.read_bytes()  # the committed lesson is exactly this
    assert copy.with_suffix(".py").read_text(encoding="utf-8") == twin_before


def test_the_tools_examples_run():
    for module in (lesson_cells, slide_marks, slides):
        assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0, module.__name__


ALT = "Measured rates fall on the classic curve as k grows, lowest at k = 7."


def figure(alt: str | None):
    """A figure's output as ``plots.show`` writes it (the PNG's alt in its metadata)."""
    metadata = {} if alt is None else {"image/png": {"alt": alt}}
    return nbformat.v4.new_output("display_data", metadata=metadata, data={
        "image/png": "iVBORw0KGgo=", "text/plain": f"Figure: {alt}"})


def test_a_figure_in_a_deck_carries_the_alt_of_its_output(tmp_path):
    """The template writes the output's alt into the <img> (the lab template it extends writes none)."""
    nb = nbformat.v4.new_notebook(cells=[md("# 01 · Figures"), code("show(ALT)", outputs=[figure(ALT + ' "<&>"')]),
                                         code("plt.show()", outputs=[figure(None)])])
    notebook = tmp_path / "01_figures.ipynb"
    nbformat.write(nb, str(notebook))
    images = [a for t, a in Tags(slides.write_deck(notebook, tmp_path / "out").read_text()).tags if t == "img"]
    assert images[0].get("alt") == ALT + ' "<&>"'
    assert images[1].get("alt") in (None, *lesson_cells.PLACEHOLDER_ALTS)  # nbconvert 7.1 writes none
    assert lesson_cells.alt_problem(images[0]["alt"]) is None and lesson_cells.alt_problem(images[1].get("alt"))


def test_the_npm_packages_are_pinned_by_a_lock_and_never_committed():
    package = json.loads((slides.HERE / "package.json").read_text())
    lock = json.loads((slides.HERE / "package-lock.json").read_text())
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", v) for v in package["dependencies"].values())
    for name, wanted in package["dependencies"].items():
        assert lock["packages"][f"node_modules/{name}"]["version"] == wanted
        assert lock["packages"][f"node_modules/{name}"]["integrity"].startswith("sha512-")
    assert package["dependencies"]["reveal.js"].split(".")[0] in ("4", "5")  # the dist/ layout nbconvert expects
    assert "resolved" not in json.dumps(lock)
    assert re.search(r"^build/$", (ROOT / ".gitignore").read_text(), re.M)  # build/npm/node_modules


def test_the_page_guard_is_asked_about_every_url_that_may_leave_the_machine():
    """``recorded_page`` routes only URLs that ``NOT_A_LOCAL_SCHEME`` matches to its guard: every URL
    ``is_local`` refuses must match (or it would load unrecorded), and only file, data, blob and
    about URLs may pass unasked."""
    urls = ["file:///tmp/deck.html", "FILE:///tmp/x.js", "data:text/css,a{}", "blob:null/1234", "about:blank",
            "https://unpkg.com/reveal.js", "http://example.org/x.png", "HTTPS://cdn.example/y.js", "//cdn.x/y.js",
            "ws://example.org/socket", "wss://example.org/socket", "ftp://example.org/f", "http://127.0.0.1:8000/",
            "http://localhost/x", "chrome-extension://abc/x.js", "filesystem:http://example.org/f", "javascript:1"]
    for url in urls:
        asked = bool(slides.NOT_A_LOCAL_SCHEME.search(url))
        assert asked or slides.is_local(url), url
        assert asked != (url.lower().split(":")[0] in slides.LOCAL_SCHEMES), url


# --- the decks and handouts, built ---------------------------------------------------------------

class Tags(HTMLParser):
    """Every start tag with its attributes, and the text of every <style> block."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags, self.styles, self._in_style = [], [], False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = {key: value or "" for key, value in attrs}
        self.tags.append((tag, attrs))
        self._in_style = tag == "style"
        if "style" in attrs:
            self.styles.append(attrs["style"])

    def handle_endtag(self, tag):
        self._in_style = False if tag == "style" else self._in_style

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)


def references(text: str) -> tuple[list[str], list[str]]:
    """(what a page loads: src, link href, CSS url() and @import; where its <a> links go)."""
    tags = Tags(text)
    loads, links = [], []
    for tag, attrs in tags.tags:
        for key in ("src", "href", "data", "poster", "srcset"):
            if key in attrs:
                (links if tag == "a" and key == "href" else loads).append(attrs[key])
    for style in tags.styles:
        loads += [u for m in URL_IN_CSS.finditer(style) for u in m.groups() if u]
    return loads, links


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("slides")
    BUILD_LOG.clear()
    decks = slides.build(out=out, log=BUILD_LOG.append)
    return out, decks


BUILD_LOG: list[str] = []  # what the built fixture's build printed


@pytest.mark.slides
def test_make_slides_writes_a_deck_and_a_handout_per_notebook(built):
    out, decks = built
    assert [d.relative_to(out) for d in decks] == [slides.deck_path(p, out).relative_to(out) for p in NOTEBOOKS]
    for deck in decks:
        assert deck.is_file() and slides.handout_path(deck).is_file(), deck.name
    index = (out / "index.html").read_text()
    assert all(d.relative_to(out).as_posix() in index for d in decks)
    links = {a["href"]: text for a, text in Links(index).links}
    for notebook, deck in zip(NOTEBOOKS, decks):  # each deck under its lesson's title, not its file name
        assert links[deck.relative_to(out).as_posix()] == lesson_cells.title(lesson_cells.read(notebook))
    assert [h for h in re.findall(r"<h2>(.*?)</h2>", index)] == ["Lessons", "Worked solutions", "Going deeper"]


@pytest.mark.slides
def test_make_slides_says_what_it_is_doing_a_line_per_deck_and_handout(built):
    out, decks = built
    log = BUILD_LOG
    for deck in decks:
        name = deck.relative_to(out).as_posix()
        text = deck.read_text(encoding="utf-8")
        counts = slides.deck_counts(text)
        line = next(line for line in log if f"deck " in line and f" {name}:" in line)
        assert f"{counts['screens']} slides, {counts['fragments']} fragments, {counts['notes']} notes" in line
        pages = len(PAGE.findall(slides.handout_path(deck).read_bytes()))
        assert any(f" {slides.handout_path(deck).relative_to(out).as_posix()}: {pages} pages" in line for line in log)
    assert counts["screens"] == text.count("<section") - len(re.findall(r"<section>\s*<section", text)) > 0


def test_a_deck_is_counted_from_its_html():
    text = ('<section><section>a</section><section><div class="fragment">b</div>'
            '<aside class="notes">c</aside></section></section><section>\n<section>d</section></section>')
    assert slides.deck_counts(text) == {"screens": 3, "fragments": 1, "notes": 1}


class Links(HTMLParser):
    """Every <a> with its attributes and its text."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.links, self._open = [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._open = [dict(attrs), ""]
            self.links.append(self._open)

    def handle_endtag(self, tag):
        self._open = None if tag == "a" else self._open

    def handle_data(self, data):
        if self._open is not None:
            self._open[1] += data


@pytest.mark.slides
def test_each_deck_has_the_slides_fragments_and_notes_its_marks_say(built):
    out, _ = built
    for notebook in NOTEBOOKS:
        types = slide_marks.current_types(slide_marks.split_tall_cells(lesson_cells.read(notebook)))
        text = slides.deck_path(notebook, out).read_text(encoding="utf-8")
        tags = Tags(text).tags
        # a slide is a column (an outer <section>) holding its first screen; a subslide a screen below
        sections = sum(t == "section" for t, _ in tags)
        assert sections == 2 * types.count("slide") + types.count("subslide"), notebook.name
        assert sum(t == "aside" and "notes" in a.get("class", "") for t, a in tags) == types.count("notes")
        assert sum("fragment" in a.get("class", "").split() for _, a in tags) == types.count("fragment")


@pytest.mark.slides
def test_no_deck_loads_anything_from_another_machine(built):
    out, decks = built
    css = sorted((out / slides.ASSETS).rglob("*.css"))
    assert css, "the reveal.js style sheets are copied beside the decks"
    bad, missing = [], []
    for deck in decks + [out / "index.html"]:
        loads, links = references(deck.read_text(encoding="utf-8"))
        assert loads or deck.name == "index.html", deck.name
        bad += [(deck.name, url) for url in loads if not slides.is_local(url)]  # <a> links a reader follows
        missing += [(deck.name, url) for url in loads + links if not url.startswith(("data:", "#"))
                    and slides.is_local(url) and not (deck.parent / url.split("?")[0].split("#")[0]).exists()]
    for sheet in css:
        text = sheet.read_text(encoding="utf-8", errors="replace")
        bad += [(sheet.name, u) for m in URL_IN_CSS.finditer(text) for u in m.groups()
                if u and not slides.is_local(u)]
    assert bad == [] and missing == []
    scripts = [a["src"] for t, a in Tags(decks[0].read_text()).tags if t == "script" and "src" in a]
    assert any(s.endswith("require.js") for s in scripts) and any(s.endswith("tex-chtml.js") for s in scripts)


@pytest.mark.slides
def test_every_image_in_a_deck_says_in_words_what_it_shows(built):
    """Each <img> of each deck has an alt of words, not a file name and not empty: the sentence
    its output's metadata carries (``plots.show``; the template in ``tools/slides/templates``)."""
    out, _ = built
    problems = []
    for notebook in NOTEBOOKS:
        deck = slides.deck_path(notebook, out)
        alts = [a.get("alt") for t, a in Tags(deck.read_text(encoding="utf-8")).tags if t == "img"]
        problems += [f"{deck.relative_to(out)}: image {i}: {problem}" for i, alt in enumerate(alts)
                     if (problem := lesson_cells.alt_problem(alt))]
        figures = lesson_cells.figures(lesson_cells.read(notebook))
        assert len(alts) == len(figures), deck.name
    assert problems == [], "\n".join(problems)


@pytest.mark.slides
def test_every_slide_of_every_deck_fits_a_1280_by_800_screen(built):
    """Measured in Chromium at 1280×800, one browser for every deck (``python -m tools.slides
    --measure``): no screen is taller than the slide (it would scroll, or run off a projector)."""
    out, decks = built
    log = []
    tall = slides.measure(decks, out, log=log.append)
    for deck in decks:
        screens = slides.deck_counts(deck.read_text(encoding="utf-8"))["screens"]
        assert any(line.startswith(f"  {deck.relative_to(out)}: {screens} slides, tallest ") for line in log), deck.name
    assert tall == [], "\n".join(tall)
    assert re.fullmatch(r"0 of \d+ slides taller than 1280×800's 800 px", log[-1])


ALT_IN_PDF = re.compile(rb"/Alt\s*(?:\(((?:\\.|[^\\)])*)\)|<([0-9A-Fa-f\s]*)>)", re.S)
PDF_ESCAPE = re.compile(rb"\\([0-7]{1,3}|.)", re.S)


def pdf_alts(data: bytes) -> list[str]:
    """The /Alt text of each tagged figure of a PDF (a literal or hex string, PDFDoc or UTF-16)."""
    named = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"f": b"\f"}
    found = []
    for literal, hexadecimal in ALT_IN_PDF.findall(data):
        if hexadecimal or not literal:
            raw = bytes.fromhex("".join(hexadecimal.decode().split()))
        else:
            raw = PDF_ESCAPE.sub(lambda m: bytes([int(m[1], 8) & 255]) if m[1][:1].isdigit()
                                 else named.get(m[1], m[1]), literal)
        found.append(raw[2:].decode("utf-16-be") if raw.startswith(b"\xfe\xff") else raw.decode("latin-1"))
    return found


def test_the_alt_of_a_figure_is_read_from_a_tagged_pdf():
    assert pdf_alts(b"<</S /Figure /Alt (Rates \\(k = 7\\) fall.)>> <</Alt <FEFF0041>>>") == \
        ["Rates (k = 7) fall.", "A"]


PAGE = re.compile(rb"/Type\s*/Page\b(?!s)")
URI = re.compile(rb"/URI\s*\(([^)]*)\)")


@pytest.mark.slides
def test_each_handout_is_a_pdf_with_a_page_per_slide_and_only_the_decks_links(built):
    out, decks = built
    for notebook, deck in zip(NOTEBOOKS, decks):
        data = slides.handout_path(deck).read_bytes()
        assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF"), deck.name
        types = slide_marks.current_types(slide_marks.split_tall_cells(lesson_cells.read(notebook)))
        screens = types.count("slide") + types.count("subslide")
        # one page a slide (none spread over two) and one for each slide's notes
        assert len(PAGE.findall(data)) == screens + types.count("notes"), deck.name
        _, links = references(deck.read_text(encoding="utf-8"))
        resolved = {urljoin(deck.as_uri(), link) for link in links}
        assert {u.decode("latin-1") for u in URI.findall(data)} <= resolved, deck.name
        # a tagged PDF: each figure keeps its alt for a screen reader, as in the deck
        figures = lesson_cells.figures(lesson_cells.read(notebook))
        assert pdf_alts(data) == [" ".join((lesson_cells.figure_alt(o) or "").split()) for _, o in figures], deck.name
