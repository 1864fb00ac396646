"""The Italian course site (``build/html/it/``, built by the same ``make html``: docs/_ext/bloomedu_editions.py).

The ``site`` fixture (tests/conftest.py) builds the English site, which builds the Italian one
into its ``it/`` folder.  These tests read both: every Italian page says ``lang="it"`` and links
to its English twin, every English page with an Italian twin links to it, each lesson, deeper
notebook and solution page of the Italian site is the Italian notebook (its first heading is the
catalog's translation), and the translated pages carry their catalogs' Italian.  The catalogs
(docs/locale/it/LC_MESSAGES/) must be 100 % translated, with no fuzzy entry, and in step with the
English pages: a sentence changed in English and not brought in with ``make site-catalogs`` fails.
"""

from __future__ import annotations

import doctest
import json
import posixpath
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "docs" / "locale" / "it" / "LC_MESSAGES"
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

import bloomedu_editions  # noqa: E402  (docs/_ext, as Sphinx imports it)

pytestmark = pytest.mark.site

ITALIAN_NOTEBOOKS = bloomedu_editions.edition_notebooks(ROOT, "it")


class Page(HTMLParser):
    """A page's ``<html lang>``, its language switch and the text of its first ``<h1>``."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.lang, self.switches, self.h1, self._in_h1 = None, [], None, False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = {key: value or "" for key, value in attrs}
        if tag == "html":
            self.lang = attrs.get("lang")
        elif tag == "a" and "bloomedu-language" in attrs.get("class", "").split():
            self.switches.append(attrs)
        elif tag == "h1" and self.h1 is None:
            self._in_h1, self.h1 = True, ""

    def handle_endtag(self, tag):
        if tag == "h1":
            self._in_h1 = False

    def handle_data(self, data):
        if self._in_h1:
            self.h1 += data


def plain(text: str) -> str:
    """Text as a reader compares it: spaces collapsed, typographic quotes (Sphinx's smartquotes)
    made plain, markdown's emphasis and code marks and a heading's trailing ``#`` anchor dropped."""
    text = text.translate(str.maketrans("‘’“”«»", "''\"\"\"\"", "*`"))
    return " ".join(text.split()).rstrip("#").strip()


def read(site: Path, page: str) -> Page:
    assert (site / page).is_file(), f"{page} is missing from the site"
    return Page((site / page).read_text(encoding="utf-8"))


def pages(site: Path) -> list[str]:
    """Every HTML page of a site, relative to its root, without the Italian site's pages."""
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                  if not p.relative_to(site).parts[0] in ("it", "_static", "_sources", "_images"))


