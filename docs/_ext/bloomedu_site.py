"""What the course site adds to Sphinx and MyST-NB: the lessons in the source folder, the lesson
index from the notebooks' metadata, code spans that link, and widgets as a note.

- The lessons, solutions and deeper notebooks are copied from ``notebooks/`` into
  ``docs/notebooks/`` before each build: Sphinx and MyST resolve a page's links by real paths,
  so a link from a solution to ``../01_seen_ids.ipynb`` must stay inside the source folder.
- ``bloomedu-lessons`` (directive): every lesson ``notebooks/NN_slug.ipynb`` in reading order,
  its title linked, its one-line summary (the notebook's ``bloomedu.summary`` metadata) and a
  link to its worked solutions when there are some.
- Code spans become links wherever they stand (lessons, the README's table, docstrings):
  ``bloomedu/core/filter.py`` and ``bloomedu.core.filter`` go to the module's API page; a name
  after a module in the same paragraph (``bloomedu/core/filter.py`` (``from_capacity``)), or one
  the package exports (``BloomFilter.add_many``), to its entry when it has one;
  ``notebooks/09_one_million_urls.ipynb``, ``09_one_million_urls.ipynb`` or
  ``09_one_million_urls`` to the lesson's page.
- A figure's ``<img>`` carries the ``alt`` of its output's metadata (``plots.show`` writes it):
  MyST-NB takes only width and height from there, so :func:`alt_from_output` wraps its
  ``render_image`` once (else Sphinx writes the image's file name as its alt).
- :func:`read_notebook` is MyST-NB's reader for ``.ipynb``: the committed notebook as it is,
  except that a widget (ipywidgets) cannot run in a static page, so its output becomes a note
  saying where to run it, and the saved widget state is dropped.
"""

from __future__ import annotations

import importlib
import json
import os
import re
from pathlib import Path

import nbformat
from docutils import nodes
from docutils.statemachine import StringList
from myst_nb.core.render import NbElementRenderer
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.util.docutils import SphinxDirective

from tools.lesson_cells import replace_widgets  # conf.py puts the project's root on sys.path

NOTEBOOKS = ("[0-9][0-9]_*.ipynb", "solutions/[0-9][0-9]_*.ipynb", "deeper/[0-9][0-9]_*.ipynb")  # under notebooks/
WIDGET_NOTE = ("<p class=\"bloomedu-widget-note\"><em>An interactive widget is shown here when the "
               "lesson runs in Jupyter (<code>make lab</code>); a static page cannot run it. The "
               "<a href=\"bloomedu-root:toy.html\">toy without a kernel</a> runs in this browser: type "
               "a key, change m and k, and watch its bits.</em></p>")
PACKAGE = "bloomedu"
MODULE = re.compile(r"^bloomedu(?:/\w+)*(?:\.py|/)$|^bloomedu(?:\.\w+)+$")
LESSON = re.compile(r"^(?:notebooks/)?((?:solutions/|deeper/)?\d\d_[\w-]+?)(?:\.ipynb)?$")
NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")


def sync_folder(folder: Path, contents: dict[str, bytes], pattern: str) -> list[str]:
    """Make ``folder`` hold exactly ``contents`` among the files matching ``pattern``.

    A file is rewritten only when its bytes change (so Sphinx rebuilds only what changed),
    through a temporary file (so a concurrent build never reads half of one); a file no longer
    wanted is deleted.  Returns the names written.
    """
    written = []
    for name, data in contents.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_bytes() != data:
            temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            temporary.write_bytes(data)
            temporary.replace(path)
            written.append(name)
    for stale in folder.glob(pattern):
        if stale.relative_to(folder).as_posix() not in contents:
            stale.unlink()
    return written


def copy_notebooks(app) -> None:
    source = Path(app.srcdir).parent / "notebooks"
    wanted = {path.relative_to(source).as_posix(): path.read_bytes()
              for pattern in NOTEBOOKS for path in source.glob(pattern)}
    sync_folder(Path(app.srcdir) / "notebooks", wanted, "**/*.ipynb")


