"""Sphinx configuration of the course site: ``make html`` builds it into ``build/html/``.

The lessons, worked solutions and deeper notebooks are the committed notebooks (copied from ``notebooks/``
into ``docs/notebooks/`` before each build), rendered by MyST-NB from their saved outputs,
never executed here (strict nbval and the real-browser test already run them).  The API
reference is written from the docstrings by autodoc, one page per public module, generated
by autosummary's recursive mode into ``docs/api/`` (``api_seed.rst``, ``_templates/``, and
``_ext/bloomedu_api.py`` for what each page holds).  Nothing here names a lesson or a module: new ones
are picked up by the next build.  The pages load nothing from the network: the theme's
assets are local, MathJax is the copy the ``sphinx-mathjax-offline`` package ships, and
widget outputs become a note.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tools/guide.py and tools/lesson_cells.py

project = "bloomedu"
author = "the bloomedu authors"
copyright = "the bloomedu authors"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",  # the Italian site's links to English-only pages (before bloomedu_api)
    "sphinx-mathjax-offline",  # MathJax 3 from its PyPI package, copied into _static/
    "bloomedu_api",  # what each API page documents, references as Python reads them, signatures
    "bloomedu_site",
    "bloomedu_pages",  # {lesson}`topic` links, the sizing table, the instructors' guide
    "bloomedu_editions",  # the Italian site in build/html/it/, each page linked to its twin
]

root_doc = "index"
include_patterns = ["index.md", "api/*.rst", "notebooks/[0-9][0-9]_*.ipynb",
                    "notebooks/solutions/*.ipynb", "notebooks/deeper/*.ipynb", "toy.md", "cheatsheet.md", "glossary.md", "faq.md",
                    "results.md", "instructors.md", "instructors/*.md"]
exclude_patterns = ["**/.ipynb_checkpoints"]

# Every reference must resolve; warnings fail the build (make html runs -W --keep-going).
nitpicky = True

# --- notebooks (MyST-NB) --------------------------------------------------------
nb_execution_mode = "off"  # the committed outputs are the lesson
nb_custom_formats = {".ipynb": ["bloomedu_site.read_notebook", {}, False]}
nb_ipywidgets_js = {}  # no widget manager from a CDN: widgets become a note
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

# --- API reference (autodoc) ----------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autosummary_generate = ["api_seed.rst"]  # api/<module>.rst for every public module, recursively
templates_path = ["_templates"]  # autosummary/module.rst: what one module's page shows
add_module_names = False
toc_object_entries_show_parents = "hide"  # the page's own contents: from_capacity(), not BloomFilter.from_capacity()
python_use_unqualified_type_names = True
python_display_short_literal_types = True

# --- HTML -------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = "bloomedu: Bloom filters, step by step"
html_static_path = ["_static"]
html_favicon = "_static/favicon.svg"  # else a browser asks the server for /favicon.ico: a 404
html_css_files = ["bloomedu.css"]  # wide blocks scroll visibly, long names wrap, the toy, printing
html_js_files = ["bloomedu-search.js",  # search from file:// without fetching pages
                 "bloomedu-site.js"]  # a shadow on the side of a wide block that has more
html_context = {"default_mode": "auto"}  # light or dark, as the reader's system is
html_last_updated_fmt = None
html_theme_options = {
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    "collapse_navbar": True,  # expand only the current branch: a smaller page, a faster build
    "use_download_button": True,
    "use_fullscreen_button": False,
    "use_repository_button": False,
    "use_source_button": False,
    "launch_buttons": {},
    "search_bar_text": "Search the lessons and the API…",
    "navbar_persistent": [],  # one search box, in the sidebar
    "article_header_end": ["bloomedu-language.html", "article-header-buttons.html"],  # English | Italiano
}

# --- the Italian site (bloomedu_editions: -D language=it) --------------------------
locale_dirs = ["locale/"]  # docs/locale/it/LC_MESSAGES/<page>.po: the home page, cheat sheet, glossary
gettext_compact = False
