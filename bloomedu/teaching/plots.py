"""Plot helpers, so a lesson's plot cell stays one or two lines.

Every figure has a fixed size and is drawn as PNG; each helper returns the
matplotlib Axes it drew on, and the lesson ends the cell with ``show(alt)``: the
figure as a PNG that carries ``alt``, a sentence saying what the figure shows, for
a reader who cannot see it (the course site and the slides put it in the image's
``alt``; nbval compares it, since it is also the output's plain text).

Taught in every lesson; tested in the doctests here.
"""

from __future__ import annotations

import io

import matplotlib.pyplot as plt
from matplotlib.layout_engine import ConstrainedLayoutEngine
import numpy as np

from ..i18n import N_, gettext as _

__all__ = ["DescribedFigure", "show", "decorate", "new_axes", "draw_bits", "draw_measured_vs_theory",
           "draw_bit_groups",
           "draw_bytes_per_item", "draw_rate_sweep"]

FIGSIZE = (7.0, 3.6)
_WORDS = ("title", "xlabel", "ylabel")  # decorate's options a student reads


MIN_ALT_WORDS = 6


class DescribedFigure:
    """A drawn figure as a notebook shows it: its PNG and the text that says what it shows.

    Jupyter stores both: the PNG with ``alt`` in its metadata (the site and the slides
    write it into the ``<img>``), and the text as the plain-text form of the output.

    >>> f = DescribedFigure(b"\\x89PNG", "Two bars: the filter uses far less memory than the set.")
    >>> f
    Figure: Two bars: the filter uses far less memory than the set.
    >>> f._repr_png_()[1]
    {'alt': 'Two bars: the filter uses far less memory than the set.'}
    """

    def __init__(self, png: bytes, alt: str):
        self.png, self.alt = bytes(png), check_alt(alt)

    def _repr_png_(self):
        return self.png, {"alt": self.alt}

    def __repr__(self) -> str:
        return _("Figure: {alt}").format(alt=self.alt)


def check_alt(alt) -> str:
    """``alt`` if it is a sentence of words, else a ``ValueError`` naming it.

    >>> check_alt("fig1.png")
    Traceback (most recent call last):
    ...
    ValueError: alt must say in words what the figure shows (at least 6 words), got 'fig1.png'
    """
    if not isinstance(alt, str):
        raise TypeError(f"alt must be a str, got {type(alt).__name__}")
    if len(alt.split()) < MIN_ALT_WORDS:
        raise ValueError(f"alt must say in words what the figure shows "
                         f"(at least {MIN_ALT_WORDS} words), got {alt!r}")
    return " ".join(alt.split())


def show(alt: str, fig=None) -> DescribedFigure | None:
    """Show ``fig`` (the current figure by default) as a PNG whose text alternative is ``alt``.

    The figure is closed, so Jupyter does not draw it a second time. In a notebook the
    figure is displayed; outside one (a script, a doctest) it is only returned.

    >>> ax = new_axes(); _ = ax.plot([0, 1], [1, 0])
    >>> show("A line falling from 1 to 0 as x goes from 0 to 1.")
    Figure: A line falling from 1 to 0 as x goes from 0 to 1.
    >>> plt.get_fignums()
    []
    """
    alt = _(check_alt(alt))  # a lesson's sentence: the catalog may hold its Italian
    fig = fig if fig is not None else plt.gcf()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    figure = DescribedFigure(buffer.getvalue(), alt)
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return figure
    if get_ipython() is None:
        return figure
    display(figure)
    return None


def new_axes(figsize: tuple[float, float] = FIGSIZE):
    """A fresh figure with one Axes of the lessons' standard size.

    >>> ax = new_axes(); ax.figure.get_size_inches().tolist()
    [7.0, 3.6]
    >>> plt.close("all")
    """
    figure, ax = plt.subplots(figsize=figsize)
    return ax


