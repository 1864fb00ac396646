"""A live explorer: move m, k and n and watch the measured false-positive rate follow the theory.

Lesson 14.  Both articles ("Filtro di Bloom: un elemento appartiene
all'insieme?" and its sequel on sizing) state the rate of a Bloom filter as a
formula; here a student changes m (bits), k (hash functions) and n (items),
and sees at once a real :class:`~bloomedu.BloomFilter` measured on keys never
inserted, beside the classic formula (1 - e^(-kn/m))^k and the exact rate of
Bose et al. ("On the false-positive rate of Bloom filters", Information
Processing Letters 108(4), 2008), with the fill ratio and the optimal k.

The numbers come from :func:`explore`, a pure function (same arguments, same
numbers; unit-tested); :func:`explorer` is only the ipywidgets panel around it.
Two things the panel never hides: a point that measured no false positive at
all, which a log axis cannot draw, is shown as "0 of N" at its Wilson 95%
upper bound (:func:`~bloomedu.teaching.experiments.wilson_interval`); and the
curve over k always reaches the optimal k it prints, however many bits a key
has (every k up to 16, then steps of about a fifth).

Taught in ``notebooks/14_explorer.ipynb``; tested in
``tests/test_explorer.py`` and ``tests/test_browser.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import theory
from ..core.checks import MAX_HASHES, is_int
from ..core.filter import BloomFilter
from ..i18n import gettext as _
from .experiments import wilson_interval
from .plots import draw_measured_vs_theory, show

__all__ = ["KEY_TYPES", "Exploration", "make_keys", "explore", "explorer"]

KEY_TYPES = ("uint64", "url")
CURVE_AXES = ("k", "n")
SEED = 2026
MAX_CURVE_HASHES = MAX_HASHES  # any k a filter takes: the curve's grid thins out beyond DENSE_HASHES
DENSE_HASHES = 16  # the curve over k has every k up to here, then steps of about a fifth


def _positive_int(value, name: str, limit: int | None = None) -> int:
    if not is_int(value) or value <= 0 \
            or (limit is not None and value > limit):
        allowed = f"1..{limit}" if limit is not None else "a positive int"
        raise ValueError(f"{name} must be an int in {allowed}, got {value!r}")
    return int(value)


def _choice(value, name: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


def _rate(value: float) -> str:
    """A rate in 9 characters: 5 decimals, or 3 significant digits below 1e-4 (not a bare 0.00000).

    >>> _rate(0.0132), _rate(2.6e-09), _rate(0.0)
    ('  0.01320', ' 2.60e-09', '  0.00000')
    """
    return f"{value:9.5f}" if value >= 1e-4 or value == 0 else f"{value:9.2e}"


def _runs(values) -> str:
    """Sorted whole numbers with each run of three or more written first-last.

    >>> _runs([4, 5, 6, 7, 9, 10, 12])
    '4-7, 9, 10, 12'
    """
    groups = []
    for value in values:
        if groups and value == groups[-1][-1] + 1:
            groups[-1].append(value)
        else:
            groups.append([value])
    return ", ".join(f"{g[0]}-{g[-1]}" if len(g) >= 3 else ", ".join(map(str, g)) for g in groups)


def make_keys(key_type: str, count: int, seed: int, inserted: bool) -> np.ndarray | list[str]:
    """``count`` seeded keys of one type; inserted and query keys never coincide.

    ``"uint64"`` keys are random 64-bit integers, the top bit 0 for inserted
    keys and 1 for queries; ``"url"`` keys are URL strings whose path starts
    with ``/in/`` or ``/out/``.  So the false-positive rate is measured only on
    keys that were never inserted.  Key i does not depend on ``count``: a
    longer draw starts with the keys of a shorter one.

    >>> make_keys("uint64", 2, seed=1, inserted=False) >= 2**63
    array([ True,  True])
    >>> make_keys("url", 1, seed=1, inserted=True)
    ['https://site-5893.example.org/in/2a7acb66c267a60f']
    """
    _choice(key_type, "key_type", KEY_TYPES)
    count = _positive_int(count, "count")
    rng = np.random.default_rng([seed, int(inserted)])
    draws = rng.integers(0, 2**63, size=(count, 2), dtype=np.uint64)  # row i = key i
    values = draws[:, 0]
    if key_type == "uint64":
        return values if inserted else values | np.uint64(2**63)
    kind = "in" if inserted else "out"
    return [f"https://site-{host % 10_000:04d}.example.org/{kind}/{value:016x}"
            for value, host in draws.tolist()]


@dataclass(frozen=True)
class Exploration:
    """The numbers the explorer shows for one setting of m, k, n and key type.

    ``curve_x`` holds the values of k (``over="k"``) or n (``over="n"``); the
    three ``curve_*`` tuples hold the measured, classic and exact rates there.
    """

    num_bits: int
    num_hashes: int
    n: int
    key_type: str
    num_queries: int
    seed: int
    false_positives: int
    measured: float
    classic: float
    exact: float
    fill_ratio: float
    expected_fill_ratio: float
    optimal_k: int
    over: str
    curve_x: tuple[int, ...]
    curve_measured: tuple[float, ...]
    curve_classic: tuple[float, ...]
    curve_exact: tuple[float, ...]

    @property
    def standard_error(self) -> float:
        """Standard deviation of the measured rate: the queries' noise and the filter's own."""
        return theory.measured_rate_std(num_bits=self.num_bits, num_hashes=self.num_hashes, n=self.n,
                                        num_queries=self.num_queries)

    def curve_errors(self) -> list[float]:
        """Standard deviation of each measured point of the curve (see :attr:`standard_error`)."""
        if self.over == "k":
            shapes = [dict(num_hashes=k, n=self.n) for k in self.curve_x]
        else:
            shapes = [dict(num_hashes=self.num_hashes, n=n) for n in self.curve_x]
        return [theory.measured_rate_std(num_bits=self.num_bits, **shape, num_queries=self.num_queries)
                for shape in shapes]

    @property
    def zero_bound(self) -> float:
        """The Wilson 95% upper bound on a rate measured as 0 of ``num_queries``: what a
        zero still allows (about 3 / ``num_queries``)."""
        return wilson_interval(0, self.num_queries)[1]

    @property
    def zero_points(self) -> tuple[int, ...]:
        """The values of ``curve_x`` where no absent key at all was a false positive."""
        return tuple(x for x, got in zip(self.curve_x, self.curve_measured) if got == 0)

    def summary(self) -> str:
        """The current point as a small fixed-format table (what lesson 14 prints).

        A rate measured as zero is shown as "0 of N" with what it still allows:

        >>> print(explore(num_bits=50_000, num_hashes=8, n=1000, num_queries=5000).summary())
        m = 50000 bits, k = 8, n = 1000, m/n = 50.00, keys = uint64
        measured rate   0 of 5000 absent keys: below 0.00077 (Wilson 95% upper bound)
        classic formula 2.28e-07
        exact formula   2.28e-07
        fill ratio      0.1480  (expected 0.1479)
        optimal k       35
        no false positive at k = 4-16, 19, 23, 28, 34, 35: drawn at 0.00077, the upper bound
        """
        names = [_("measured rate"), _("classic formula"), _("exact formula"), _("fill ratio"),
                 _("optimal k")]
        width = max(16, max(map(len, names)) + 1)  # the English column: 16 characters
        row = dict(zip(("measured", "classic", "exact", "fill", "best"),
                       (name.ljust(width) for name in names)))
        if self.false_positives:
            measured = row["measured"] + _("{rate}  ({count} of {queries} absent keys)").format(
                rate=f"{self.measured:.5f}", count=self.false_positives, queries=self.num_queries)
        else:
            measured = row["measured"] + _("0 of {queries} absent keys: below {bound} (Wilson 95% "
                                           "upper bound)").format(queries=self.num_queries,
                                                                  bound=f"{self.zero_bound:.5f}")
        lines = [
            _("m = {m} bits, k = {k}, n = {n}, m/n = {ratio}, keys = {keys}").format(
                m=self.num_bits, k=self.num_hashes, n=self.n, ratio=f"{self.num_bits / self.n:.2f}",
                keys=self.key_type),
            measured,
            row["classic"] + _rate(self.classic).strip(),
            row["exact"] + _rate(self.exact).strip(),
            row["fill"] + _("{fill}  (expected {expected})").format(
                fill=f"{self.fill_ratio:.4f}", expected=f"{self.expected_fill_ratio:.4f}"),
            row["best"] + str(self.optimal_k),
        ]
        if self.zero_points:
            lines.append(_("no false positive at {axis} = {points}: drawn at {bound}, the upper "
                           "bound").format(axis=self.over, points=_runs(self.zero_points),
                                           bound=f"{self.zero_bound:.5f}"))
        return "\n".join(lines)

    def describe(self) -> str:
        """What :meth:`plot` draws, in words: the figure's text alternative (``plots.show``).

        >>> print(explore(num_bits=10_000, num_hashes=4, n=1000, num_queries=2000, seed=1).describe())
        False-positive rate against k, from 1 to 12 hash functions, for m = 10,000 bits and
        n = 1,000 items, on a log scale: measured points with 2-standard-deviation bars beside the
        classic and exact formulas, whose best k is 7; the star is the current k = 4, measured
        0.0090 (18 of 2,000 absent keys).
        >>> print(explore(num_bits=8000, num_hashes=5, n=900, over="n", num_queries=500, seed=1).describe())
        False-positive rate against n, from 112 to 1,800 items inserted, for m = 8,000 bits and
        k = 5 hash functions, on a log scale: measured points with 2-standard-deviation bars beside
        the classic and exact formulas, the rate rising as n grows; the star is the current n = 900,
        measured 0.0140 (7 of 500 absent keys); open triangles at 0.00762 are points with no false
        positive at all, drawn at their 95% upper bound.
        """
        first, last = self.curve_x[0], self.curve_x[-1]
        if self.over == "k":
            axis = _("k, from {first} to {last} hash functions, for m = {m} bits and n = {n} "
                     "items").format(first=f"{first:,}", last=f"{last:,}", m=f"{self.num_bits:,}",
                                     n=f"{self.n:,}")
            shape = _("whose best k is {k}").format(k=self.optimal_k)
            current = f"k = {self.num_hashes}"
        else:
            axis = _("n, from {first} to {last} items inserted, for m = {m} bits and k = {k} hash "
                     "functions").format(first=f"{first:,}", last=f"{last:,}",
                                         m=f"{self.num_bits:,}", k=self.num_hashes)
            shape, current = _("the rate rising as n grows"), f"n = {self.n:,}"
        if self.false_positives:
            measured = _("measured {rate} ({count} of {queries} absent keys)").format(
                rate=f"{self.measured:.4f}", count=f"{self.false_positives:,}",
                queries=f"{self.num_queries:,}")
        else:
            measured = _("measured 0 of {queries} absent keys").format(queries=f"{self.num_queries:,}")
        zeros = ""
        if self.zero_points:
            zeros = _("; open triangles at {bound} are points with no false positive at all, drawn "
                      "at their 95% upper bound").format(bound=f"{self.zero_bound:.5f}")
        return _("False-positive rate against {axis}, on a log scale: measured points with "
                 "2-standard-deviation bars beside the classic and exact formulas, {shape}; the "
                 "star is the current {current}, {measured}{zeros}.").format(
                     axis=axis, shape=shape, current=current, measured=measured, zeros=zeros)

    def curve_table(self) -> str:
        """The curve behind the plot, one row per point."""
        rows = [f"{self.over:>7} {_('measured'):>9} {_('classic'):>9} {_('exact'):>9}"]
        for x, got, classic, exact in zip(self.curve_x, self.curve_measured,
                                          self.curve_classic, self.curve_exact):
            mark = _("  <- current") if x == (self.num_hashes if self.over == "k" else self.n) else ""
            rows.append(f"{x:>7} {_rate(got)} {_rate(classic)} {_rate(exact)}{mark}")
        return "\n".join(rows)

    def plot(self, ax=None):
        """Measured rate (bars: 2 standard deviations) against both formulas; the current point starred.

        A point measured as 0, which a log axis cannot draw, is an open triangle at
        :attr:`zero_bound`, labelled "0 of N"; the star of a current point measured as 0
        sits there too.
        """
        current = self.num_hashes if self.over == "k" else self.n
        errors = [2 * sd for sd in self.curve_errors()]
        fixed = (f"m = {self.num_bits}, n = {self.n}" if self.over == "k"
                 else f"m = {self.num_bits}, k = {self.num_hashes}")
        ax = draw_measured_vs_theory(
            self.curve_x, self.curve_measured,
            {_("classic (1 - e^(-kn/m))^k"): self.curve_classic, _("exact"): self.curve_exact},
            errors=errors, mark=(current, self.measured or self.zero_bound), ax=ax,
            xlabel=_("k (hash functions)") if self.over == "k" else _("n (items inserted)"),
            title=_("False-positive rate, {fixed}, {keys} keys").format(fixed=fixed,
                                                                        keys=self.key_type))
        if self.zero_points:
            ax.plot(self.zero_points, [self.zero_bound] * len(self.zero_points), "v", color="black",
                    markerfacecolor="none", markersize=6, linestyle="none",
                    label=_("0 of {queries}: below {bound} (95%)").format(
                        queries=f"{self.num_queries:,}", bound=f"{self.zero_bound:.1e}"))
            ax.legend()
        return ax


def _curve_points(over: str, num_bits: int, num_hashes: int, n: int, max_k: int) -> list[int]:
    """The x values of the curve: over k, from 1 to the largest of max_k, k and the optimal k
    (every k up to DENSE_HASHES, then about a fifth apart, with k and the optimum on it); over
    n, 16 steps from n/8 to 2n, with n on it.

    >>> _curve_points("k", 10_000, 4, 1000, 12) == list(range(1, 13))
    True
    >>> _curve_points("k", 50_000, 4, 1000, 12)[14:]
    [15, 16, 19, 23, 28, 34, 35]
    """
    if over == "n":
        return sorted({n} | {max(1, round(n * f)) for f in np.linspace(0.125, 2.0, 16)})
    best = theory.optimal_num_hashes(num_bits=num_bits, n=n)
    top = max(max_k, num_hashes, best)
    points = set(range(1, min(top, DENSE_HASHES) + 1)) | {num_hashes, best, top}
    step = DENSE_HASHES
    while step < top:
        step = max(step + 1, round(step * 1.2))
        points.add(min(step, top))
    return sorted(points)


def explore(*, num_bits: int, num_hashes: int, n: int, key_type: str = "uint64", over: str = "k",
            num_queries: int = 20_000, seed: int = SEED, max_k: int = 12) -> Exploration:
    """Measure a filter of m bits and k hashes holding n keys, and a curve over k or n.

    The filter is real: n seeded keys go in with ``add_many``, ``num_queries``
    keys never inserted are asked with ``contains_many``.  Over k, one filter
    per point holds the same n keys, the points running from 1 to the largest
    of ``max_k``, k and the optimal k (every k up to 16, then about a fifth
    apart); over n, one filter with this k is filled step by step to 2n.  Same
    arguments, same numbers.  Limits: m up to 2**32, k and ``max_k`` up to
    1024 (any k a filter takes), n and the queries up to 10,000,000.  A redraw
    costs about n times the sum of the curve's k in hash positions: well under
    a second on the panel's ranges (m up to 100,000, n up to 20,000).

    >>> e = explore(num_bits=10_000, num_hashes=7, n=1000, num_queries=5000)
    >>> e.optimal_k, e.curve_x[:3], round(e.classic, 4)
    (7, (1, 2, 3), 0.0082)
    >>> abs(e.measured - e.exact) < 4 * e.standard_error
    True
    >>> wide = explore(num_bits=50_000, num_hashes=4, n=1000, num_queries=5000)
    >>> wide.optimal_k, wide.curve_x[-1]
    (35, 35)
    """
    m = _positive_int(num_bits, "num_bits", 2**32)
    k = _positive_int(num_hashes, "num_hashes", MAX_CURVE_HASHES)
    n = _positive_int(n, "n", 10_000_000)
    queries_count = _positive_int(num_queries, "num_queries", 10_000_000)
    max_k = _positive_int(max_k, "max_k", MAX_CURVE_HASHES)
    _choice(key_type, "key_type", KEY_TYPES)
    _choice(over, "over", CURVE_AXES)
    xs = _curve_points(over, m, k, n, max_k)
    queries = make_keys(key_type, queries_count, seed, inserted=False)
    inserted = make_keys(key_type, max(xs) if over == "n" else n, seed, inserted=True)

    measured, bits_at_n = [], None
    if over == "k":
        for kk in xs:
            bloom = BloomFilter(m, kk)
            bloom.add_many(inserted)
            measured.append(int(bloom.contains_many(queries).sum()))
            if kk == k:
                bits_at_n = bloom.bits_set()
    else:
        bloom, done = BloomFilter(m, k), 0
        for count in xs:
            bloom.add_many(inserted[done:count])
            done = count
            measured.append(int(bloom.contains_many(queries).sum()))
            if count == n:
                bits_at_n = bloom.bits_set()
    current = xs.index(k if over == "k" else n)
    shapes = ([dict(num_bits=m, num_hashes=kk, n=n) for kk in xs] if over == "k"
              else [dict(num_bits=m, num_hashes=k, n=nn) for nn in xs])
    return Exploration(
        num_bits=m, num_hashes=k, n=n, key_type=key_type, num_queries=queries_count, seed=seed,
        false_positives=measured[current], measured=measured[current] / queries_count,
        classic=theory.false_positive_rate(num_bits=m, num_hashes=k, n=n),
        exact=theory.exact_false_positive_rate(num_bits=m, num_hashes=k, n=n),
        fill_ratio=bits_at_n / m,
        expected_fill_ratio=theory.bit_vector_false_positive_rate(num_bits=m, n=k * n),
        optimal_k=theory.optimal_num_hashes(num_bits=m, n=n), over=over, curve_x=tuple(xs),
        curve_measured=tuple(count / queries_count for count in measured),
        curve_classic=tuple(theory.false_positive_rate(**shape) for shape in shapes),
        curve_exact=tuple(theory.exact_false_positive_rate(**shape) for shape in shapes))


def explorer(*, num_bits: int = 10_000, num_hashes: int = 4, n: int = 1000, key_type: str = "uint64",
             over: str = "k", num_queries: int = 20_000, seed: int = SEED):
    """The ipywidgets panel: sliders for m, k, n, a key type and a curve axis; redraws on release.

    Everything it shows comes from :func:`explore`.  The k slider reaches at least the
    optimal k the panel prints, so the student can move to it.

    >>> panel = explorer()
    >>> [child.description for child in panel.children[0].children]
    ['m (bits)', 'k (hashes)', 'n (items)', 'keys', 'curve over']
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """
    import ipywidgets as widgets
    from IPython import get_ipython

    explore(num_bits=num_bits, num_hashes=num_hashes, n=n, key_type=key_type, over=over,
            num_queries=num_queries, seed=seed)  # checks the arguments first
    style = {"description_width": "90px"}
    common = dict(continuous_update=False, style=style, layout=widgets.Layout(width="420px"))
    controls = [
        widgets.IntSlider(value=num_bits, min=min(100, num_bits), max=max(100_000, num_bits), step=100,
                          description=_("m (bits)"), **common),
        widgets.IntSlider(value=num_hashes, min=1, max=max(DENSE_HASHES, num_hashes),
                          description=_("k (hashes)"), **common),
        widgets.IntSlider(value=n, min=min(10, n), max=max(20_000, n), step=10,
                          description=_("n (items)"), **common),
        widgets.ToggleButtons(options=[(_("uint64 ints"), "uint64"), (_("URL strings"), "url")],
                              value=key_type, description=_("keys"), style=style),
        widgets.ToggleButtons(options=[("k", "k"), ("n", "n")], value=over,
                              description=_("curve over"), style=style),
    ]
    numbers = widgets.HTML()
    figure = widgets.Output()

    def redraw(*change):
        result = explore(num_bits=controls[0].value, num_hashes=controls[1].value,
                         n=controls[2].value, key_type=controls[3].value, over=controls[4].value,
                         num_queries=num_queries, seed=seed)
        numbers.value = f"<pre class='bloomedu-explorer-numbers'>{result.summary()}</pre>"
        controls[1].max = max(DENSE_HASHES, result.num_hashes, result.optimal_k)  # k reaches the optimum
        with figure:
            if get_ipython() is not None:  # outside a kernel there is no output to clear
                figure.clear_output(wait=True)
            result.plot()
            show(result.describe())  # the PNG with its text alternative, the figure closed

    for control in controls:
        control.observe(redraw, names="value")
    redraw()
    panel = widgets.VBox([widgets.VBox(controls), numbers, figure])
    panel.add_class("bloomedu-explorer")
    return panel
