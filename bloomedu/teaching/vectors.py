"""Outputs recorded from real systems, shipped inside the package for the lessons.

Lesson 12 checks bloomedu against bytes that real Guava 31.1 wrote
(``BloomFilter.writeTo``), lesson 13 against Bitcoin Core's BIP37 unit-test vectors.  The
lessons must run wherever a teacher copies them (``bloomedu lessons DIR``), so they
read these files from the installed package (:mod:`importlib.resources`), never from
``../tests/data``.  The files are the same as the tests' copies in ``tests/data/``
(``tests/test_vectors.py`` checks it); they are declared as package data in
``pyproject.toml``.

Taught in ``notebooks/12_guava.ipynb`` and ``notebooks/13_bitcoin_light_wallets.ipynb``;
tested in ``tests/test_vectors.py``.
"""

from __future__ import annotations

import json
from importlib import resources

__all__ = ["RECORDINGS", "recorded"]

RECORDINGS = {
    "guava": "guava_vectors.json",  # filters built, written and probed by Guava 31.1
    "bip37": "bip37.json",          # Bitcoin Core's BIP37 unit-test vectors
}


def recorded(name: str) -> dict:
    """The recorded vectors of one real system, as the JSON object they were saved as.

    >>> recorded("guava")["filters"][0]["write_to_hex"]
    '0103000000010408010030410049'
    >>> sorted(recorded("bip37"))[:2]
    ['algorithm', 'description']
    """
    if name not in RECORDINGS:
        raise ValueError(f"name must be one of {', '.join(map(repr, RECORDINGS))}, got {name!r}")
    text = (resources.files(__package__) / "data" / RECORDINGS[name]).read_text(encoding="utf-8")
    return json.loads(text)