def decorate(ax=None, legend=None, **options):
    """Set Axes properties in one call (``title``, ``xlabel``, ``yscale``, ...) and add a legend.

    The title, the axes' labels and the legend's are looked up in the library's catalog
    (:mod:`bloomedu.i18n`), so the Italian edition can show them in Italian from the same code.
    ``legend`` is a dict of options for the legend (``loc``, ``fontsize``, ``ncols``, ...),
    passed to matplotlib's ``ax.legend`` with the translated labels (and a translated
    ``title``); a lesson sets them here rather than calling ``ax.legend`` itself, which would
    redraw the labels untranslated.  ``legend=False`` draws no legend (one panel of two may
    leave it to the other).
    A figure laid out with ``layout="constrained"`` keeps that layout.

    >>> ax = new_axes(); ax.plot([1, 2], [3, 4], label="line")
    [<matplotlib.lines.Line2D object at ...>]
    >>> decorate(ax, title="t", xlabel="n", yscale="log", legend=dict(loc="lower right")) is ax
    True
    >>> decorate(ax, legend=dict(fontsize=7, title="lines")).get_legend().get_title().get_text()
    'lines'
    >>> [t.get_fontsize() for t in ax.get_legend().get_texts()]
    [7.0]
    >>> plt.close("all")
    """
    if legend is not None and legend is not False and not isinstance(legend, dict):
        raise TypeError(f"legend must be a dict of ax.legend options, such as "
                        f"dict(loc='lower right'), or False for none, got {legend!r}")
    if legend and {"labels", "handles"} & set(legend):
        raise ValueError(f"legend must not set labels or handles (decorate passes the plot's "
                         f"labels, translated), got {sorted(legend)}")
    ax = ax if ax is not None else plt.gca()
    ax.set(**{name: _(value) if name in _WORDS and isinstance(value, str) else value
              for name, value in options.items()})
    handles, labels = ax.get_legend_handles_labels()
    if handles and legend is not False:
        legend = dict(legend or {})
        if isinstance(legend.get("title"), str):
            legend["title"] = _(legend["title"])
        ax.legend(handles, [_(label) for label in labels], **legend)
    if not isinstance(ax.figure.get_layout_engine(), ConstrainedLayoutEngine):
        ax.figure.tight_layout()
    return ax


