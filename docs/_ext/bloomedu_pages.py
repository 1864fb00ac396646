"""The site's own pages (front page, toy, cheat sheet, glossary, FAQ, guide): links to lessons by
topic, the sizing table, links from inside committed outputs, and the instructors' guide.

- ``{lesson}`topic``` (role): a link to the lesson that teaches ``topic``, its title as text
  (``{lesson}`the sizing lesson <sizing>``` gives its own text).  Topics are the keys of
  ``docs/lesson_topics.json``, each naming a lesson by its file stem, so a lesson split or
  renumbered changes that file only (``{lesson}`lesson {n} <sizing>``` shows "lesson 08",
  the number read from that file too); an unknown topic, or a topic whose lesson is gone, fails
  the build (warnings are errors).
- ``bloomedu-sizing-table`` (directive): m, its memory and k for every n and p of its options,
  computed by :mod:`bloomedu.core.theory` as :meth:`~bloomedu.core.filter.BloomFilter.from_capacity`
  sizes a filter (m = ⌈−n ln p / (ln 2)²⌉ bits stored in whole 64-bit words, k = round((m/n) ln 2)),
  and the bits per key against the lower bound log2(1/p) for each p.
- ``bloomedu-root:PAGE`` in a page's HTML (a committed output's note cannot know how deep its
  page is) becomes the relative link to ``PAGE`` of the site.
- The instructors' guide (``tools/guide.py``): its pages written into ``docs/instructors/``
  before each build, and ``bloomedu-guide-table`` (directive), its overview on ``instructors.md``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective, SphinxRole

from bloomedu.core.theory import LN2, bits_per_item, lower_bound_bits_per_item, num_bits_for
from bloomedu_site import parse_markdown, sync_folder
from tools import guide  # conf.py puts the project's root on sys.path

TOPICS = "lesson_topics.json"
ROOT_LINK = re.compile(r'(href|src)="bloomedu-root:([^"#]*)(#[^"]*)?"')


def load_topics(srcdir: Path) -> dict[str, str]:
    """Topic -> lesson page (``notebooks/09_one_million_urls``), from ``docs/lesson_topics.json``."""
    data = json.loads((Path(srcdir) / TOPICS).read_text(encoding="utf-8"))
    notebooks = Path(srcdir).parent / "notebooks"
    topics, missing = {}, []
    for topic, stem in data.items():
        if topic.startswith("_"):
            continue
        found = [folder for folder in ("", "deeper/") if (notebooks / f"{folder}{stem}.ipynb").exists()]
        if not found:
            missing.append(f"{topic}: {stem}")
            continue
        topics[topic] = f"notebooks/{found[0]}{stem}"
    if missing:
        raise ValueError(f"{TOPICS} names lessons that do not exist: {', '.join(missing)}")
    return topics


class LessonRole(SphinxRole):
    """``{lesson}`topic``` or ``{lesson}`text <topic>```: a link to the lesson teaching ``topic``."""

    def run(self):
        match = re.fullmatch(r"(?s)(.*?)\s*<([\w-]+)>", self.text)
        text, topic = (match.group(1), match.group(2)) if match else (None, self.text.strip())
        topics = self.env.bloomedu_topics
        if topic not in topics:
            message = self.inliner.reporter.error(
                f"unknown lesson topic {topic!r}: add it to docs/{TOPICS} (topics: {', '.join(sorted(topics))})",
                line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, message)], [message]
        self.env.note_dependency(str(Path(self.env.srcdir) / TOPICS))
        if text and "{n}" in text:  # "lesson {n}": the lesson's number, from its file name
            text = text.replace("{n}", topics[topic].rsplit("/", 1)[-1].split("_", 1)[0])
        xref = addnodes.pending_xref("", nodes.inline(text=text or ""), refdomain="std", reftype="doc",
                                     reftarget=f"/{topics[topic]}", refexplicit=bool(text), refwarn=True,
                                     refdoc=self.env.docname)
        xref["classes"].append("bloomedu-lesson-link")
        return [xref], []


def memory(nbytes: int) -> str:
    """Bytes in the unit that keeps three significant digits.

    >>> memory(1_797_200), memory(1280), memory(96)
    ('1.71 MiB', '1.25 KiB', '96 B')
    """
    for unit, size in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{nbytes} B"


def sizing(n: int, p: float) -> tuple[int, int, int]:
    """(m, bytes, k) as ``BloomFilter.from_capacity(n, p)`` would make them, without allocating.

    >>> sizing(1_000_000, 0.001)
    (14377588, 1797200, 10)
    """
    m = num_bits_for(n=n, p=p)
    return m, 8 * -(-m // 64), max(1, round(m / n * LN2))


class SizingTable(SphinxDirective):
    """``bloomedu-sizing-table``: memory and k for each n (rows) and p (columns)."""

    option_spec = {"n": str, "p": str}

    def run(self):
        ns = [int(float(x)) for x in self.options.get("n", "1e3 1e4 1e5 1e6 1e7 1e8 1e9").split()]
        ps = [float(x) for x in self.options.get("p", "0.1 0.01 0.001 0.0001 0.000001").split()]
        rows = [["**n \\ p**", *[f"**{p:g}**" for p in ps]], ["---"] * (len(ps) + 1),
                ["bits per key (floor)", *[f"{bits_per_item(p):.2f} ({lower_bound_bits_per_item(p):.2f})" for p in ps]]]
        for n in ns:
            rows.append([f"{n:,}"] + [f"{memory(nbytes)}, k = {k}" for _, nbytes, k in (sizing(n, p) for p in ps)])
        table = parse_markdown(self, ["| " + " | ".join(row) + " |" for row in rows])
        table[0]["classes"].append("bloomedu-sizing")
        return table


def root_links(app, pagename, templatename, context, doctree):
    """``bloomedu-root:toy.html`` in a page's body becomes the link from that page to ``toy.html``."""
    body = context.get("body")
    if not body or "bloomedu-root:" not in body:
        return
    depth = pagename.count("/")

    def relative(match):
        target = "../" * depth + match.group(2)
        return f'{match.group(1)}="{target}{match.group(3) or ""}"'

    context["body"] = ROOT_LINK.sub(relative, body)


class GuideTable(SphinxDirective):
    """``bloomedu-guide-table``: every lesson's numbers, then the 90-minute sessions."""

    def run(self):
        notebooks = Path(self.env.srcdir).parent / "notebooks"
        for path in guide.guide_lessons(notebooks):
            self.env.note_dependency(str(path))
        return parse_markdown(self, guide.overview(notebooks))


def _generate(app) -> None:
    app.env.bloomedu_topics = load_topics(Path(app.srcdir))
    notebooks, srcdir = Path(app.srcdir).parent / "notebooks", Path(app.srcdir)
    sync_folder(srcdir / guide.GUIDE, guide.pages(notebooks, srcdir / guide.NOTES), "*.md")


def setup(app):
    app.connect("builder-inited", _generate)
    app.add_directive("bloomedu-guide-table", GuideTable)
    app.connect("html-page-context", root_links)
    app.add_role("lesson", LessonRole())
    app.add_directive("bloomedu-sizing-table", SizingTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