def read_notebook(text: str, **_) -> nbformat.NotebookNode:
    """A committed notebook, its widget outputs replaced by a note (no widget scripts needed)."""
    return replace_widgets(nbformat.reads(text, as_version=4), WIDGET_NOTE)


def alt_from_output(render_image):
    """MyST-NB's ``NbElementRenderer.render_image``, giving each image its output's ``alt``."""
    def render(self, data):
        alt, found = (data.output_metadata or {}).get(data.mime_type, {}).get("alt"), render_image(self, data)
        for node in found:
            if isinstance(alt, str) and alt.strip() and isinstance(node, nodes.image):
                node["alt"] = " ".join(alt.split())
        return found
    render.bloomedu_alt = True  # wrapped once, however many builds run in one process
    return render


def parse_markdown(directive: SphinxDirective, lines: list[str]) -> list[nodes.Node]:
    """Markdown written by a directive, parsed in place."""
    container = nodes.container()
    directive.state.nested_parse(StringList(lines, directive.env.docname), 0, container, match_titles=False)
    return container.children


class LessonIndex(SphinxDirective):
    """``bloomedu-lessons``: the lessons in reading order, each with its one-line summary."""

    def run(self):
        lines = []
        for path in sorted(Path(self.env.srcdir).glob("notebooks/" + NOTEBOOKS[0])):
            self.env.note_dependency(str(path))
            summary = json.loads(path.read_text(encoding="utf-8"))["metadata"].get("bloomedu", {}).get("summary", "")
            solutions = path.parent / "solutions" / f"{path.stem}_solutions.ipynb"
            more = f" ({{doc}}`worked solutions </notebooks/solutions/{solutions.stem}>`)" if solutions.exists() else ""
            lines.append(f"1. {{doc}}`/notebooks/{path.stem}`: {summary}{more}")
        if not lines:
            raise self.error(f"no lessons in {self.env.srcdir}/notebooks")
        listing = parse_markdown(self, lines)
        listing[0]["classes"].append("bloomedu-lessons")
        return listing


class LinkCodeSpans(SphinxTransform):
    """Turn code spans that name a module, a name in it, or a lesson into links."""

    default_priority = 400

    def apply(self, **kwargs) -> None:
        modules = self.config.autosummary_context["bloomedu_api"]
        exports = getattr(importlib.import_module(PACKAGE), "__all__", ())
        paragraph, module = None, None
        for literal in list(self.document.findall(nodes.literal)):
            if literal.parent is not paragraph:  # a module named earlier in a paragraph is
                paragraph, module = literal.parent, None  # the context of the names after it
            if not isinstance(paragraph, nodes.paragraph):
                continue  # inside a reference, an xref, emphasis or a title: leave it
            text = literal.astext()
            dotted = re.sub(r"(\.py|/)$", "", text).replace("/", ".").removesuffix(".__init__")
            if MODULE.match(text) and dotted in modules:
                module = dotted
                self.link(literal, "py", "mod", dotted)
            elif (lesson := LESSON.match(text)) and f"notebooks/{lesson[1]}" in self.env.found_docs:
                self.link(literal, "std", "doc", f"/notebooks/{lesson[1]}")
            elif NAME.match(text) and (module or text.split(".")[0] in exports or text.startswith(PACKAGE + ".")):
                # resolved, or left as code, by bloomedu_api.missing_reference once every entry is known
                self.link(literal, "py", "obj", text, **{"py:module": module or PACKAGE, "bloomedu_span": True})

    def link(self, literal: nodes.literal, domain: str, role: str, target: str, **more) -> None:
        literal.replace_self(addnodes.pending_xref(
            "", literal.deepcopy(), refdomain=domain, reftype=role, reftarget=target, refexplicit=True,
            refwarn=True, refdoc=self.env.docname, **more))


def setup(app):
    if not getattr(NbElementRenderer.render_image, "bloomedu_alt", False):
        NbElementRenderer.render_image = alt_from_output(NbElementRenderer.render_image)
    app.connect("builder-inited", copy_notebooks)
    app.add_directive("bloomedu-lessons", LessonIndex)
    app.add_transform(LinkCodeSpans)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "2"}
