"""The lessons as a static website: ``python -m tools.build_site --out build/html`` (``make html``).

Every lesson ``notebooks/NN_slug.ipynb`` (found on disk, in order) is executed
top to bottom in a fresh kernel, exported to ``NN_slug.html`` with its figures
embedded as data URIs, and linked to the previous and next lessons; an
``index.html`` lists the lessons, one line each (the lesson's first heading and
the first sentence under it).  A lesson's mention of another, `` `NN_slug.ipynb` ``,
becomes a link to that page.  The pages load nothing from the network: no
require.js, MathJax or widget scripts, so a student without Python (or without
a connection) can read them.  Interactive widgets cannot run in a static page;
their output becomes a note that says where to run them.

Options: ``--notebooks DIR`` (default ``notebooks``), ``--no-execute`` (use the
committed outputs, as the tests do to stay quick), ``--timeout SECONDS`` per cell.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import jinja2
import nbformat
from nbconvert import HTMLExporter
from nbconvert.filters import markdown2html_mistune
from nbconvert.preprocessors import ExecutePreprocessor

__all__ = ["Lesson", "discover_lessons", "summarize", "build_site", "main"]

LESSON_GLOB = "[0-9][0-9]_*.ipynb"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = ("<p class='bloomedu-widget-note'><em>An interactive widget is shown here when the "
               "lesson runs in Jupyter (<code>make lab</code>); a static page cannot run it.</em></p>")

NAV_CSS = """
nav.bloomedu-nav { display: flex; justify-content: space-between; gap: 1em; max-width: 1100px;
  margin: 0.8em auto; padding: 0.5em 1em; font-family: sans-serif; font-size: 0.95em;
  border: 1px solid #ddd; border-radius: 4px; background: #fafafa; }
nav.bloomedu-nav a { color: #1f4e79; text-decoration: none; }
nav.bloomedu-nav a:hover { text-decoration: underline; }
nav.bloomedu-nav .bloomedu-none { color: #999; }
"""

# The lab template minus everything it would fetch from a CDN, plus the navigation bars.
PAGE_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block extra_css -%}<style type="text/css">{{ resources.bloomedu_css }}</style>{%- endblock extra_css -%}
{%- block body_header -%}
{{ super() }}
{{ resources.bloomedu_nav }}
{%- endblock body_header -%}
{%- block body_footer -%}
{{ resources.bloomedu_nav }}
{{ super() }}
{%- endblock body_footer -%}
"""


@dataclass(frozen=True)
class Lesson:
    """One lesson: its notebook path, output file name, title and one-line summary."""

    path: Path
    title: str
    summary: str

    @property
    def html_name(self) -> str:
        return self.path.with_suffix(".html").name


def discover_lessons(notebooks: Path) -> list[Path]:
    """The lesson notebooks ``NN_slug.ipynb`` in a folder, in reading order.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> for name in ["02_b.ipynb", "01_a.ipynb", "draft.ipynb", "1_x.ipynb"]:
    ...     _ = (folder / name).write_text("{}")
    >>> [p.name for p in discover_lessons(folder)]
    ['01_a.ipynb', '02_b.ipynb']
    """
    return sorted(Path(notebooks).glob(LESSON_GLOB))


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(?=\s+[A-Z(\"'*_`]|$)", text)
    return match.group(1) if match else text


def summarize(nb) -> tuple[str, str]:
    """A lesson's first heading, and its one-line summary.

    The summary is the notebook's ``bloomedu.summary`` metadata when it has
    one (lessons open with what they build on, which makes a poor index line),
    else the first sentence of the first paragraph after the heading.

    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
    ...     "# 03 · The bit vector\\n\\nLesson 02 kept a hash, e.g. 32 bits. Then more."
    ...     "\\n\\n## Next")])
    >>> summarize(nb)
    ('03 · The bit vector', 'Lesson 02 kept a hash, e.g. 32 bits.')
    >>> nb.metadata["bloomedu"] = {"summary": "One bit per hash value."}
    >>> summarize(nb)
    ('03 · The bit vector', 'One bit per hash value.')
    """
    summary = nb.metadata.get("bloomedu", {}).get("summary")
    title, paragraphs = None, []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for block in re.split(r"\n\s*\n", cell.source):
            block = block.strip()
            if not block:
                continue
            heading = re.match(r"#+\s+(.*)", block)
            if heading and title is None:
                title = heading.group(1).strip()
                rest = block[heading.end():].strip()
                if rest:
                    paragraphs.append(rest)
            elif title is not None and not heading:
                paragraphs.append(block)
            if title is not None and paragraphs:
                return title, summary or _first_sentence(paragraphs[0])
    return title or "(untitled lesson)", summary or ""


def _inline_markdown(text: str) -> str:
    """Markdown of one sentence as inline HTML (emphasis, code), without the paragraph."""
    rendered = markdown2html_mistune(text).strip()
    return re.sub(r"^<p>(.*)</p>$", r"\1", rendered, flags=re.S)


def _replace_widgets(nb) -> None:
    """Drop saved widget state and turn widget views into a note: no widget scripts needed."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if WIDGET_MIME in output.get("data", {}):
                output["data"] = {"text/html": WIDGET_NOTE}


def _link_lessons(nb, names: set[str]) -> None:
    """Turn a mention of another lesson's notebook (`` `NN_slug.ipynb` ``) into a link to its page."""
    def link(match: re.Match) -> str:
        stem = match.group(1)
        return f"[`{stem}.ipynb`]({stem}.html)" if stem in names else match.group(0)

    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = re.sub(r"(?<!\[)`(\d\d_[\w-]+)\.ipynb`", link, cell.source)


def _execute(nb, cwd: Path, timeout: int, name: str) -> None:
    processor = ExecutePreprocessor(timeout=timeout, kernel_name="python3")
    try:
        processor.preprocess(nb, {"metadata": {"path": str(cwd)}})
    except Exception as error:  # a lesson that fails must stop the build, with its name
        raise RuntimeError(f"executing {name} failed: {error}") from error


def _nav(lessons: list[Lesson], index: int) -> str:
    def link(position: int, arrow_before: str, arrow_after: str, rel: str) -> str:
        if not 0 <= position < len(lessons):
            return f"<span class='bloomedu-none bloomedu-{rel}'>{arrow_before}{arrow_after}</span>"
        lesson = lessons[position]
        return (f"<a class='bloomedu-{rel}' rel='{rel}' href='{lesson.html_name}'>"
                f"{arrow_before}{html.escape(lesson.title)}{arrow_after}</a>")

    return ("<nav class='bloomedu-nav'>"
            f"{link(index - 1, '← ', '', 'prev')}"
            "<a class='bloomedu-index' href='index.html'>All lessons</a>"
            f"{link(index + 1, '', ' →', 'next')}</nav>")


def _index_page(lessons: list[Lesson]) -> str:
    items = "\n".join(
        f"<li><a href='{lesson.html_name}'>{html.escape(lesson.title)}</a>"
        f"<span class='summary'>{_inline_markdown(lesson.summary)}</span></li>"
        for lesson in lessons)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>bloomedu: the lessons</title>
<style type="text/css">
body {{ font-family: sans-serif; max-width: 820px; margin: 2em auto; padding: 0 1em;
  line-height: 1.5; color: #222; }}
ul.lessons {{ list-style: none; padding-left: 0; }}
ul.lessons li {{ margin-bottom: 0.8em; }}
ul.lessons a {{ font-weight: bold; color: #1f4e79; text-decoration: none; }}
ul.lessons .summary {{ display: block; color: #444; }}
code {{ background: #f2f2f2; padding: 0 0.2em; }}
</style>
</head>
<body>
<h1>bloomedu: Bloom filters, step by step</h1>
<p>The lessons in reading order. Each page is a lesson executed top to bottom; run them
yourself in JupyterLab with <code>make lab</code>.</p>
<ul class="lessons">
{items}
</ul>
</body>
</html>
"""


def build_site(notebooks: Path, out: Path, execute: bool = True, timeout: int = 600,
               log=print) -> list[Lesson]:
    """Write ``index.html`` and one page per lesson into ``out``; return the lessons in order.

    >>> build_site(Path("no-such-folder"), Path("unused"))
    Traceback (most recent call last):
    ...
    ValueError: notebooks: no lessons matching [0-9][0-9]_*.ipynb in no-such-folder
    """
    notebooks, out = Path(notebooks), Path(out)
    paths = discover_lessons(notebooks)
    if not paths:
        raise ValueError(f"notebooks: no lessons matching {LESSON_GLOB} in {notebooks}")
    if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    books, lessons = [], []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if execute:
            started = time.perf_counter()
            _execute(nb, path.parent, timeout, path.name)
            log(f"executed {path.name} in {time.perf_counter() - started:.1f} s")
        _replace_widgets(nb)
        books.append(nb)
        lessons.append(Lesson(path, *summarize(nb)))

    exporter = HTMLExporter(template_name="lab", template_file="bloomedu_page.html.j2",
                            extra_loaders=[jinja2.DictLoader({"bloomedu_page.html.j2": PAGE_TEMPLATE})],
                            embed_images=True)
    out.mkdir(parents=True, exist_ok=True)
    stems = {lesson.path.stem for lesson in lessons}
    for position, (lesson, nb) in enumerate(zip(lessons, books)):
        _link_lessons(nb, stems)
        resources = {"metadata": {"name": lesson.title, "path": str(lesson.path.parent)},
                     "bloomedu_nav": _nav(lessons, position), "bloomedu_css": NAV_CSS}
        body, _ = exporter.from_notebook_node(nb, resources=resources)
        (out / lesson.html_name).write_text(body, encoding="utf-8")
    (out / "index.html").write_text(_index_page(lessons), encoding="utf-8")
    log(f"wrote {len(lessons)} lessons and index.html to {out}")
    return lessons


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m tools.build_site --out build/html [--no-execute]``."""
    parser = argparse.ArgumentParser(prog="python -m tools.build_site", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("build/html"), help="output folder")
    parser.add_argument("--notebooks", type=Path, default=Path("notebooks"), help="lesson folder")
    parser.add_argument("--no-execute", dest="execute", action="store_false",
                        help="export the committed outputs instead of executing each lesson")
    parser.add_argument("--timeout", type=int, default=600, help="seconds allowed per cell")
    args = parser.parse_args(argv)
    if args.timeout <= 0:
        parser.error(f"--timeout must be a positive number of seconds, got {args.timeout}")
    try:
        build_site(args.notebooks, args.out, execute=args.execute, timeout=args.timeout)
    except (ValueError, RuntimeError) as error:
        print(f"build_site: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