def draw_bits(bits, highlight=(), width: int = 64, ax=None, title: str | None = None,
              indices: bool = False):
    """Draw a bit array as a grid of cells, ``width`` per row; highlighted bits in orange.

    ``bits`` is a :class:`~bloomedu.core.bits.BitArray` or any sequence of 0/1. With
    ``indices=True`` each row is labelled with the index of its first bit and the columns with
    their offset in the row, so a bit's index is its row label plus its column label.

    >>> from bloomedu.core.bits import BitArray
    >>> b = BitArray(16, word_bits=8); b.set(3)
    >>> ax = draw_bits(b, highlight=[3], width=8)
    >>> ax = draw_bits(b, highlight=[3], width=8, indices=True)
    >>> [label.get_text() for label in ax.get_yticklabels()]
    ['0', '8']
    >>> plt.close("all")
    """
    values = bits.to_bools() if hasattr(bits, "to_bools") else np.asarray(bits, dtype=bool)
    rows = -(-values.size // width)
    grid = np.full(rows * width, np.nan)
    grid[: values.size] = values
    highlight = [i for i in highlight if 0 <= i < values.size]
    grid[highlight] = 2.0
    if ax is None:
        ax = new_axes((7.0, max(1.0, 7.0 * rows / width + 0.6)))
    cmap = plt.matplotlib.colors.ListedColormap(["#f2f2f2", "#1f4e79", "#f28e2b"])
    ax.imshow(grid.reshape(rows, width), cmap=cmap, vmin=0, vmax=2, interpolation="nearest",
              aspect="equal")
    if indices:
        columns = range(0, width, max(1, width // 8))
        ax.set_xticks(list(columns), [str(c) for c in columns], fontsize=7)
        ax.set_yticks(range(rows), [str(r * width) for r in range(rows)], fontsize=7)
        ax.tick_params(length=0)
        ax.set_xlabel(_("+ column"), fontsize=8)
    else:
        ax.set_xticks([]), ax.set_yticks([])
    if title:
        ax.set_title(_(title))
    ax.figure.tight_layout()
    return ax


def draw_measured_vs_theory(x, measured, curves: dict, errors=None, mark=None, ax=None,
                            xlabel: str = "", ylabel: str = N_("false-positive rate"),
                            title: str | None = None, yscale: str = "log"):
    """Measured rates as points (with error bars) over one or more theory curves, log y.

    ``curves`` maps a label to y values over ``x``; ``mark=(x, y)`` stars one
    point (the explorer's current setting).  Zero measurements are not drawn on
    a log axis.

    >>> ax = draw_measured_vs_theory([1, 2, 3], [0.2, 0.1, 0.0], {"theory": [0.21, 0.1, 0.06]},
    ...                              errors=[0.01, 0.01, 0.01], mark=(2, 0.1), xlabel="k")
    >>> [line.get_label() for line in ax.get_lines()][:1]
    ['theory']
    >>> plt.close("all")
    """
    ax = ax if ax is not None else new_axes()
    x = np.asarray(x, dtype=float)
    for (label, y), style in zip(curves.items(), ["-", "--", ":", "-."] * len(curves)):
        ax.plot(x, y, style, label=label)
    y = np.asarray(measured, dtype=float)
    shown = y > 0 if yscale == "log" else np.ones_like(y, dtype=bool)
    yerr = None if errors is None else np.minimum(np.asarray(errors, dtype=float), y * 0.999)[shown]
    ax.errorbar(x[shown], y[shown], yerr=yerr, fmt="o", color="black", markersize=4,
                capsize=2, label=_("measured"))
    if mark is not None and (mark[1] > 0 or yscale != "log"):
        ax.plot([mark[0]], [mark[1]], marker="*", markersize=16, color="#f28e2b",
                linestyle="none", label=_("current"))
    return decorate(ax, xlabel=xlabel, ylabel=ylabel, yscale=yscale,
                    **({"title": title} if title else {}))


GROUP_COLORS = ("#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948")


OUTLINE_COLORS = ("#e15759", "#000000")


def draw_bit_groups(bits, groups, width: int = 16, ax=None, title: str | None = None,
                    colors=GROUP_COLORS, numbers: bool = True, outlined=None):
    """Draw a bit array with chosen cells coloured by group, and a legend naming the groups.

    ``groups`` maps a label to bit indices (for example the k bits of one key).
    Clear bits are light grey, set bits dark blue, then each group paints its
    cells in its own colour (a later group over an earlier one).  With
    ``numbers`` every cell shows its index, as in a walkthrough on a small m.
    ``outlined`` maps a label to bit indices whose cells get a red frame (a second label, black),
    named in the legend too (lesson 12: Guava's padding beyond m).  The legend's labels are
    looked up in the catalog, as :func:`decorate` does.

    >>> from bloomedu.core.bits import BitArray
    >>> b = BitArray(32); b.set(3); b.set(20)
    >>> ax = draw_bit_groups(b, {"key A": [3, 20], "key B": [7]})
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['clear', 'set', 'key A', 'key B']
    >>> ax = draw_bit_groups(b, {"key A": [3, 20]}, outlined={"beyond m = 30": [30, 31]})
    >>> [t.get_text() for t in ax.get_legend().get_texts()], len(ax.patches)
    (['clear', 'set', 'key A', 'beyond m = 30'], 2)
    >>> plt.close("all")
    """
    outlined = dict(outlined or {})
    if len(outlined) > len(OUTLINE_COLORS):
        raise ValueError(f"outlined must have at most {len(OUTLINE_COLORS)} entries (one per "
                         f"colour), got {len(outlined)}")
    values = bits.to_bools() if hasattr(bits, "to_bools") else np.asarray(bits, dtype=bool)
    if len(groups) > len(colors):
        raise ValueError(f"groups must have at most {len(colors)} entries (one per colour), "
                         f"got {len(groups)}")
    rows = -(-values.size // width)
    grid = np.full(rows * width, np.nan)
    grid[: values.size] = values
    for code, indices in enumerate(groups.values(), start=2):
        indices = [i for i in indices if 0 <= i < values.size]
        grid[indices] = code
    if ax is None:
        ax = new_axes((7.0, max(1.0, 7.0 * rows / width + 0.8)))
    palette = ["#f2f2f2", "#1f4e79", *colors[: len(groups)]]
    cmap = plt.matplotlib.colors.ListedColormap(palette)
    ax.imshow(grid.reshape(rows, width), cmap=cmap, vmin=-0.5, vmax=len(palette) - 0.5,
              interpolation="nearest", aspect="equal")
    if numbers:
        for index in range(values.size):
            row, column = divmod(index, width)
            dark = grid[index] == 1
            ax.text(column, row, str(index), ha="center", va="center", fontsize=6,
                    color="white" if dark else "black")
    ax.set_xticks(np.arange(-0.5, width, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, rows, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=1.0)
    ax.tick_params(which="both", length=0)
    ax.set_xticks([]), ax.set_yticks([])
    patches = [plt.matplotlib.patches.Patch(color=color, label=label) for color, label in
               zip(palette, [_("clear"), _("set"), *map(_, groups)])]
    for color, (label, indices) in zip(OUTLINE_COLORS, outlined.items()):
        for index in indices:
            row, column = divmod(index, width)
            ax.add_patch(plt.Rectangle((column - 0.5, row - 0.5), 1, 1, fill=False,
                                       edgecolor=color, linewidth=2))
        patches.append(plt.matplotlib.lines.Line2D(
            [], [], marker="s", linestyle="none", markerfacecolor="none", markeredgecolor=color,
            markeredgewidth=2, label=_(label)))
    ax.legend(handles=patches, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
              frameon=False)
    if title:
        ax.set_title(_(title), fontsize=10)
    ax.figure.tight_layout()
    return ax


def draw_bytes_per_item(sizes, measured: dict, reference: float, reference_label: str,
                        ax=None, title: str | None = None):
    """Bytes per item against n for each measured store, with a dashed reference level.

    ``measured`` maps a label to the total bytes at each n in ``sizes``
    (lessons 01 and 02: tracemalloc against the article's 36 or 4 bytes per ID).

    >>> ax = draw_bytes_per_item([10, 100], {"dict": [800, 9000]}, 36, "article")
    >>> [float(y) for y in ax.get_lines()[0].get_ydata()]
    [80.0, 90.0]
    >>> plt.close("all")
    """
    ax = ax if ax is not None else new_axes()
    per_item = {label: [b / n for b, n in zip(total, sizes)] for label, total in measured.items()}
    for (label, curve), style in zip(per_item.items(), ["o-", "s-", "^-", "v-", "d-"]):
        ax.semilogx(sizes, curve, style, label=label)
    ax.axhline(reference, color="k", linestyle="--", label=reference_label)
    top = 1.6 * max(reference, *(max(curve) for curve in per_item.values()))
    decorate(ax, xlabel=_("n, items stored"), ylabel=_("bytes per item"), ylim=(0, top), title=title)
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, [_(label) for label in labels], loc="upper center", ncol=2, fontsize=9)
    return ax


def draw_rate_sweep(x, rows, ax=None, xlabel: str = "", title: str | None = None,
                    optimum: float | None = None):
    """Measured false-positive rates with their Wilson 95% band, beside the classic and exact rates.

    ``rows`` are :class:`~bloomedu.teaching.experiments.SweepRow` (anything with
    ``rate``, ``low``, ``high``, ``classic``, ``exact``), one per value in
    ``x``; ``optimum`` draws a dotted vertical line (lesson 07: k = (m/n) ln 2).
    Zero measurements are not drawn on the log axis; their band still is, from
    the bottom of the plot.

    >>> from types import SimpleNamespace as Row
    >>> rows = [Row(rate=r, low=r / 2, high=r * 2, classic=r, exact=r) for r in (0.1, 0.01)]
    >>> ax = draw_rate_sweep([1, 2], rows, xlabel="k", optimum=1.5)
    >>> [line.get_label() for line in ax.get_lines()]
    ['exact', 'classic', 'measured', '(m/n) ln 2 = 1.50']
    >>> plt.close("all")
    """
    ax = ax if ax is not None else new_axes()
    x = np.asarray(x, dtype=float)
    column = lambda name: np.array([getattr(row, name) for row in rows], dtype=float)
    rate, low, exact = column("rate"), column("low"), column("exact")
    shown = np.concatenate([low[low > 0], rate[rate > 0], exact[exact > 0]])
    floor = shown.min() / 3 if shown.size else 1e-12  # a band from 0 ends at the bottom of the plot
    ax.fill_between(x, np.maximum(low, floor), column("high"), color="#9ecae1",
                    alpha=0.6, label=_("Wilson 95%"), linewidth=0)
    ax.plot(x, exact, "-", color="#1f4e79", label=_("exact"))
    ax.plot(x, column("classic"), "--", color="#e15759", label=_("classic"))
    ax.plot(x[rate > 0], rate[rate > 0], "o", color="black", markersize=3.5, label=_("measured"))
    if optimum is not None:
        ax.axvline(optimum, color="#59a14f", linestyle=":", label=f"(m/n) ln 2 = {optimum:.2f}")
    return decorate(ax, xlabel=xlabel, ylabel=_("false-positive rate p"), yscale="log",
                    **({"title": title} if title else {}))
