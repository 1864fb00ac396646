"""A toy for one key: type it, see its k bits light up, add it, and watch a false positive borrow bits.

Step 5 of article 1 ("Filtro di Bloom: un elemento appartiene all'insieme?"),
one key at a time, as the interactive pages *Bloom Filters by Example* (Bill
Mill) and Jason Davies' Bloom filter demo show it: the library's
:class:`~bloomedu.BloomFilter` (m = 32 bits and k = 3 by default), the very
filter the site's toy page draws without a kernel (``docs/toy.md``: the same
positions for the same key, m and k), is drawn bit by bit; the key being typed
lights up its k bits, each set bit names the added keys behind it, and a key
never added whose bits are all set is a false positive that borrowed them.

The numbers come from :func:`toy_view`, a pure function (same keys, same
view; unit-tested); :func:`toy` is only the ipywidgets panel around it, with
controls for m and k, as :func:`bloomedu.teaching.explorer.explorer` is for m,
k and n.  The drawing keeps every label inside its figure, whatever the keys:
a long key is shortened, a long list of keys wrapped, and a character the
plotting font cannot draw (an emoji) is written as its escape, so the figure
keeps its size and matplotlib warns of no missing glyph.

Taught in ``notebooks/06_inside_the_filter.ipynb``; tested in
``tests/test_toy.py`` and ``tests/test_browser.py``.
"""

from __future__ import annotations

import functools
import html
from dataclasses import dataclass
from typing import Iterable

import matplotlib.pyplot as plt
import numpy as np

from ..core.checks import is_int
from ..core.filter import key_positions
from ..i18n import N_, gettext as _
from .plots import show

__all__ = ["ToyView", "toy_view", "toy"]

_MAX_BITS = 128  # every cell still has room for its index and its keys
_MAX_HASHES = 16
_COLORS = {N_("clear"): "#f2f2f2", N_("set"): "#1f4e79", N_("key, bit set"): "#f28e2b",
           N_("key, bit clear"): "#e15759"}
_COLUMNS = 16  # bits a row in the drawing
_SHOWN_KEY = 24  # characters of a key shown in a label; longer keys end in "..."
INDEX_FONTSIZE, OWNERS_FONTSIZE, SMALL_FONTSIZE = 8, 9, 7  # points: readable on a projector


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


def _shortened(key: str, width: int = _SHOWN_KEY) -> str:
    """A key cut to ``width`` characters, "..." marking the cut.

    >>> _shortened("apple"), _shortened("x" * 30, 10)
    ('apple', 'xxxxxxx...')
    """
    return key if len(key) <= width else key[:width - 3] + "..."


@functools.lru_cache(maxsize=None)
def _font_characters(path: str) -> frozenset:
    from matplotlib.ft2font import FT2Font

    return frozenset(FT2Font(path).get_charmap())


def drawable(text: str) -> str:
    """``text`` as matplotlib can draw it in its default font, without a missing-glyph warning.

    A character the font has no glyph for becomes its Python escape, and a ``$`` is
    escaped so that a key is never read as a formula.

    >>> drawable("pear"), drawable("🍐 $5")
    ('pear', '\\\\U0001f350 \\\\$5')
    """
    from matplotlib import font_manager

    font = font_manager.findfont(font_manager.FontProperties(family=plt.rcParams["font.family"]))
    known = _font_characters(font)
    shown = "".join(c if ord(c) in known and c.isprintable() else ascii(c)[1:-1] for c in text)
    return shown.replace("$", r"\$")


