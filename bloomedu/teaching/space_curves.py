"""Bits a key against the false-positive rate, for every filter of the course: lesson 20's plot.

Each structure's formula, turned into a curve of (rate p, bits a key):

- the lower bound, log2(1/p) (Carter, Floyd, Gill, Markowsky and Wegman 1978);
- the Bloom filter at its best k, log2(1/p) / ln 2 (lesson 08's sizing);
- the split-block filter of lesson 19 (Putze, Sanders and Singler 2007): for m/n bits a key,
  its Poisson-averaged rate (:func:`bloomedu.variants.blocked.split_block_false_positive_rate`);
- the cuckoo filter (Fan, Andersen, Kaminsky and Mitzenmacher 2014) with buckets of b at load
  a: f / a bits a key for a rate of 1 - (1 - 1/(2**f - 1))**(2ba), f = 2, 3, ...;
- the xor filter (Graf and Lemire 2020), 1.23 f bits for 2**-f, and the binary fuse filter
  (Graf and Lemire 2022), 1.125 f (3-wise) for large n (:mod:`bloomedu.variants.space`).

:func:`curves` gives them, :func:`cuckoo_beats_bloom_below` the rate below which the cuckoo
filter spends fewer bits than the Bloom filter, and :func:`draw_bits_per_key` the plot, with
the points a lesson measured on top.

Taught in ``notebooks/20_after_bloom.ipynb``; tested in ``tests/test_space_curves.py``.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.checks import real_number, whole_number
from ..i18n import N_, gettext as _
from ..variants.blocked import split_block_false_positive_rate
from ..variants.space import (bloom_bits_per_key, cuckoo_false_positive_rate, lower_bound_bits,
                              static_bits_per_key)

__all__ = ["STRUCTURES", "curves", "cuckoo_beats_bloom_below", "draw_bits_per_key"]

# The curves' names, in the order they are drawn (a lesson's measured points use the same names).
STRUCTURES = (N_("lower bound"), N_("Bloom filter"), N_("blocked filter"), N_("cuckoo filter"),
              N_("xor filter"), N_("binary fuse filter"))  # translated where drawn (plots.decorate)
_FINGERPRINT_BITS = range(2, 33)
_BLOCKED_BITS_PER_KEY = np.arange(4.0, 64.5, 0.5)
_RATES = np.logspace(-10, -0.5, 96)


def curves(bucket_size: int = 4, load: float = 0.9,
           n: int = 1_000_000) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every structure's (rates, bits a key), as arrays, by name (:data:`STRUCTURES`).

    ``bucket_size`` and ``load`` are the cuckoo filter's; ``n`` the blocked filter's keys (its
    rate depends a little on n through the Poisson spread of keys over blocks).

    >>> c = curves()
    >>> list(c) == list(STRUCTURES)
    True
    >>> rates, bits = c["xor filter"]; float(rates[6]), float(bits[6])
    (0.00390625, 9.84)
    >>> rates, bits = c["cuckoo filter"]; round(float(rates[10]), 6), round(float(bits[10]), 3)
    (0.001757, 13.333)
    """
    b = whole_number(bucket_size, "bucket_size", 1, 1 << 16)
    a = real_number(load, "load", 0.0, 1.0, open_low=True)
    n = whole_number(n, "n", 1, 1 << 40)
    found = {"lower bound": (_RATES, np.array([lower_bound_bits(p) for p in _RATES])),
             "Bloom filter": (_RATES, np.array([bloom_bits_per_key(p) for p in _RATES]))}
    blocks = [max(1, round(n * per_key / 256)) for per_key in _BLOCKED_BITS_PER_KEY]
    found["blocked filter"] = (np.array([split_block_false_positive_rate(num_blocks=B, n=n) for B in blocks]),
                               np.array([256 * B / n for B in blocks]))
    f = np.array(list(_FINGERPRINT_BITS), dtype=float)
    found["cuckoo filter"] = (np.array([cuckoo_false_positive_rate(int(x), b, a) for x in f]), f / a)
    found["xor filter"] = (2.0 ** -f, np.array([static_bits_per_key(int(x)) for x in f]))
    found["binary fuse filter"] = (2.0 ** -f, np.array([static_bits_per_key(int(x), "fuse")
                                                        for x in f]))
    return found


def _cuckoo_rate(fingerprint_bits: float, bucket_size: int, load: float) -> float:
    """The cuckoo filter's rate for a fingerprint of any real number of bits (for bisection)."""
    return -math.expm1(2 * bucket_size * load * math.log1p(-1 / (2 ** fingerprint_bits - 1)))


def cuckoo_beats_bloom_below(bucket_size: int = 4, load: float = 0.9) -> float:
    """The rate p below which a cuckoo filter spends fewer bits a key than a Bloom filter.

    Where f / a equals log2(1/p) / ln 2 for the cuckoo filter's own p, with f taken as a real
    number (a real filter rounds f up to a whole number of bits): found by bisection on f.

    >>> round(cuckoo_beats_bloom_below(4, 0.9), 5), round(cuckoo_beats_bloom_below(4, 0.95), 5)
    (0.00134, 0.00421)
    """
    b = whole_number(bucket_size, "bucket_size", 1, 1 << 16)
    a = real_number(load, "load", 0.0, 1.0, open_low=True)

    def cuckoo_extra(f: float) -> float:  # positive while the cuckoo filter spends more
        return f / a - bloom_bits_per_key(_cuckoo_rate(f, b, a))

    low, high = 1.0 + 1e-9, 64.0
    if cuckoo_extra(high) > 0:
        raise ValueError(f"a cuckoo filter with bucket_size={b} at load={a} never spends fewer "
                         "bits than a Bloom filter below 64-bit fingerprints")
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if cuckoo_extra(middle) > 0 else (low, middle)
    return _cuckoo_rate(high, b, a)


def draw_bits_per_key(found: dict, measured: dict | None = None, ax=None):
    """The curves (:func:`curves`) as lines, rates falling to the right, and the measured
    points as markers of the same colour: ``measured`` maps a name to (rate, bits) pairs.

    >>> import matplotlib.pyplot as plt
    >>> ax = draw_bits_per_key(curves(), {"xor filter": [(0.0039, 9.84)]})
    >>> len(ax.get_lines()), ax.get_xscale(), bool(ax.xaxis_inverted())
    (7, 'log', True)
    >>> plt.close("all")
    """
    from .plots import decorate, new_axes

    ax = ax if ax is not None else new_axes((7.0, 4.4))
    measured = measured or {}
    unknown = set(measured) - set(STRUCTURES)
    if unknown:
        raise ValueError(f"measured names must be among {', '.join(STRUCTURES)}, got "
                         f"{', '.join(sorted(unknown))}")
    for i, name in enumerate(STRUCTURES):
        rates, bits = found[name]
        style = {"color": "black", "linestyle": "--"} if name == "lower bound" else {"color": f"C{i}"}
        ax.plot(rates, bits, label=name, **style)
        if measured.get(name):
            points = np.array(measured[name], dtype=float).reshape(-1, 2)
            ax.plot(points[:, 0], points[:, 1], "o", color=style["color"], markersize=7,
                    markeredgecolor="black")
    ax.set_xscale("log")
    ax.set_xlim(0.2, 1e-7)  # falling rates to the right
    ax.set_ylim(0, 36)
    ax.grid(True, which="major", alpha=0.3)
    return decorate(ax, xlabel=_("false-positive rate p"), ylabel=_("bits a key"),
                    title=_("Bits a key against the rate (lines: formulas, dots: measured)"))
