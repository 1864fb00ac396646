"""The course site in Italian beside the English: ``build/html/it/``, built by the same ``make html``.

- The Italian site is a second Sphinx build of ``docs/`` with ``language = "it"``, started when the
  English HTML build has finished (``build-finished``), into ``<outdir>/it`` with its own doctrees
  (``<doctreedir>-it``) and the English build's flags (``-W``, ``-j``): ``make html`` and the
  site test run one command and get both sites, and a warning in either fails it.
- Its pages keep the English page names, so a page's twin is the same path one folder up or down:
  every page of either site links to its twin in its header (the template
  ``_templates/bloomedu-language.html``), a plain relative link that works from ``file://``.
- Its lessons, deeper notebooks and solutions are the Italian notebooks (``notebooks/it/``, built
  from ``translations/it/`` by ``tools.lesson_catalogs``), read in place of the English copy of
  the same page (``source-read``): same page names, same figures' alt, the Italian text and
  outputs, and its download button gives the Italian notebook.  An English notebook with no
  Italian edition yet is left out of the Italian site.
- The other translated pages (:data:`TRANSLATED_PAGES`: the home page, cheat sheet, glossary) are
  translated by Sphinx's own i18n, from ``docs/locale/it/LC_MESSAGES/<page>.po``.  Those catalogs
  are brought in step with the English by ``make site-catalogs``: ``sphinx-build -b gettext -D
  bloomedu_edition=it`` extracts those pages only, then ``sphinx-intl update -l it``.
- MathJax is the English site's copy (``../_static/mathjax``), not copied again.
- The pages not translated (API reference, instructors' guide, results, FAQ, toy) are not built
  again: a link to one from an Italian page goes to the English page (intersphinx, reading the
  English build's ``objects.inv``), and their places in the sidebar are left out.
- On the Italian home page the README's long table (article step → module → lesson → test) is
  replaced by a sentence linking to it on the English home page.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sphinx.errors import SphinxError

from bloomedu_site import NOTEBOOKS

EDITIONS = {"it": "Italiano"}  # language -> its name, in itself
ENGLISH = ("en", "English")
TRANSLATED_PAGES = ("index", "cheatsheet", "glossary")  # docs/<page>.md, through docs/locale/
SHARED_PAGES = ("genindex", "search")  # pages Sphinx writes in every build
README_TABLE = ('```{include} ../README.md\n:start-after: "## Article step → module → lesson → test\\n"\n'
                ':end-before: "\\n## "\n```')
TABLE_ELSEWHERE = ("The table that maps each step of the articles to its module, lesson and test is on "
                   "the {external+en:doc}`English home page <index>`.")


def edition(config) -> str | None:
    """The language of the edition being built (``-D language=it``), or of the catalogs being
    extracted (``-D bloomedu_edition=it``); None for the English site.

    >>> from types import SimpleNamespace as Config
    >>> [edition(Config(language=lang, bloomedu_edition=only)) for lang, only in [("it", ""), ("en", ""), ("en", "it")]]
    ['it', None, 'it']
    """
    return config.bloomedu_edition or (config.language if config.language in EDITIONS else None)


def edition_notebooks(root: Path, language: str) -> list[str]:
    """The notebook pages (``notebooks/01_seen_ids``) that have an edition in ``language``:
    ``notebooks/<language>/<path>`` beside the English ``notebooks/<path>``."""
    folder = root / "notebooks" / language
    return sorted(f"notebooks/{path.relative_to(folder).with_suffix('').as_posix()}"
                  for pattern in NOTEBOOKS for path in folder.glob(pattern)
                  if (root / "notebooks" / path.relative_to(folder)).is_file())


def edition_pages(root: Path, language: str) -> list[str]:
    """Every page of the site in ``language``, by its name (the same as its English twin's)."""
    return [*TRANSLATED_PAGES, *edition_notebooks(root, language), *SHARED_PAGES]


def configure(app, config) -> None:
    """The Italian build's settings: its pages only, its catalogs, links to the English site."""
    language = edition(config)
    if language is None:
        return
    root = Path(app.srcdir).parent
    config.include_patterns = [f"{page}.md" for page in TRANSLATED_PAGES]
    if config.bloomedu_edition:  # the catalogs' extraction: the links to pages left out do not matter
        config.suppress_warnings = [*config.suppress_warnings, "ref"]
    else:  # the site itself: its lessons too
        config.include_patterns += [f"{page}.ipynb" for page in edition_notebooks(root, language)]
    config.autosummary_generate = False  # the API reference is the English one
    config.locale_dirs = ["locale/"]
    config.gettext_compact = False  # one catalog a page: docs/locale/it/LC_MESSAGES/cheatsheet.po
    config.suppress_warnings = [*config.suppress_warnings, "toc.excluded", "toc.not_readable"]  # left in English
    english = Path(app.outdir).parent / "objects.inv"
    config.intersphinx_mapping = {"en": ("..", str(english))} if english.is_file() else {}
    config.intersphinx_disabled_reftypes = []  # {doc}`faq` goes to the English FAQ
    config.mathjax_path = "../../_static/mathjax/tex-chtml.js"  # the English site's copy (24 MB), not another
    for listener in list(app.events.listeners.get("build-finished", [])):
        if listener.handler.__module__ == "sphinx-mathjax-offline":  # what would copy it into it/_static
            app.disconnect(listener.id)
    config.smartquotes = False  # docutils' Italian quotes turn the apostrophe of "po' più" into ”
    config.html_title = "bloomedu: i filtri di Bloom, passo dopo passo"
    config.html_theme_options = {**config.html_theme_options,
                                 "search_bar_text": "Cerca nelle lezioni…"}


def read_edition(app, docname: str, source: list[str]) -> None:
    """An edition's notebook page reads ``notebooks/<language>/<path>`` instead of the English;
    its home page links to the README's table on the English home page instead of copying it."""
    language = edition(app.config)
    if language is None:
        return
    if docname == "index" and README_TABLE in source[0]:
        source[0] = source[0].replace(README_TABLE, TABLE_ELSEWHERE)
    elif docname.startswith("notebooks/") and not app.config.bloomedu_edition:
        path = Path(app.srcdir).parent / "notebooks" / language / f"{docname.removeprefix('notebooks/')}.ipynb"
        app.env.note_dependency(str(path))
        source[0] = path.read_text(encoding="utf-8")


def twin_href(pagename: str, language: str) -> str:
    """The relative link from a page to its twin in ``language`` (``en``: from an edition's page).

    >>> twin_href("notebooks/01_seen_ids", "it"), twin_href("notebooks/01_seen_ids", "en")
    ('../it/notebooks/01_seen_ids.html', '../../notebooks/01_seen_ids.html')
    """
    depth = pagename.count("/")
    return "../" * (depth + 1) + f"{pagename}.html" if language == ENGLISH[0] else "../" * depth + f"{language}/{pagename}.html"


def twin_link(app, pagename, templatename, context, doctree) -> None:
    """``bloomedu_twin`` for the header's template: the same page in the other language, if any."""
    if edition(app.config) is not None:
        context["bloomedu_twin"] = {"href": twin_href(pagename, ENGLISH[0]), "lang": ENGLISH[0], "name": ENGLISH[1]}
        return
    for language, name in EDITIONS.items():
        if pagename in edition_pages(Path(app.srcdir).parent, language):
            context["bloomedu_twin"] = {"href": twin_href(pagename, language), "lang": language, "name": name}


def build_editions(app, exception) -> None:
    """After the English HTML site, each edition into ``<outdir>/<language>``, with the same flags;
    after an edition, its notebooks for the pages' download button (Sphinx copied the English)."""
    if exception is not None or app.builder.name != "html":
        return
    if (language := edition(app.config)) is not None:
        root = Path(app.srcdir).parent
        for page in edition_notebooks(root, language):
            path = Path(app.outdir) / "_sources" / f"{page}.ipynb"
            path.write_bytes((root / "notebooks" / language / f"{page.removeprefix('notebooks/')}.ipynb").read_bytes())
        return
    for language in EDITIONS:
        command = [sys.executable, "-m", "sphinx", "-b", "html", "-D", f"language={language}",
                   "-d", f"{app.doctreedir}-{language}", str(app.srcdir), str(Path(app.outdir) / language)]
        if app._fail_on_warnings:
            command[3:3] = ["-W", "--keep-going"]
        if app.parallel > 1:
            command[3:3] = ["-j", str(app.parallel)]
        sys.stdout.flush()
        if subprocess.run(command, cwd=Path(app.srcdir).parent).returncode != 0:
            raise SphinxError(f"the {EDITIONS[language]} site ({language}) failed to build: see above")


def setup(app):
    app.add_config_value("bloomedu_edition", "", "env", types=[str])
    app.connect("config-inited", configure)
    app.connect("source-read", read_edition)
    app.connect("html-page-context", twin_link)
    app.connect("build-finished", build_editions)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
