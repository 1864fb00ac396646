"""The README starts small: what the course is, the two commands, a Python example that runs and
prints what its comments say, the lessons by title, then links, in at most 400 words before its
one table; its notation is said once, and everything it links to exists."""
import json
import os
import pathlib
import re
import subprocess
import sys

import nbformat

from tools.lesson_cells import prose_words

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def opening(text: str = README) -> str:
    """Everything before the first line of a table."""
    return re.split(r"^\|", text, maxsplit=1, flags=re.MULTILINE)[0]


def python_block(text: str = README) -> str:
    [block] = re.findall(r"^```python\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    return block


def printed_comments(code: str) -> list[str]:
    """What each ``print(...)  # shown`` line of the example says it prints."""
    return [line.rsplit("  # ", 1)[1].strip() for line in code.splitlines()
            if line.startswith("print(") and "  # " in line]


def test_the_opening_holds_at_most_400_words_and_the_python_example():
    start = opening()
    assert start != README and "```python\n" in start  # a table follows, the example before it
    assert prose_words(nbformat.v4.new_markdown_cell(start)) <= 400
    assert len(start.split()) <= 400  # the code and the markup counted too


def test_the_opening_counts_words_up_to_the_first_table_only():
    text = "# t\n\nfour words of prose\n\n| a | b |\n|---|---|\n| many words here |\n"
    assert opening(text) == "# t\n\nfour words of prose\n\n"
    assert prose_words(nbformat.v4.new_markdown_cell(opening(text))) == 5


def test_the_opening_names_the_two_commands_and_the_pip_route():
    start = opening()
    for command in ("make lab", "make test", 'pip install "bloomedu[lessons]"', "bloomedu lab"):
        assert command in start, command


def test_the_python_example_prints_what_its_comments_say(tmp_path):
    code = python_block()
    lines = [line for line in code.splitlines() if line.strip()]
    assert len(lines) <= 10 and lines[0] == "from bloomedu import BloomFilter"
    for name in ("from_capacity(", ".add(", " in f", ".contains_many(", ".nbytes"):
        assert name in code, name
    expected = printed_comments(code)
    assert len(expected) == sum(line.startswith("print(") for line in lines) >= 3
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))}
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == expected


def test_printed_comments_reads_only_print_lines():
    code = 'x = 1  # not output\nprint(x)  # 1\n    print(3)  # indented: not the top level\nprint(2)\n'
    assert printed_comments(code) == ["1"]


def test_the_lessons_are_listed_by_title_in_order_and_linked():
    listed = re.findall(r"^(\d+)\. \[([^\]]+)\]\((notebooks/(\d\d_\w+)\.ipynb)\)$", opening(), re.MULTILINE)
    assert [path for _, _, path, _ in listed] == [p.relative_to(ROOT).as_posix() for p in LESSONS]
    for number, text, _, stem in listed:
        assert int(number) == int(stem[:2])
        cells = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
        source = "".join(next(c for c in cells if c["cell_type"] == "markdown")["source"])
        title = source.splitlines()[0].split(" · ", 1)[1]
        assert title.startswith(text), (stem, title)


def test_one_notation_said_once():
    assert README.count("**n** inserted items") == 1
    assert "**m** bits, **k** hash functions" in opening()
    assert README.count("BloomFilter(numberOfHashFunctions, numberOfBits)") == 1
    for contradiction in ("BloomFilter(k, n)", "BloomFilter(3, 8)", "n-bit", "2ⁿ"):
        assert contradiction not in README, contradiction


def test_every_relative_link_of_the_readme_and_contributing_exists():
    for name in ("README.md", "CONTRIBUTING.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        targets = [t for t in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text) if "://" not in t]
        assert targets, name
        assert [t for t in targets if not (ROOT / t).exists()] == [], name


def test_the_results_page_is_on_the_site():
    conf = (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert '"results.md"' in conf and "\nresults\n" in index
    assert (ROOT / "docs" / "results.md").read_text(encoding="utf-8").startswith("# Measured, not asserted\n")


def test_a_section_the_site_includes_to_the_end_is_the_readmes_last():
    """docs/index.md includes "Where the articles are wrong or loose" up to the README's end: a
    section added after it would land on the site's front page."""
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    includes = re.findall(r"```\{include\} \.\./README\.md\n(.*?)```", index, flags=re.DOTALL)
    to_the_end = [re.search(r':start-after: "(## [^"]+)\\n"', options).group(1)
                  for options in includes if ":end-before:" not in options]
    assert to_the_end == [re.findall(r"^## .+$", README, flags=re.MULTILINE)[-1]]
