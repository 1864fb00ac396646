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

Taught in ``notebooks/14_explorer.ipynb``; tested in
``tests/test_explorer.py`` and ``tests/test_browser.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import theory
from ..core.checks import is_int
from ..core.filter import BloomFilter
from .plots import draw_measured_vs_theory

__all__ = ["KEY_TYPES", "Exploration", "make_keys", "explore", "explorer"]

KEY_TYPES = ("uint64", "url")
CURVE_AXES = ("k", "n")
SEED = 2026
MAX_CURVE_HASHES = 64  # the curve over k builds one filter per k: well under MAX_HASHES


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
        return theory.measured_rate_std(self.num_bits, self.n, self.num_hashes, self.num_queries)

    def curve_errors(self) -> list[float]:
        """Standard deviation of each measured point of the curve (see :attr:`standard_error`)."""
        if self.over == "k":
            return [theory.measured_rate_std(self.num_bits, self.n, k, self.num_queries)
                    for k in self.curve_x]
        return [theory.measured_rate_std(self.num_bits, n, self.num_hashes, self.num_queries)
                for n in self.curve_x]

    def summary(self) -> str:
        """The current point as a small fixed-format table (what lesson 14 prints)."""
        lines = [
            f"m = {self.num_bits} bits, k = {self.num_hashes}, n = {self.n}, "
            f"m/n = {self.num_bits / self.n:.2f}, keys = {self.key_type}",
            f"measured rate   {self.measured:.5f}  ({self.false_positives} of "
            f"{self.num_queries} absent keys)",
            f"classic formula {self.classic:.5f}",
            f"exact formula   {self.exact:.5f}",
            f"fill ratio      {self.fill_ratio:.4f}  (expected {self.expected_fill_ratio:.4f})",
            f"optimal k       {self.optimal_k}",
        ]
        return "\n".join(lines)

    def curve_table(self) -> str:
        """The curve behind the plot, one row per point."""
        rows = [f"{self.over:>7} {'measured':>9} {'classic':>9} {'exact':>9}"]
        for x, got, classic, exact in zip(self.curve_x, self.curve_measured,
                                          self.curve_classic, self.curve_exact):
            mark = "  <- current" if x == (self.num_hashes if self.over == "k" else self.n) else ""
            rows.append(f"{x:>7} {got:>9.5f} {classic:>9.5f} {exact:>9.5f}{mark}")
        return "\n".join(rows)

    def plot(self, ax=None):
        """Measured rate (bars: 2 standard deviations) against both formulas; the current point starred."""
        current = self.num_hashes if self.over == "k" else self.n
        errors = [2 * sd for sd in self.curve_errors()]
        fixed = (f"m = {self.num_bits}, n = {self.n}" if self.over == "k"
                 else f"m = {self.num_bits}, k = {self.num_hashes}")
        return draw_measured_vs_theory(
            self.curve_x, self.curve_measured,
            {"classic (1 - e^(-kn/m))^k": self.curve_classic, "exact": self.curve_exact},
            errors=errors, mark=(current, self.measured), ax=ax,
            xlabel=f"{self.over} ({'hash functions' if self.over == 'k' else 'items inserted'})",
            title=f"False-positive rate, {fixed}, {self.key_type} keys")


def _curve_points(over: str, num_bits: int, num_hashes: int, n: int, max_k: int) -> list[int]:
    if over == "k":
        return list(range(1, max(max_k, num_hashes) + 1))
    grid = {n} | {max(1, round(n * f)) for f in np.linspace(0.125, 2.0, 16)}
    return sorted(grid)


