"""What the course site adds to Sphinx and MyST-NB: the front page from the README, the
lesson index from the notebooks' metadata, code spans that link, and widgets as a note.

- ``bloomedu-readme`` (directive): a section of ``README.md``, by its heading, as
  Markdown; the front page shows the README's one table with it, so the two never drift.
- ``bloomedu-lessons`` (directive): every lesson ``notebooks/NN_slug.ipynb`` in reading
  order, its title linked and its one-line summary (the notebook's ``bloomedu.summary``
  metadata), with a link to its worked solutions when there are some.
- Code spans become links wherever they stand (lessons, README table, docstrings):
  ``bloomedu/core/filter.py`` and ``bloomedu.core.filter`` go to the module's API page; a
  name right after a module (``bloomedu/core/filter.py`` (``from_capacity``)), or one the
  package exports (``BloomFilter.add_many``), to its entry (found by ``bloomedu_names``);
  ``notebooks/09_one_million_urls.ipynb``, ``09_one_million_urls.ipynb`` or
  ``09_one_million_urls`` to the lesson's page.  Only targets that exist are linked.
- :func:`read_notebook` is MyST-NB's reader for ``.ipynb``: the committed notebook as it
  is, except that a widget (ipywidgets) cannot run in a static page, so its output
  becomes a note saying where to run it, and the saved widget state is dropped.
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
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.util.docutils import SphinxDirective

from bloomedu_names import resolve
from tools.lesson_cells import replace_widgets  # conf.py puts the project's root on sys.path

NOTEBOOKS = ("[0-9][0-9]_*.ipynb", "solutions/[0-9][0-9]_*.ipynb", "deeper/[0-9][0-9]_*.ipynb")  # under notebooks/
LESSONS = "notebooks/" + NOTEBOOKS[0]
WIDGET_NOTE = ("<p class=\"bloomedu-widget-note\"><em>An interactive widget is shown here when the "
               "lesson runs in Jupyter (<code>make lab</code>); a static page cannot run it. The "
               "<a href=\"bloomedu-root:toy.html\">toy without a kernel</a> runs in this browser: type "
               "a key, change m and k, and watch its bits.</em></p>")


def sync_folder(folder: Path, contents: dict[str, bytes], pattern: str) -> list[str]:
    """Make ``folder`` hold exactly ``contents`` among the files matching ``pattern``.

    A file is rewritten only when its bytes change (so Sphinx rebuilds only what
    changed), through a temporary file (so a concurrent build never reads half of
    one); a file no longer wanted is deleted.  Returns the names written.
    """
    folder.mkdir(parents=True, exist_ok=True)
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
    """The lessons, solutions and deeper notebooks, copied from ``notebooks/`` into the source folder.

    Sphinx and MyST resolve a page's links by real paths, so a link to the folder
    would send ``[lesson 01](../01_seen_ids.ipynb)`` outside the source folder.
    """
    source = Path(app.srcdir).parent / "notebooks"
    wanted = {path.relative_to(source).as_posix(): path.read_bytes()
              for pattern in NOTEBOOKS for path in source.glob(pattern)}
    sync_folder(Path(app.srcdir) / "notebooks", wanted, "**/*.ipynb")


CLOSING = "Where this lesson's code lives"


def modules_named_by_lessons(notebooks: Path) -> dict[str, list[str]]:
    """Module -> the lessons whose closing "where this lesson's code lives" paragraph names
    its file (``bloomedu/core/filter.py``), as page names (``notebooks/06_inside_the_filter``)."""
    named: dict[str, list[str]] = {}
    for path in sorted(Path(notebooks).glob(NOTEBOOKS[0])):
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        text = "\n".join("".join(c["source"]) for c in cells if c.get("cell_type") == "markdown")
        for paragraph in re.split(r"\n\s*\n", text):
            if CLOSING in paragraph:
                for file in re.findall(r"`(bloomedu/[\w/]+)\.py`", paragraph):
                    module = file.replace("/", ".").removesuffix(".__init__")
                    named.setdefault(module, [])
                    if f"notebooks/{path.stem}" not in named[module]:
                        named[module].append(f"notebooks/{path.stem}")
    return named


def read_notebook(text: str, **_) -> nbformat.NotebookNode:
    """A committed notebook, its widget outputs replaced by a note (no widget scripts needed)."""
    return replace_widgets(nbformat.reads(text, as_version=4), WIDGET_NOTE)


def readme_section(readme: str, heading: str) -> str:
    """The text under a ``## heading`` of the README, up to the next heading of that level."""
    match = re.search(rf"^##\s+{re.escape(heading)}\s*$\n(.*?)(?=^##\s|\Z)", readme, re.M | re.S)
    if not match:
        raise ValueError(f"README.md has no section '## {heading}'")
    return match.group(1).strip()


class MarkdownDirective(SphinxDirective):
    """A directive whose output is Markdown it writes, parsed in place."""

    def parse_markdown(self, text: str, source: str) -> list[nodes.Node]:
        container = nodes.container()
        self.state.nested_parse(StringList(text.splitlines(), source=source), 0, container,
                                match_titles=False)
        return container.children


