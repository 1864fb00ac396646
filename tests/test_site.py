"""The lessons as a website (tools/build_site.py, ``make html``).

The site is built once from the committed notebooks without executing them (the
real-browser test and nbval execute every lesson already); execution itself is
tested on small lessons made here.
"""

from __future__ import annotations

import doctest
import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

import tools.build_site
from tools.build_site import build_site, main

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


class Tags(HTMLParser):
    """Every start tag of a page, as (tag, attributes) pairs."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def find(self, tag: str, **attrs) -> list[dict]:
        return [a for t, a in self.tags if t == tag and all(a.get(k) == v for k, v in attrs.items())]


def first_heading(path: Path) -> str:
    for cell in json.loads(path.read_text())["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and (m := re.search(r"^#+\s+(.+)$", source, re.M)):
            return m.group(1).strip()
    raise AssertionError(f"{path.name} has no heading")


def png_outputs(path: Path) -> int:
    return sum("image/png" in output.get("data", {})
               for cell in json.loads(path.read_text())["cells"]
               for output in cell.get("outputs", []))


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("html")
    assert main(["--notebooks", str(NOTEBOOKS), "--out", str(out), "--no-execute"]) == 0
    return out


def test_there_are_lessons_to_build():
    assert LESSONS, f"no lessons in {NOTEBOOKS}"


def test_index_lists_every_lesson_in_order_with_its_title(site):
    index = (site / "index.html").read_text()
    links = [a["href"] for a in Tags(index).find("a")]
    assert links == [path.with_suffix(".html").name for path in LESSONS]
    positions = [index.index(html.escape(first_heading(path))) for path in LESSONS]
    assert positions == sorted(positions)
    assert index.count("class='summary'") == len(LESSONS)


def test_every_lesson_page_links_to_its_neighbours_and_the_links_resolve(site):
    names = [path.with_suffix(".html").name for path in LESSONS]
    for position, name in enumerate(names):
        tags = Tags((site / name).read_text())
        prev_links = [a["href"] for a in tags.find("a", rel="prev")]
        next_links = [a["href"] for a in tags.find("a", rel="next")]
        assert prev_links == ([names[position - 1]] * 2 if position > 0 else []), name
        assert next_links == ([names[position + 1]] * 2 if position + 1 < len(names) else []), name
        assert [a["href"] for a in tags.find("a", **{"class": "bloomedu-index"})] == ["index.html"] * 2
        for href in prev_links + next_links:
            assert (site / href).is_file()


def test_mentions_of_other_lessons_link_to_their_pages(tmp_path):
    first = tiny_lesson(1, "first")
    name, nb = tiny_lesson(2, "second")
    nb.cells.append(nbformat.v4.new_markdown_cell(
        "Back to `01_first.ipynb`; `07_missing.ipynb` is not a lesson here."))
    build_site(write_lessons(tmp_path / "nb", first, (name, nb)), tmp_path / "out",
               execute=False, log=lambda line: None)
    page = (tmp_path / "out" / "02_second.html").read_text()
    hrefs = [a.get("href") for a in Tags(page).find("a")]
    assert hrefs.count("01_first.html") == 3  # the text's link and the two "previous" links
    assert "07_missing.html" not in hrefs and "07_missing.ipynb" in page


def test_figures_are_embedded_and_nothing_is_loaded_from_the_network(site):
    for path in LESSONS:
        page = (site / path.with_suffix(".html").name).read_text()
        tags = Tags(page)
        images = [a.get("src", "") for a in tags.find("img")]
        assert all(src.startswith("data:image/") for src in images), path.name
        assert sum(src.startswith("data:image/png;base64,") for src in images) == png_outputs(path)
        assert [a for a in tags.find("script") if "src" in a] == [], path.name
        for tag in ("link", "iframe", "img", "source"):
            for attrs in tags.find(tag):
                for key in ("src", "href"):
                    assert not re.match(r"(https?:)?//", attrs.get(key, "")), (path.name, tag, attrs)
        assert "mathjax" not in page.lower() and "require.js" not in page


def tiny_lesson(number: int, slug: str, *cells) -> tuple[str, nbformat.NotebookNode]:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {number:02d} · Lesson {slug}\n\nFirst {slug}. Second.")]
    nb.cells += [nbformat.v4.new_code_cell(source) for source in cells]
    return f"{number:02d}_{slug}.ipynb", nb


def write_lessons(folder: Path, *lessons) -> Path:
    folder.mkdir(exist_ok=True)
    for name, nb in lessons:
        nbformat.write(nb, folder / name)
    return folder


def test_execution_runs_each_lesson_and_embeds_its_fresh_figure(tmp_path):
    plot = ("%matplotlib inline\nimport matplotlib.pyplot as plt\n"
            "plt.figure(figsize=(2, 2)); plt.plot([1, 2]); plt.show()")
    notebooks = write_lessons(tmp_path / "nb", tiny_lesson(2, "plot", plot, "print(6 * 7)"),
                              tiny_lesson(1, "text", "print('hello')"),
                              tiny_lesson(3, "last", "1 + 1"))
    (notebooks / "draft.ipynb").write_text("not a lesson, not even json")
    logged = []
    lessons = build_site(notebooks, tmp_path / "out", execute=True, timeout=120, log=logged.append)
    assert [lesson.html_name for lesson in lessons] == ["01_text.html", "02_plot.html", "03_last.html"]
    assert [lesson.summary for lesson in lessons] == ["First text.", "First plot.", "First last."]
    assert sum("executed" in line for line in logged) == 3
    page = (tmp_path / "out" / "02_plot.html").read_text()
    images = [a["src"] for a in Tags(page).find("img")]
    assert len(images) == 1 and images[0].startswith("data:image/png;base64,") and "42" in page
    # the committed notebook is not changed by the build
    assert nbformat.read(notebooks / "02_plot.ipynb", as_version=4).cells[1].outputs == []


def test_a_failing_lesson_stops_the_build_and_is_named(tmp_path, capsys):
    notebooks = write_lessons(tmp_path / "nb", tiny_lesson(1, "fine", "x = 1"),
                              tiny_lesson(2, "broken", "raise ValueError('boom')"))
    assert main(["--notebooks", str(notebooks), "--out", str(tmp_path / "out")]) == 1
    assert "02_broken.ipynb" in capsys.readouterr().err


def test_widget_views_become_a_note_without_widget_scripts(tmp_path):
    name, nb = tiny_lesson(1, "widget", "panel")
    nb.cells[1].outputs = [nbformat.v4.new_output(
        "display_data", data={"text/plain": "VBox()", "application/vnd.jupyter.widget-view+json":
                              {"model_id": "abc", "version_major": 2, "version_minor": 0}})]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    build_site(write_lessons(tmp_path / "nb", (name, nb)), tmp_path / "out", execute=False,
               log=lambda line: None)
    page = (tmp_path / "out" / "01_widget.html").read_text()
    assert "bloomedu-widget-note" in page and "make lab" in page
    assert "widget-state" not in page and "<script src" not in page


@pytest.mark.parametrize("argv, message", [
    (["--timeout", "0"], "--timeout"),
    (["--bogus"], "unrecognized"),
])
def test_bad_command_lines_exit_with_status_2(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_an_empty_folder_is_a_clear_error(tmp_path, capsys):
    assert main(["--notebooks", str(tmp_path), "--out", str(tmp_path / "out")]) == 1
    assert "no lessons matching" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_module_doctests():
    # tools/ is outside pytest's testpaths, so its docstring examples run here
    result = doctest.testmod(tools.build_site, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 3 and result.failed == 0


def test_every_lesson_carries_its_index_summary():
    # Lessons open with what they build on; the index line is the summary in the metadata.
    for path in LESSONS:
        summary = nbformat.read(path, as_version=4).metadata.get("bloomedu", {}).get("summary", "")
        assert 40 <= len(summary) <= 160 and summary.endswith("."), (path.name, summary)
