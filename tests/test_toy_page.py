"""The kernel-less toy's script (``docs/_static/bloomedu-toy.js``), without a browser.

The script is plain JavaScript that loads nothing: no request of any kind, no module import, no
address. Node runs it here (the machine's ``node``, which ``make slides`` needs for npm anyway)
with a stand-in ``window``, and its ``window.bloomedu.positions(key, m, k)`` must equal the
library's positions on 2,000 seeded keys and every m and k the browser test uses; the browser
test (``tests/test_browser_instructor.py``) runs the same comparison in Chromium on the page itself.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bloomedu.core.filter import key_positions
from test_browser_instructor import toy_cases

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "docs" / "_static" / "bloomedu-toy.js"
NETWORK = re.compile(r"\bfetch\s*\(|XMLHttpRequest|WebSocket|EventSource|sendBeacon|\bimport\s*\(|"
                     r"importScripts|https?://|//[a-z0-9.-]+\.[a-z]{2,}/|\.src\s*=|createElement\(\s*['\"]script")

RUNNER = r"""
const fs = require("fs");
global.window = {};
global.document = {readyState: "complete", querySelectorAll: () => []};
eval(fs.readFileSync(process.argv[2], "utf8"));
const cases = JSON.parse(fs.readFileSync(0, "utf8"));
const out = cases.map(([key, m, k]) => {
  const bits = BigInt(m) > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(m) : Number(m);
  return window.bloomedu.positions(key, bits, k).map(String);
});
process.stdout.write(JSON.stringify(out));
"""


def test_the_toy_script_asks_for_nothing_on_the_network():
    code = SCRIPT.read_text(encoding="utf-8")
    without_comments = "\n".join(line.split("//", 1)[0] if not line.lstrip().startswith("//") else ""
                                 for line in code.splitlines())
    assert NETWORK.findall(without_comments) == []
    assert "window.bloomedu" in code and "positions: positions" in code


def _page_positions(cases, folder):
    """``window.bloomedu.positions(key, m, k)`` for each (key, m, k), as node runs the page's script."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on this machine; tests/test_browser_instructor.py checks the toy in Chromium")
    runner = folder / "run.js"
    runner.write_text(RUNNER)
    run = subprocess.run([node, str(runner), str(SCRIPT)], input=json.dumps([[k, str(m), n] for k, m, n in cases]),
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return [[int(x) for x in row] for row in json.loads(run.stdout)]


def test_node_runs_the_toy_script_to_exactly_the_librarys_positions(tmp_path):
    cases = toy_cases(2000)
    got = _page_positions(cases, tmp_path)
    assert got == [key_positions(key, num_bits=m, num_hashes=k) for key, m, k in cases]


def test_lesson_06s_toy_keys_and_exercise_light_the_same_bits_on_the_page(tmp_path):
    """One toy: what lesson 06 draws with ``toy_view`` (m = 32, k = 3) and its exercise 06.1
    ('789' in BloomFilter(1000, 3)) are what a student sees typing the same keys on the site."""
    from bloomedu.teaching.exercises import EXERCISES
    from bloomedu.teaching.toy import toy_view

    fruits = ["apple", "banana", "cherry", "date", "elderberry"]  # lesson 06's, and the page's first keys
    page = (ROOT / "docs" / "toy.md").read_text(encoding="utf-8")
    assert re.search(r'data-keys="([^"]*)"', page).group(1).split(",") == fruits
    keys = fruits + ["fig", "melon", "lime", "grape", "plum"]
    exercise = next(e for e in EXERCISES["06"] if e.checker == "double_hash_position").params
    assert exercise["num_bits"] <= 1024  # the page's largest m
    cases = [(key, 32, 3) for key in keys] + [(exercise["key"], exercise["num_bits"], exercise["num_hashes"])]
    got = _page_positions(cases, tmp_path)
    assert got[:-1] == [list(toy_view(fruits, key).positions) for key in keys]
    assert got[-1] == key_positions(exercise["key"], num_bits=exercise["num_bits"],
                                    num_hashes=exercise["num_hashes"])


# --- the page a student opens: the toy first, every key's label whole ----------------------
TOY_PAGE = ROOT / "docs" / "toy.md"


def test_the_toy_page_opens_with_the_toy_and_explains_the_hashing_below_it():
    page = TOY_PAGE.read_text(encoding="utf-8")
    before, toy = page.split("```{raw} html", 1)
    intro = before.split("\n", 1)[1]  # under the title
    assert len(intro.split()) <= 60, intro
    assert "MurmurHash3" not in before and "fmix64" not in before
    assert toy.index("bloomedu-toy-page") < toy.index("MurmurHash3")


def _toy_in_a_page(folder: Path) -> Path:
    """The toy page's own block, style sheet and script, in a page of their own (no site build)."""
    block = re.search(r"```\{raw\} html\n(.*?)```", TOY_PAGE.read_text(encoding="utf-8"), re.S).group(1)
    static = folder / "_static"
    static.mkdir()
    for name in ("bloomedu.css", "bloomedu-toy.js"):
        shutil.copy(SCRIPT.parent / name, static / name)
    page = folder / "toy.html"
    page.write_text('<!doctype html><html><head><meta charset="utf-8">'
                    '<link rel="stylesheet" href="_static/bloomedu.css"></head>'
                    f'<body style="margin: 16px">{block}</body></html>', encoding="utf-8")
    return page


LABELS_JS = """() => [...document.querySelectorAll('#bloomedu-toy .toy-owners > span')].map(span => {
    const range = document.createRange(); range.selectNodeContents(span);
    const text = range.getBoundingClientRect(), cell = span.closest('.toy-bit'), box = cell.getBoundingClientRect();
    const style = getComputedStyle(cell), pad = parseFloat(style.paddingLeft) + parseFloat(style.borderLeftWidth);
    return {label: span.textContent, bit: cell.dataset.bit, title: cell.title,
            fits: text.left >= box.left + pad - 0.5 && text.right <= box.right - pad + 0.5}; })"""


@pytest.mark.browser
@pytest.mark.parametrize("width", [420, 800, 1280])
def test_every_key_label_in_the_toy_is_whole_and_fits_its_cell(tmp_path, width):
    """'banana' showed as 'banan' (cut by its cell) and 'elderberry' as 'elder…': each key that set
    a bit is named whole in its cell up to 12 characters, at a phone's width and a desktop's; the
    chance under the grid raises its exponents instead of writing ^."""
    from playwright.sync_api import sync_playwright

    from browser_support import assert_stayed_on_this_machine, guarded_page, launch

    url = _toy_in_a_page(tmp_path).as_uri()
    long_keys = ["watermelon", "pomegranates", "a key longer than twelve characters"]
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = guarded_page(browser, width=width)
            page.goto(url, wait_until="load")
            page.wait_for_function("() => document.querySelectorAll('#bloomedu-toy .toy-bit').length === 32")
            box = page.locator("[data-toy=key]")
            for key in long_keys:
                box.fill(key)
                box.press("Enter")
            labels = page.evaluate(LABELS_JS)
            stats = page.locator("[data-toy=stats]")
            formula = (stats.inner_text(), stats.evaluate("s => [...s.querySelectorAll('sup')].map(e => e.textContent)"))
            assert_stayed_on_this_machine(page)
        finally:
            browser.close()
    keys = re.search(r'data-keys="([^"]*)"', TOY_PAGE.read_text(encoding="utf-8")).group(1).split(",")
    assert {label["label"] for label in labels} == set(keys + long_keys[:2] + ["a key longe…"])
    assert [label for label in labels if not label["fits"]] == []
    assert "^" not in formula[0] and formula[1] == ["−kn/m", "k"]  # the chance under the grid, typeset
    for label in labels:  # the cell's title names the whole key
        whole = label["label"].removesuffix("…")
        assert any(key.startswith(whole) and key in label["title"] for key in keys + long_keys)
