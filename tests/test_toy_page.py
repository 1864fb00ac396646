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