class ReadmeSection(MarkdownDirective):
    """``bloomedu-readme``: one section of the project's README.md (its heading as argument)."""

    required_arguments = 1
    final_argument_whitespace = True

    def run(self):
        readme = Path(self.env.srcdir).parent / "README.md"
        self.env.note_dependency(str(readme))
        return self.parse_markdown(readme_section(readme.read_text(encoding="utf-8"),
                                                  self.arguments[0]), str(readme))


class LessonIndex(MarkdownDirective):
    """``bloomedu-lessons``: the lessons in reading order, each with its one-line summary."""

    def run(self):
        srcdir = Path(self.env.srcdir)
        lessons = sorted(srcdir.glob(LESSONS))
        if not lessons:
            raise self.error(f"no lessons matching {LESSONS} in {srcdir}")
        listing = nodes.enumerated_list(classes=["bloomedu-lessons"], enumtype="arabic", prefix="", suffix=".")
        for path in lessons:
            self.env.note_dependency(str(path))
            metadata = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
            summary = metadata.get("bloomedu", {}).get("summary", "")
            solutions = path.parent / "solutions" / f"{path.stem}_solutions.ipynb"
            paragraph = nodes.paragraph()
            paragraph += self.doc_link(f"notebooks/{path.stem}")
            paragraph += nodes.Text(": ")
            for parsed in self.parse_markdown(summary, str(path)):
                paragraph.extend(parsed.children if isinstance(parsed, nodes.paragraph) else [parsed])
            if solutions.exists():
                paragraph += nodes.Text(" (")
                paragraph += self.doc_link(f"notebooks/solutions/{solutions.stem}", "worked solutions")
                paragraph += nodes.Text(")")
            listing += nodes.list_item("", paragraph)
        return [listing]

    def doc_link(self, docname: str, text: str | None = None) -> addnodes.pending_xref:
        """A link to a page, its text the page's title unless given."""
        return addnodes.pending_xref("", nodes.inline(text="" if text is None else text),
                                     refdomain="std", reftype="doc", reftarget=f"/{docname}",
                                     refexplicit=text is not None, refwarn=True,
                                     refdoc=self.env.docname)


MODULE_FILE = re.compile(r"^(bloomedu(?:/\w+)*)(?:\.py|/)$")
MODULE_NAME = re.compile(r"^bloomedu(?:\.\w+)+$")
LESSON = re.compile(r"^(?:notebooks/)?((?:solutions/|deeper/)?\d\d_[\w-]+?)(?:\.ipynb)?$")
NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
PACKAGE = "bloomedu"


class LinkCodeSpans(SphinxTransform):
    """Turn code spans that name a module, a name in it, or a lesson into links."""

    default_priority = 400

    def apply(self, **kwargs) -> None:
        pages = getattr(self.app, "bloomedu_pages", {})
        paragraph, module = None, None
        for literal in list(self.document.findall(nodes.literal)):
            if literal.parent is not paragraph:  # a module named earlier in a paragraph is
                paragraph, module = literal.parent, None  # the context of the names after it
            if not isinstance(paragraph, nodes.paragraph):
                continue  # inside a reference, an xref, emphasis or a title: leave it
            text = literal.astext()
            found = self.module_named(text, pages)
            if found:
                module = found
                self.link(literal, "py", "mod", found)
            elif (lesson := LESSON.match(text)) and f"notebooks/{lesson.group(1)}" in self.env.found_docs:
                self.link(literal, "std", "doc", f"/notebooks/{lesson.group(1)}")
            elif NAME.match(text) and (target := self.name_in(module, text)):
                self.link(literal, "py", "obj", target)

    @staticmethod
    def module_named(text: str, pages: dict) -> str | None:
        if match := MODULE_FILE.match(text):
            dotted = match.group(1).replace("/", ".")
            dotted = dotted.removesuffix(".__init__")
        elif MODULE_NAME.match(text):
            dotted = text
        else:
            return None
        return dotted if dotted in pages else None

    def name_in(self, module: str | None, name: str) -> str | None:
        """The entry a name in a code span stands for, seen from the module named before it
        in the paragraph, else from the package's own exports (``BloomFilter.from_capacity``)."""
        homes = getattr(self.app, "bloomedu_homes", None)
        if homes is None:
            return None
        if module is None and not name.startswith(PACKAGE + "."):
            if name.split(".")[0] not in getattr(importlib.import_module(PACKAGE), "__all__", ()):
                return None
            module = PACKAGE
        return resolve(name, homes, module)[0]

    def link(self, literal: nodes.literal, domain: str, role: str, target: str) -> None:
        xref = addnodes.pending_xref("", literal.deepcopy(), refdomain=domain, reftype=role,
                                     reftarget=target, refexplicit=True, refwarn=True,
                                     refdoc=self.env.docname)
        literal.replace_self(xref)


def setup(app):
    app.connect("builder-inited", copy_notebooks)
    app.add_directive("bloomedu-readme", ReadmeSection)
    app.add_directive("bloomedu-lessons", LessonIndex)
    app.add_transform(LinkCodeSpans)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
