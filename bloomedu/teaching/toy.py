"""A toy for one key: type it, see its k bits light up, add it, and watch a false positive borrow bits.

Step 5 of article 1 ("Filtro di Bloom: un elemento appartiene all'insieme?"),
one key at a time, as the interactive pages *Bloom Filters by Example* (Bill
Mill) and Jason Davies' Bloom filter demo show it: the article's
``BloomFilter(numberOfHashFunctions, numberOfBits)`` (here
:class:`~bloomedu.SaltedBloomFilter`, 3 salted hashes over 2**5 = 32 bits by
default) is drawn bit by bit; the key being typed lights up its k bits, each
set bit names the added keys behind it, and a key never added whose bits are
all set is a false positive that borrowed them.

The numbers come from :func:`toy_view`, a pure function (same keys, same
view; unit-tested); :func:`toy` is only the ipywidgets panel around it, as
:func:`bloomedu.teaching.explorer.explorer` is for m, k and n.

Taught at the end of ``notebooks/05_bloom_filter.ipynb``; tested in
``tests/test_toy.py`` and ``tests/test_browser.py``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Iterable

import matplotlib.pyplot as plt
import numpy as np

from ..core.checks import is_int
from ..steps.salted import SaltedBloomFilter
from .plots import new_axes

__all__ = ["ToyView", "toy_view", "toy"]

_MAX_HASH_BITS = 7  # 128 bits: every cell still has room for its index and its keys
_COLORS = {"clear": "#f2f2f2", "set": "#1f4e79", "key, bit set": "#f28e2b",
           "key, bit clear": "#e15759"}


def _keys(added) -> tuple[str, ...]:
    """The added keys in order, each once (adding a key twice changes no bit)."""
    if isinstance(added, (str, bytes)) or not isinstance(added, Iterable):
        raise TypeError(f"added must be a list of str keys, not {type(added).__name__}")
    added = list(added)
    for index, key in enumerate(added):
        if not isinstance(key, str):
            raise TypeError(f"added must hold only str keys, but added[{index}] is "
                            f"{type(key).__name__}")
    return tuple(dict.fromkeys(added))


@dataclass(frozen=True)
class ToyView:
    """What the toy shows: the filter after ``added``, and ``key``'s k bits in it.

    ``owners[i]`` lists the added keys (by their place in ``added``) that set
    bit i; ``positions`` are the key's k bits (empty when no key is typed).
    """

    key: str
    added: tuple[str, ...]
    num_hashes: int
    hash_bits: int
    bits: tuple[bool, ...]
    positions: tuple[int, ...]
    owners: tuple[tuple[int, ...], ...]

    @property
    def num_bits(self) -> int:
        """m = 2**hash_bits."""
        return len(self.bits)

    @property
    def verdict(self) -> str:
        """"no key", "absent" (a bit is 0), "added", or "false positive" (all set, never added)."""
        if not self.key:
            return "no key"
        if not all(self.bits[p] for p in self.positions):
            return "absent"
        return "added" if self.key in self.added else "false positive"

    def label(self, index: int) -> str:
        """Added key number ``index`` as the toy names it: its number and the key."""
        key = self.added[index]
        return f"{index + 1} {key if len(key) <= 24 else key[:21] + '...'}"

    def borrowed_from(self) -> tuple[int, ...]:
        """The added keys (their places in ``added``), other than the key, behind its bits."""
        found = {i for p in self.positions for i in self.owners[p]}
        return tuple(i for i in sorted(found) if self.added[i] != self.key)

    def text(self) -> str:
        """The view in words: the filter, the key's k bits and who set each, the verdict."""
        names = ", ".join(self.label(i) for i in range(len(self.added))) or "none yet"
        lines = [f"SaltedBloomFilter(num_hashes={self.num_hashes}, hash_bits={self.hash_bits}): "
                 f"{self.num_bits} bits, {sum(self.bits)} set",
                 f"keys added ({len(self.added)}): {names}"]
        if not self.key:
            return "\n".join(lines + ["type a key to see its bits"])
        width = len(str(self.num_bits - 1))
        lines.append(f"key {self.key!r} -> bits {', '.join(map(str, self.positions))}")
        for p in dict.fromkeys(self.positions):  # a bit two of its hashes share, once
            who = ", ".join(self.label(i) for i in self.owners[p]) or "no key"
            lines.append(f"  bit {p:>{width}} = {int(self.bits[p])}, set by {who}")
        verdict = self.verdict
        if verdict == "absent":
            zero = next(p for p in self.positions if not self.bits[p])
            lines.append(f"bit {zero} is 0: {self.key!r} was certainly never added")
        elif verdict == "added":
            lines.append(f"all {self.num_hashes} bits are set: {self.key!r} was added "
                         "(and a key never added could look just the same)")
        else:
            lines.append(f"all {self.num_hashes} bits are set, but {self.key!r} was never added: "
                         "a false positive, on bits borrowed from "
                         + ", ".join(self.label(i) for i in self.borrowed_from()))
        return "\n".join(lines)

    def draw(self, ax=None):
        """The bit array, 16 bits a row: set bits dark, the key's bits orange (set) or red (0).

        Each cell shows its index and the numbers of the added keys that set it.
        """
        width = 16
        rows = -(-self.num_bits // width)
        ax = ax if ax is not None else new_axes((7.0, 0.9 + 0.5 * rows))
        codes = np.array(self.bits, dtype=float)
        for p in self.positions:
            codes[p] = 2.0 if self.bits[p] else 3.0
        palette = list(_COLORS.values())
        cmap = plt.matplotlib.colors.ListedColormap(palette)
        ax.imshow(codes.reshape(rows, width), cmap=cmap, vmin=-0.5, vmax=3.5,
                  interpolation="nearest", aspect="equal")
        for index in range(self.num_bits):
            row, column = divmod(index, width)
            dark = codes[index] == 1.0
            color = "white" if dark else "black"
            ax.text(column - 0.42, row - 0.42, str(index), ha="left", va="top", fontsize=5,
                    color=color)
            numbers = ",".join(str(i + 1) for i in self.owners[index])
            ax.text(column, row + 0.12, numbers, ha="center", va="center",
                    fontsize=7 if len(numbers) <= 3 else 5, color=color, fontweight="bold")
        ax.set_xticks(np.arange(-0.5, width, 1), minor=True)
        ax.set_yticks(np.arange(-0.5, rows, 1), minor=True)
        ax.grid(which="minor", color="white", linewidth=1.5)
        ax.tick_params(which="both", length=0)
        ax.set_xticks([]), ax.set_yticks([])
        patches = [plt.matplotlib.patches.Patch(color=color, label=label)
                   for label, color in _COLORS.items()]
        ax.legend(handles=patches, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7,
                  frameon=False)
        headline = {"no key": "type a key", "absent": f"{self.key!r}: a bit is 0, never added",
                    "added": f"{self.key!r}: all bits set, added",
                    "false positive": f"{self.key!r}: all bits set, never added: a false positive"}
        ax.set_title(headline[self.verdict], fontsize=10)
        names = "   ".join(self.label(i) for i in range(len(self.added)))
        ax.set_xlabel(f"keys added: {names}" if names else "no key added yet", fontsize=8)
        ax.figure.tight_layout()
        return ax


def toy_view(added: Iterable[str], key: str = "", num_hashes: int = 3,
             hash_bits: int = 5) -> ToyView:
    """The article's filter after the ``added`` keys, and the k bits of ``key`` in it.

    Pure: the same keys always give the same view.  ``hash_bits`` is 1..7
    (m = 2**hash_bits up to 128 bits, small enough to draw every bit).

    >>> view = toy_view(["apple", "banana", "cherry", "date"], "lime")
    >>> view.num_bits, view.positions, view.verdict
    (32, (19, 7, 31), 'false positive')
    >>> [view.owners[p] for p in view.positions]  # date, banana, banana
    [(3,), (1,), (1,)]
    >>> toy_view(["apple"], "apple").verdict, toy_view(["apple"], "fig").verdict
    ('added', 'absent')
    """
    if not isinstance(key, str):
        raise TypeError(f"key must be str, not {type(key).__name__}")
    if not is_int(num_hashes) or not 1 <= num_hashes <= 16:
        raise ValueError(f"num_hashes must be an int in 1..16, got {num_hashes!r}")
    if not is_int(hash_bits) or not 1 <= hash_bits <= _MAX_HASH_BITS:
        raise ValueError(f"hash_bits must be an int in 1..{_MAX_HASH_BITS} (at most "
                         f"{2 ** _MAX_HASH_BITS} bits to draw), got {hash_bits!r}")
    added = _keys(added)
    bloom = SaltedBloomFilter(int(num_hashes), int(hash_bits))
    owners: list[list[int]] = [[] for _ in range(bloom.num_bits)]
    for number, added_key in enumerate(added):
        bloom.add(added_key)
        for p in dict.fromkeys(bloom.bit_indices(added_key)):
            owners[p].append(number)
    positions = tuple(bloom.bit_indices(key)) if key else ()
    return ToyView(key, added, int(num_hashes), int(hash_bits),
                   tuple(bool(b) for b in bloom.bits.to_bools()), positions,
                   tuple(tuple(o) for o in owners))


def toy(added: Iterable[str] = (), key: str = "", num_hashes: int = 3, hash_bits: int = 5):
    """The ipywidgets panel: a text box for a key, "add it", "empty the filter"; redraws as you type.

    Everything it shows comes from :func:`toy_view`.

    >>> panel = toy(["apple"], "pear")
    >>> box, add, empty = panel.children[0].children
    >>> add.click(); "2 pear" in panel.children[1].value
    True
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """
    import ipywidgets as widgets
    from IPython import get_ipython

    toy_view(added, key, num_hashes, hash_bits)  # check the arguments first
    keys = list(_keys(added))
    box = widgets.Text(value=key, placeholder="type a key", description="key",
                       continuous_update=True, layout=widgets.Layout(width="300px"))
    add_button = widgets.Button(description="add it", button_style="primary")
    empty_button = widgets.Button(description="empty the filter")
    words = widgets.HTML()
    figure = widgets.Output()

    def redraw(*_):
        view = toy_view(keys, box.value, num_hashes, hash_bits)
        words.value = f"<pre class='bloomedu-toy-text'>{html.escape(view.text())}</pre>"
        add_button.disabled = not box.value or box.value in keys
        with figure:
            if get_ipython() is not None:  # outside a kernel there is no output to clear
                figure.clear_output(wait=True)
            view.draw()
            plt.show()

    def add_key(_):
        if box.value and box.value not in keys:
            keys.append(box.value)
            redraw()

    def empty(_):
        keys.clear()
        redraw()

    box.observe(redraw, names="value")
    add_button.on_click(add_key)
    empty_button.on_click(empty)
    redraw()
    panel = widgets.VBox([widgets.HBox([box, add_button, empty_button]), words, figure])
    panel.add_class("bloomedu-toy")
    return panel