@dataclass(frozen=True)
class ToyView:
    """What the toy shows: the filter after ``added``, and ``key``'s k bits in it.

    ``owners[i]`` lists the added keys (by their place in ``added``) that set
    bit i; ``positions`` are the key's k bits (empty when no key is typed).
    """

    key: str
    added: tuple[str, ...]
    num_bits: int
    num_hashes: int
    bits: tuple[bool, ...]
    positions: tuple[int, ...]
    owners: tuple[tuple[int, ...], ...]

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
        return f"{index + 1} {_shortened(self.added[index])}"

    def borrowed_from(self) -> tuple[int, ...]:
        """The added keys (their places in ``added``), other than the key, behind its bits."""
        found = {i for p in self.positions for i in self.owners[p]}
        return tuple(i for i in sorted(found) if self.added[i] != self.key)

    def text(self) -> str:
        """The view in words: the filter, the key's k bits and who set each, the verdict."""
        names = ", ".join(self.label(i) for i in range(len(self.added))) or _("none yet")
        lines = [_("BloomFilter(num_bits={m}, num_hashes={k}): {m} bits, {set} set").format(
                     m=self.num_bits, k=self.num_hashes, set=sum(self.bits)),
                 _("keys added ({count}): {names}").format(count=len(self.added), names=names)]
        if not self.key:
            return "\n".join(lines + [_("type a key to see its bits")])
        key = repr(_shortened(self.key, 40))
        width = len(str(self.num_bits - 1))
        lines.append(_("key {key} -> bits {positions}").format(
            key=key, positions=", ".join(map(str, self.positions))))
        for p in dict.fromkeys(self.positions):  # a bit two of its hashes share, once
            who = ", ".join(self.label(i) for i in self.owners[p]) or _("no key")
            lines.append(_("  bit {bit} = {value}, set by {who}").format(
                bit=f"{p:>{width}}", value=int(self.bits[p]), who=who))
        verdict = self.verdict
        if verdict == "absent":
            zero = next(p for p in self.positions if not self.bits[p])
            lines.append(_("bit {bit} is 0: {key} was certainly never added").format(bit=zero, key=key))
        elif verdict == "added":
            lines.append(_("all {k} bits are set: {key} was added (and a key never added could "
                           "look just the same)").format(k=self.num_hashes, key=key))
        else:
            lines.append(_("all {k} bits are set, but {key} was never added: a false positive, on "
                           "bits borrowed from {lenders}").format(
                               k=self.num_hashes, key=key,
                               lenders=", ".join(self.label(i) for i in self.borrowed_from())))
        return "\n".join(lines)

    def alt(self) -> str:
        """The drawing in one sentence, for a reader who cannot see it (the figure's ``alt``).

        >>> print(toy_view(["apple", "banana", "cherry", "date", "elderberry"], "melon").alt())
        The toy's 32 bits in rows of 16, 12 of them set by 5 added keys; 'melon' lights bits 12, 10 and 8, all set by other keys (banana, date, elderberry): a false positive.
        """
        # one message for one of a thing and one for more: English's and Italian's plural rule
        head = (_("The toy's {m} bits in rows of {width}, {set} of them set by {count} added key")
                if len(self.added) == 1 else
                _("The toy's {m} bits in rows of {width}, {set} of them set by {count} added keys")
                ).format(m=self.num_bits, width=min(_COLUMNS, self.num_bits), set=sum(self.bits),
                         count=len(self.added))
        if not self.key:
            return head + _("; no key typed yet.")
        shown = list(map(str, dict.fromkeys(self.positions)))
        key = repr(_shortened(self.key, 40))
        if len(shown) == 1:
            head += _("; {key} lights bit {bit}").format(key=key, bit=shown[0])
        else:
            head += _("; {key} lights bits {bits} and {last}").format(
                key=key, bits=", ".join(shown[:-1]), last=shown[-1])
        verdict = self.verdict
        if verdict == "absent":
            zero = next(p for p in self.positions if not self.bits[p])
            return head + _(", and bit {bit} is 0: never added.").format(bit=zero)
        if verdict == "added":
            return head + _(", all set: it was added.")
        lenders = ", ".join(_shortened(self.added[i], 24) for i in self.borrowed_from())
        return head + _(", all set by other keys ({lenders}): a false positive.").format(lenders=lenders)

    def cell_owners(self, index: int) -> str:
        """The numbers drawn in bit ``index``: its setters', or the first and how many more.

        At most five characters, so that they fit in a cell: "3", "1,4", "12,18", "10+2".

        >>> view = toy_view(["a", "b", "c", "d", "e"], num_bits=1, num_hashes=4)
        >>> view.owners[0], view.cell_owners(0)
        ((0, 1, 2, 3, 4), '1+4')
        """
        numbers = [str(i + 1) for i in self.owners[index]]
        joined = ",".join(numbers)
        return joined if len(numbers) <= 2 and len(joined) <= 5 else f"{numbers[0]}+{len(numbers) - 1}"

    def draw(self, ax=None):
        """The bit array, 16 bits a row: set bits dark, the key's bits orange (set) or red (0).

        Each cell shows its index and the numbers of the added keys that set it.  Every
        label stays inside the figure (``fig.get_tightbbox`` is the figure's own box), so
        a notebook shows the drawing at its full size whatever the keys.
        """
        width = min(_COLUMNS, self.num_bits)
        rows = -(-self.num_bits // width)
        if ax is None:
            height = 1.5 + 0.45 * rows
            figure, ax = plt.subplots(figsize=(7.0, height))
            ax.figure.subplots_adjust(left=0.02, right=0.78, top=1 - 0.45 / height,
                                      bottom=0.75 / height)
        codes = np.full(rows * width, np.nan)  # cells past the last bit (m not a multiple of 16) stay blank
        codes[: self.num_bits] = self.bits
        for p in self.positions:
            codes[p] = 2.0 if self.bits[p] else 3.0
        cmap = plt.matplotlib.colors.ListedColormap(list(_COLORS.values())).with_extremes(bad="white")
        ax.imshow(codes.reshape(rows, width), cmap=cmap, vmin=-0.5, vmax=3.5,
                  interpolation="nearest", aspect="equal")
        for index in range(self.num_bits):
            row, column = divmod(index, width)
            color = "white" if codes[index] == 1.0 else "black"
            ax.text(column - 0.44, row - 0.44, str(index), ha="left", va="top",
                    fontsize=INDEX_FONTSIZE, color=color)
            owners = self.cell_owners(index)
            ax.text(column, row + 0.16, owners, ha="center", va="center", color=color,
                    fontsize=OWNERS_FONTSIZE if len(owners) <= 3 else SMALL_FONTSIZE,
                    fontweight="bold")
        ax.set_xticks(np.arange(-0.5, width, 1), minor=True)
        ax.set_yticks(np.arange(-0.5, rows, 1), minor=True)
        ax.grid(which="minor", color="white", linewidth=1.5)
        ax.tick_params(which="both", length=0)
        ax.set_xticks([]), ax.set_yticks([])
        patches = [plt.matplotlib.patches.Patch(color=color, label=_(label))
                   for label, color in _COLORS.items()]
        ax.legend(handles=patches, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
                  frameon=False)
        key = drawable(repr(_shortened(self.key)))
        headline = {"no key": _("type a key"), "absent": _("{key}: a bit is 0, never added"),
                    "added": _("{key}: all bits set, added"),
                    "false positive": _("{key}: all bits set, never added: a false positive")}
        ax.set_title(headline[self.verdict].format(key=key), fontsize=10)
        ax.set_xlabel(self._added_line(), fontsize=8)
        return ax

    def _added_line(self, width: int = 80, lines: int = 2) -> str:
        """The added keys under the drawing, in at most ``lines`` lines of ``width`` characters.

        >>> print(toy_view([f"key-{i}" for i in range(30)])._added_line(width=40))
        keys added: 1 key-0   2 key-1   3 key-2
        4 key-3   5 key-4   6 key-5   ... 24 more
        """
        if not self.added:
            return _("no key added yet")
        names = [drawable(_shortened(self.label(i), 18)) for i in range(len(self.added))]
        title = _("keys added:")
        done, line = [], title
        for number, name in enumerate(names):
            last = len(done) == lines - 1
            more = ("   " + _("... {count} more").format(count=len(names) - number)
                    if number + 1 < len(names) else "")
            if len(line) + 1 + len(name) + (len(more) if last else 0) <= width:
                line += " " + name if line == title else "   " + name
            elif not last:
                done.append(line)
                line = name
            else:
                line += more
                break
        return "\n".join(done + [line])


def toy_view(added: Iterable[str], key: str = "", *, num_bits: int = 32,
             num_hashes: int = 3) -> ToyView:
    """``BloomFilter(num_bits, num_hashes)`` after the ``added`` keys, and the k bits of ``key`` in it.

    Pure: the same keys always give the same view.  ``num_bits`` (m) is 1..128, small
    enough to draw every bit, and ``num_hashes`` (k) 1..16; the positions are
    :func:`~bloomedu.core.filter.key_positions`, those of the site's toy page.

    >>> view = toy_view(["apple", "banana", "cherry", "date", "elderberry"], "melon")
    >>> view.num_bits, view.positions, view.verdict
    (32, (12, 10, 8), 'false positive')
    >>> [view.owners[p] for p in view.positions]  # date, elderberry, banana
    [(3,), (4,), (1,)]
    >>> toy_view(["apple"], "apple").verdict, toy_view(["apple"], "fig").verdict
    ('added', 'absent')
    """
    if not isinstance(key, str):
        raise TypeError(f"key must be str, not {type(key).__name__}")
    if not is_int(num_bits) or not 1 <= num_bits <= _MAX_BITS:
        raise ValueError(f"num_bits must be an int in 1..{_MAX_BITS} (every bit is drawn), "
                         f"got {num_bits!r}")
    if not is_int(num_hashes) or not 1 <= num_hashes <= _MAX_HASHES:
        raise ValueError(f"num_hashes must be an int in 1..{_MAX_HASHES}, got {num_hashes!r}")
    added = _keys(added)
    m, k = int(num_bits), int(num_hashes)
    owners: list[list[int]] = [[] for _ in range(m)]
    for number, added_key in enumerate(added):
        for p in dict.fromkeys(key_positions(added_key, num_bits=m, num_hashes=k)):
            owners[p].append(number)
    positions = tuple(key_positions(key, num_bits=m, num_hashes=k)) if key else ()
    return ToyView(key, added, m, k, tuple(bool(o) for o in owners), positions,
                   tuple(tuple(o) for o in owners))


def toy(added: Iterable[str] = (), key: str = "", *, num_bits: int = 32, num_hashes: int = 3):
    """The ipywidgets panel: a text box for a key, "add it", "empty the filter", and m and k.

    It redraws as you type; changing m (8 to 128 bits) or k (1 to 8) places the same keys
    again.  Everything it shows comes from :func:`toy_view`.

    >>> panel = toy(["apple"], "pear")
    >>> (box, add, empty), (bits, hashes) = panel.children[0].children, panel.children[1].children
    >>> add.click(); "2 pear" in panel.children[2].value
    True
    >>> bits.value = 128; "128 bits" in panel.children[2].value
    True
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """
    import ipywidgets as widgets
    from IPython import get_ipython

    toy_view(added, key, num_bits=num_bits, num_hashes=num_hashes)  # check the arguments first
    keys = list(_keys(added))
    box = widgets.Text(value=key, placeholder=_("type a key"), description=_("key"),
                       continuous_update=True, layout=widgets.Layout(width="300px"))
    add_button = widgets.Button(description=_("add it"), button_style="primary")
    empty_button = widgets.Button(description=_("empty the filter"))
    sizes = sorted({8, 16, 32, 64, 100, 128, int(num_bits)})
    bits_choice = widgets.Dropdown(options=[(_("{m} bits").format(m=m), m) for m in sizes],
                                   value=int(num_bits),
                                   description="m",
                                   layout=widgets.Layout(width="180px"))
    hashes_slider = widgets.IntSlider(value=num_hashes, min=1, max=max(8, num_hashes),
                                      description="k", continuous_update=False)
    words = widgets.HTML()
    figure = widgets.Output()

    def redraw(*change):
        view = toy_view(keys, box.value, num_bits=bits_choice.value, num_hashes=hashes_slider.value)
        words.value = f"<pre class='bloomedu-toy-text'>{html.escape(view.text())}</pre>"
        add_button.disabled = not box.value or box.value in keys
        with figure:
            if get_ipython() is not None:  # outside a kernel there is no output to clear
                figure.clear_output(wait=True)
            view.draw()
            show(view.alt())

    def add_key(click):
        if box.value and box.value not in keys:
            keys.append(box.value)
            redraw()

    def empty(click):
        keys.clear()
        redraw()

    for control in (box, bits_choice, hashes_slider):
        control.observe(redraw, names="value")
    add_button.on_click(add_key)
    empty_button.on_click(empty)
    redraw()
    panel = widgets.VBox([widgets.HBox([box, add_button, empty_button]),
                          widgets.HBox([bits_choice, hashes_slider]), words, figure])
    panel.add_class("bloomedu-toy")
    return panel