def explore(num_bits: int, num_hashes: int, n: int, key_type: str = "uint64", over: str = "k",
            num_queries: int = 20_000, seed: int = SEED, max_k: int = 12) -> Exploration:
    """Measure a filter of m bits and k hashes holding n keys, and a curve over k or n.

    The filter is real: n seeded keys go in with ``add_many``, ``num_queries``
    keys never inserted are asked with ``contains_many``.  Over k, one filter
    per k = 1..max(max_k, k) holds the same n keys; over n, one filter with
    this k is filled step by step to 2n.  Same arguments, same numbers.  Its
    limits keep a redraw near a second: m up to 2**32, k and ``max_k`` up to 64
    (one filter per k on the curve), n and the queries up to 10,000,000.

    >>> e = explore(num_bits=10_000, num_hashes=7, n=1000, num_queries=5000)
    >>> e.optimal_k, e.curve_x[:3], round(e.classic, 4)
    (7, (1, 2, 3), 0.0082)
    >>> abs(e.measured - e.exact) < 4 * e.standard_error
    True
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
    args = [(m, n, kk) for kk in xs] if over == "k" else [(m, nn, k) for nn in xs]
    return Exploration(
        num_bits=m, num_hashes=k, n=n, key_type=key_type, num_queries=queries_count, seed=seed,
        false_positives=measured[current], measured=measured[current] / queries_count,
        classic=theory.false_positive_rate(m, n, k), exact=theory.exact_false_positive_rate(m, n, k),
        fill_ratio=bits_at_n / m,
        expected_fill_ratio=theory.bit_vector_false_positive_rate(m, k * n),
        optimal_k=theory.optimal_num_hashes(m, n), over=over, curve_x=tuple(xs),
        curve_measured=tuple(count / queries_count for count in measured),
        curve_classic=tuple(theory.false_positive_rate(*a) for a in args),
        curve_exact=tuple(theory.exact_false_positive_rate(*a) for a in args))


def explorer(num_bits: int = 10_000, num_hashes: int = 4, n: int = 1000, key_type: str = "uint64",
             over: str = "k", num_queries: int = 20_000, seed: int = SEED):
    """The ipywidgets panel: sliders for m, k, n, a key type and a curve axis; redraws on release.

    Everything it shows comes from :func:`explore`.

    >>> panel = explorer()
    >>> [child.description for child in panel.children[0].children]
    ['m (bits)', 'k (hashes)', 'n (items)', 'keys', 'curve over']
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """
    import ipywidgets as widgets
    import matplotlib.pyplot as plt
    from IPython import get_ipython

    explore(num_bits, num_hashes, n, key_type, over, num_queries, seed)  # check arguments first
    style = {"description_width": "90px"}
    common = dict(continuous_update=False, style=style, layout=widgets.Layout(width="420px"))
    controls = [
        widgets.IntSlider(value=num_bits, min=min(100, num_bits), max=max(100_000, num_bits), step=100,
                          description="m (bits)", **common),
        widgets.IntSlider(value=num_hashes, min=1, max=max(16, num_hashes),
                          description="k (hashes)", **common),
        widgets.IntSlider(value=n, min=min(10, n), max=max(20_000, n), step=10,
                          description="n (items)", **common),
        widgets.ToggleButtons(options=[("uint64 ints", "uint64"), ("URL strings", "url")],
                              value=key_type, description="keys", style=style),
        widgets.ToggleButtons(options=[("k", "k"), ("n", "n")], value=over,
                              description="curve over", style=style),
    ]
    numbers = widgets.HTML()
    figure = widgets.Output()

    def redraw(*_):
        result = explore(controls[0].value, controls[1].value, controls[2].value,
                         controls[3].value, controls[4].value, num_queries, seed)
        numbers.value = f"<pre class='bloomedu-explorer-numbers'>{result.summary()}</pre>"
        with figure:
            if get_ipython() is not None:  # outside a kernel there is no output to clear
                figure.clear_output(wait=True)
            result.plot()
            plt.show()

    for control in controls:
        control.observe(redraw, names="value")
    redraw()
    panel = widgets.VBox([widgets.VBox(controls), numbers, figure])
    panel.add_class("bloomedu-explorer")
    return panel