def first_heading(notebook: Path) -> str:
    """The text of the first ``#`` heading of a notebook's first markdown cell."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    text = "".join(next(c for c in cells if c["cell_type"] == "markdown")["source"])
    return re.search(r"^#\s+(.+)$", text, re.M).group(1).strip()


def catalog_problems(path: Path) -> list[str]:
    """The entries of a ``.po`` catalog that are untranslated or fuzzy, each with its msgid."""
    with path.open("rb") as handle:
        catalog = read_po(handle)
    return [f"{'fuzzy' if message.fuzzy else 'untranslated'}: {message.id!r}" for message in catalog
            if message.id and (message.fuzzy or not message.string)]


@pytest.fixture(scope="module")
def italian(site) -> Path:
    assert (site / "it" / "index.html").is_file(), "make html built no Italian site in build/html/it/"
    return site / "it"


# --- the catalogs -----------------------------------------------------------------------------

def test_each_translated_page_has_its_catalog():
    assert sorted(p.stem for p in LOCALE.glob("*.po")) == sorted(bloomedu_editions.TRANSLATED_PAGES)


@pytest.mark.parametrize("page", bloomedu_editions.TRANSLATED_PAGES)
def test_every_catalog_entry_is_translated_and_none_is_fuzzy(page):
    assert catalog_problems(LOCALE / f"{page}.po") == []


def test_catalog_problems_names_fuzzy_and_untranslated_entries(tmp_path):
    (tmp_path / "page.po").write_text('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=utf-8\\n"\n\n'
                                      'msgid "Done"\nmsgstr "Fatto"\n\n'
                                      '#, fuzzy\nmsgid "Changed"\nmsgstr "Cambiato"\n\n'
                                      'msgid "New"\nmsgstr ""\n', encoding="utf-8")
    assert catalog_problems(tmp_path / "page.po") == ["fuzzy: 'Changed'", "untranslated: 'New'"]


@pytest.mark.full  # runs Sphinx's gettext builder (seconds): make test only
def test_the_catalogs_hold_exactly_the_sentences_of_the_english_pages(tmp_path):
    """What ``make site-catalogs`` extracts now is what the catalogs translate: an English
    sentence changed without bringing its catalog in step fails here."""
    run = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "gettext", "-D", "bloomedu_edition=it",
                          "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(tmp_path / "pot")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    for page in bloomedu_editions.TRANSLATED_PAGES:
        with (tmp_path / "pot" / f"{page}.pot").open("rb") as handle:
            english = {m.id for m in read_po(handle) if m.id}
        with (LOCALE / f"{page}.po").open("rb") as handle:
            translated = {m.id for m in read_po(handle) if m.id}
        assert sorted(english - translated) == [], f"{page}: run make site-catalogs and translate these"
        assert sorted(translated - english) == [], f"{page}: entries no English sentence has any more"


# --- the Italian site -------------------------------------------------------------------------

def test_the_italian_site_has_the_translated_pages_and_every_italian_notebook(italian):
    assert ITALIAN_NOTEBOOKS, "no Italian notebooks in notebooks/it/"
    built = set(pages(italian))
    wanted = {f"{page}.html" for page in bloomedu_editions.edition_pages(ROOT, "it")}
    assert wanted <= built, sorted(wanted - built)


def test_every_italian_page_says_lang_it_and_links_to_its_english_twin(site, italian):
    for page in pages(italian):
        html = read(italian, page)
        assert html.lang == "it", page
        assert [a["hreflang"] for a in html.switches] == ["en"], page
        twin = posixpath.normpath(posixpath.join("it", posixpath.dirname(page), html.switches[0]["href"]))
        assert twin == page and (site / twin).is_file(), (page, twin)


def test_every_english_page_with_an_italian_twin_links_to_it_and_no_other_does(site, italian):
    twins = set(pages(italian))
    for page in pages(site):
        html = read(site, page)
        assert html.lang == "en", page
        if page in twins:
            assert [a["hreflang"] for a in html.switches] == ["it"], page
            target = posixpath.normpath(posixpath.join(posixpath.dirname(page), html.switches[0]["href"]))
            assert target == f"it/{page}" and (site / target).is_file(), (page, target)
        else:
            assert html.switches == [], page


@pytest.mark.parametrize("page", ITALIAN_NOTEBOOKS)
def test_each_notebook_page_of_the_italian_site_is_the_italian_notebook(italian, page):
    italian_heading = first_heading(ROOT / "notebooks" / "it" / f"{page.removeprefix('notebooks/')}.ipynb")
    english_heading = first_heading(ROOT / f"{page}.ipynb")
    shown = plain(read(italian, f"{page}.html").h1)
    assert shown == plain(italian_heading), page
    assert italian_heading == english_heading or shown != plain(english_heading)


def test_the_download_button_of_an_italian_lesson_gives_the_italian_notebook(italian):
    for page in ITALIAN_NOTEBOOKS:
        assert f'href="{"../" * page.count("/")}_sources/{page}.ipynb"' in (italian / f"{page}.html").read_text(encoding="utf-8")
        italian_notebook = ROOT / "notebooks" / "it" / f"{page.removeprefix('notebooks/')}.ipynb"
        assert (italian / "_sources" / f"{page}.ipynb").read_bytes() == italian_notebook.read_bytes(), page


@pytest.mark.parametrize("page", bloomedu_editions.TRANSLATED_PAGES)
def test_each_translated_page_shows_its_catalogs_title(italian, page):
    with (LOCALE / f"{page}.po").open("rb") as handle:
        catalog = {m.id: m.string for m in read_po(handle) if m.id}
    english_title = first_markdown_heading(ROOT / "docs" / f"{page}.md")
    shown = plain(read(italian, f"{page}.html").h1)
    assert shown == plain(catalog[english_title]) != plain(english_title)


def test_an_apostrophe_stays_an_apostrophe(italian):
    """docutils' Italian smart quotes would print "un po' più" as "un po” più"."""
    text = (italian / "cheatsheet.html").read_text(encoding="utf-8")
    assert "un po' più alto" in text.replace("&#39;", "'") and "po” più" not in text


def first_markdown_heading(path: Path) -> str:
    return re.search(r"^#\s+(.+)$", path.read_text(encoding="utf-8"), re.M).group(1).strip()


def test_links_to_pages_left_in_english_go_to_the_english_site(site, italian):
    """The FAQ, the toy, the API reference: linked from the Italian pages, never built again."""
    assert not (italian / "faq.html").exists() and not (italian / "api").exists()
    hrefs = set(re.findall(r'href="([^"#]+)', (italian / "index.html").read_text(encoding="utf-8")))
    english = {posixpath.normpath(posixpath.join("it", href)) for href in hrefs if "://" not in href}
    for page in ("faq.html", "toy.html", "api/bloomedu.html", "index.html"):
        assert page in english and (site / page).is_file(), page


# --- the helpers, on small inputs -------------------------------------------------------------

def test_the_editions_helpers_examples_run():
    result = doctest.testmod(bloomedu_editions)
    assert result.failed == 0 and result.attempted >= 2


def test_edition_notebooks_lists_only_notebooks_with_an_english_twin(tmp_path):
    for path in ("notebooks/01_a.ipynb", "notebooks/it/01_a.ipynb", "notebooks/it/02_b.ipynb",
                 "notebooks/03_c.ipynb", "notebooks/deeper/01_d.ipynb", "notebooks/it/deeper/01_d.ipynb"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("{}")
    assert bloomedu_editions.edition_notebooks(tmp_path, "it") == ["notebooks/01_a", "notebooks/deeper/01_d"]
