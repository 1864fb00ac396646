"""Live demos for instructors: a collision, a false positive, and how a filter fills.

Article 1 ("Filtro di Bloom: un elemento appartiene all'insieme?") says that
collisions "inevitably" happen once IDs are cut down to an n-bit hash (steps 2
and 3) and that a Bloom filter may answer "present" for an ID it never saw
(step 5).  Article 2 ("Bloom Filter: come memorizzare 1 Milione di stringhe in
meno di 2MB?") walks through k = 3 bits per key on a bit array.  These
functions make each claim happen in front of a class, reproducibly from a seed:

- :func:`find_collision`: two different click IDs with the same n-bit hash
  (lessons 02 and 03); a dict from hash value to ID finds one after about
  sqrt(2**n) IDs, the birthday bound.
- :func:`find_false_positive`: a key never inserted whose k bits are all set,
  with the inserted keys that set each bit (lessons 05 and 06).
- :func:`draw_key_bits` and :func:`plot_fill`, one-line figures; the data behind
  them comes from :func:`bit_setters` and :func:`fill_curve` (the grid itself is
  :func:`bloomedu.teaching.plots.draw_bit_groups`).

Taught in ``notebooks/02_hashed_ids.ipynb``, ``notebooks/03_bit_vector.ipynb``,
``notebooks/05_bloom_filter.ipynb`` and ``notebooks/06_inside_the_filter.ipynb``; tested in
``tests/test_classroom.py``.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from itertools import islice
from typing import Callable, Iterable, Iterator

import numpy as np

from ..core.checks import is_int
from ..workloads.clicks import uuid4_strings
from ..i18n import gettext as _
from .plots import decorate, draw_bit_groups, new_axes

__all__ = ["Collision", "find_collision", "BitSetters", "bit_setters", "FalsePositive",
           "find_false_positive", "FillCurve", "fill_curve", "draw_key_bits", "plot_fill"]

_BATCH = 4096  # candidate keys drawn from the rng at a time
_MAX_DRAWN_BITS = 16_384
_NUMBERED_BITS = 128  # up to this m each cell shows its index


def _max_tries(value) -> int:
    if not is_int(value) or value <= 0:
        raise ValueError(f"max_tries must be a positive int, got {value!r}")
    return int(value)


def _candidates(keys: Iterable | None, seed) -> Iterator:
    """The given keys, or an endless stream of uuid4 click IDs drawn from ``seed``."""
    if keys is not None:
        if isinstance(keys, (str, bytes)):
            raise TypeError("keys must be an iterable of keys, not a single "
                            f"{type(keys).__name__}")
        yield from keys
        return
    rng = np.random.default_rng(seed)
    while True:
        yield from uuid4_strings(_BATCH, rng)


def _short(key) -> str:
    text = repr(key)
    return text if len(text) <= 42 else text[:39] + "...'"


@dataclass(frozen=True)
class Collision:
    """Two different keys with the same hash ``value``, found after ``tries`` keys.

    >>> c = Collision("a", "b", 7, 2); print(c)
    'a' and 'b' both hash to 7 (found after 2 tries)
    """

    first: str
    second: str
    value: object
    tries: int

    def __str__(self) -> str:
        return _("{first} and {second} both hash to {value} (found after {tries} tries)").format(
            first=_short(self.first), second=_short(self.second), value=self.value, tries=self.tries)


def _as_hash(hash_function) -> Callable:
    """A callable key -> value; a filter or bit vector hashes to its bit positions."""
    if hasattr(hash_function, "bit_indices"):
        indices = hash_function.bit_indices
        return lambda key: (lambda found: found[0] if len(found) == 1 else tuple(found))(
            indices(key))
    if not callable(hash_function):
        raise TypeError("hash_function must be callable or have bit_indices(key), not "
                        f"{type(hash_function).__name__}")
    return hash_function


def find_collision(hash_function, *, seed: int = 0, max_tries: int = 1_000_000,
                   keys: Iterable | None = None) -> Collision:
    """Two different click IDs that ``hash_function`` sends to the same value.

    Draws uuid4-like IDs from ``seed`` (or takes ``keys``) and keeps a dict
    from hash value to the first ID that gave it, so the first repeat is a
    collision: for an n-bit hash that takes about sqrt(pi/2 * 2**n) IDs.
    ``hash_function`` is a callable (e.g. ``n_bit_hash_function(16, "")``) or
    anything with ``bit_indices(key)``, such as a :class:`~bloomedu.BitVector`.
    Raises ``LookupError`` if ``max_tries`` keys give no collision.

    >>> from bloomedu import n_bit_hash_function
    >>> c = find_collision(n_bit_hash_function(16, ""), seed=1)
    >>> c.first != c.second, c.tries < 5000
    (True, True)
    >>> h = n_bit_hash_function(16, ""); h(c.first) == h(c.second) == c.value
    True
    """
    hash_of = _as_hash(hash_function)
    max_tries = _max_tries(max_tries)
    first_key_with: dict = {}
    for tries, key in enumerate(islice(_candidates(keys, seed), max_tries), start=1):
        value = hash_of(key)
        earlier = first_key_with.setdefault(value, key)
        if earlier != key:
            return Collision(earlier, key, value, tries)
    raise LookupError(f"no collision among {len(first_key_with)} distinct hash values after "
                      f"max_tries={max_tries} keys; an n-bit hash needs about sqrt(2**n) "
                      "keys, so raise max_tries (or pass more keys)")


@dataclass(frozen=True)
class BitSetters:
    """One bit position of a key: whether it is set, and the inserted keys that set it.

    >>> BitSetters(position=5, is_set=True, setters=("123",))
    BitSetters(position=5, is_set=True, setters=('123',))
    """

    position: int
    is_set: bool
    setters: tuple


def _not_added(key) -> ValueError:
    return ValueError(f"inserted holds {key!r}, which the filter does not contain: "
                      "pass exactly the keys that were added")


def _is_set(bloom_filter, position: int) -> bool:
    return bool(bloom_filter.bits[position])


def _check_added(bloom_filter, inserted: list) -> None:
    """Raise ``ValueError`` naming the first of ``inserted`` the filter does not contain."""
    for key, claimed in zip(inserted, _claimed(bloom_filter, inserted)):
        if not claimed:
            raise _not_added(key)


def _keys_touching(bloom_filter, positions: list[int], inserted: list) -> list:
    """The keys of ``inserted`` that may use one of ``positions`` (a superset, found in bulk).

    A filter with ``contains_many`` is copied with every bit set except
    ``positions``: a key it rejects has a bit among them.  One bulk query
    replaces a Python loop over a million keys.
    """
    if not hasattr(bloom_filter, "contains_many"):
        return inserted
    probe = copy.deepcopy(bloom_filter)
    probe.bits.data[:] = 0xFF
    for position in positions:
        probe.bits.clear(position)
    return [key for key, hit in zip(inserted, probe.contains_many(inserted)) if not hit]


def _setters(bloom_filter, key, inserted: list) -> list[BitSetters]:
    positions = list(bloom_filter.bit_indices(key))
    setters: dict[int, list] = {position: [] for position in positions}
    for other in _keys_touching(bloom_filter, positions, inserted):
        for position in set(positions).intersection(bloom_filter.bit_indices(other)):
            if other not in setters[position]:
                setters[position].append(other)
    return [BitSetters(p, _is_set(bloom_filter, p), tuple(setters[p])) for p in positions]


def _key_list(inserted) -> list:
    if isinstance(inserted, (str, bytes)):
        raise TypeError(f"inserted must be an iterable of keys, not a single {type(inserted).__name__}")
    return list(inserted)


def bit_setters(bloom_filter, key, inserted: Iterable) -> list[BitSetters]:
    """For each of the k positions of ``key``: is it set, and which ``inserted`` keys set it.

    A filter does not remember its keys, so pass the keys you added.  Raises
    ``ValueError`` if one of them is not in the filter (then it was not added).

    >>> from bloomedu import SaltedBloomFilter
    >>> f = SaltedBloomFilter(num_hashes=3, hash_bits=4)
    >>> for message_id in ["123", "456"]: f.add(message_id)
    >>> [(s.position, s.is_set, s.setters) for s in bit_setters(f, "789", ["123", "456"])]
    [(2, False, ()), (6, True, ('123',)), (8, False, ())]
    """
    inserted = _key_list(inserted)
    _check_added(bloom_filter, inserted)
    return _setters(bloom_filter, key, inserted)


@dataclass(frozen=True)
class FalsePositive:
    """A key never inserted that the filter claims to contain, and who set its bits.

    >>> print(FalsePositive("x", (BitSetters(3, True, ("a", "b")),), 9))
    'x' was never inserted, yet its 1 bits are all set (found after 9 tries):
      bit 3 set by 'a', 'b'
    """

    key: object
    bits: tuple
    tries: int

    @property
    def positions(self) -> list[int]:
        """The key's k bit positions."""
        return [b.position for b in self.bits]

    def __str__(self) -> str:
        width = len(str(max(self.positions)))
        lines = [_("{key} was never inserted, yet its {count} bits are all set (found after "
                   "{tries} tries):").format(key=_short(self.key), count=len(self.bits),
                                            tries=self.tries)]
        lines += [_("  bit {bit} set by {setters}").format(bit=f"{b.position:>{width}}",
                                                          setters=", ".join(map(_short, b.setters)))
                  for b in self.bits]
        return "\n".join(lines)


def _claimed(bloom_filter, batch: list) -> list[bool]:
    if hasattr(bloom_filter, "contains_many"):
        return bloom_filter.contains_many(batch).tolist()
    return [key in bloom_filter for key in batch]


def find_false_positive(bloom_filter, inserted: Iterable, *, seed: int = 0,
                        max_tries: int = 1_000_000, keys: Iterable | None = None) -> FalsePositive:
    """A key not in ``inserted`` that the filter says it contains, with the keys behind each bit.

    Candidates are uuid4-like click IDs drawn from ``seed`` (or ``keys``);
    works for :class:`~bloomedu.SaltedBloomFilter` and
    :class:`~bloomedu.BloomFilter`.  Raises ``LookupError`` if none of
    ``max_tries`` candidates is a false positive.  Use a ``seed`` other than
    the one that drew the inserted IDs, or the first candidates are those IDs.

    >>> from bloomedu import SaltedBloomFilter
    >>> from bloomedu.workloads.clicks import uuid4_strings
    >>> f = SaltedBloomFilter(num_hashes=3, hash_bits=8)
    >>> added = uuid4_strings(40, np.random.default_rng(1))
    >>> for key in added: f.add(key)
    >>> fp = find_false_positive(f, added, seed=2)
    >>> fp.key in f, fp.key in added, all(b.setters for b in fp.bits)
    (True, False, True)
    """
    inserted = _key_list(inserted)
    if not inserted:
        raise ValueError("inserted must be a non-empty list of the keys added to the filter "
                         "(an empty filter has no false positives)")
    max_tries = _max_tries(max_tries)
    _check_added(bloom_filter, inserted)
    known = set(inserted)
    stream, tries = islice(_candidates(keys, seed), max_tries), 0
    while batch := list(islice(stream, _BATCH)):
        for key, claimed in zip(batch, _claimed(bloom_filter, batch)):
            tries += 1
            if claimed and key not in known:
                return FalsePositive(key, tuple(_setters(bloom_filter, key, inserted)), tries)
    raise LookupError(f"no false positive among max_tries={max_tries} candidate keys; fill the "
                      "filter further or raise max_tries")


@dataclass(frozen=True)
class FillCurve:
    """The fill ratio of a filter after each number of inserted keys, measured and in theory.

    >>> FillCurve(np.array([0, 10]), np.array([0.0, 0.1]), np.array([0.0, 0.11]), 3).n.tolist()
    [0, 10]
    """

    n: np.ndarray
    measured: np.ndarray
    theory: np.ndarray
    num_hashes: int


def fill_curve(bloom_filter, keys: Iterable, points: int = 50) -> FillCurve:
    """Insert ``keys`` into an empty filter, recording the fraction of bits set as it fills.

    The theory curve is 1 - e^(-kn/m): each of the kn bit settings misses a
    given bit with probability 1 - 1/m.  The filter is changed (filled).

    >>> from bloomedu import BloomFilter
    >>> curve = fill_curve(BloomFilter(1000, 3), range(200), points=4)
    >>> curve.n.tolist(), curve.theory.round(3).tolist()
    ([0, 50, 100, 150, 200], [0.0, 0.139, 0.259, 0.362, 0.451])
    """
    if not is_int(points) or points <= 0:
        raise ValueError(f"points must be a positive int, got {points!r}")
    points = int(points)
    if bloom_filter.bits.count():
        raise ValueError("bloom_filter must be empty: the curve starts from no keys")
    keys = list(keys)
    stops = np.unique(np.linspace(0, len(keys), points + 1).round().astype(int))
    measured = np.zeros(stops.size)
    for i in range(1, stops.size):
        chunk = keys[stops[i - 1]:stops[i]]
        if hasattr(bloom_filter, "add_many"):
            bloom_filter.add_many(chunk)
        else:
            for key in chunk:
                bloom_filter.add(key)
        measured[i] = bloom_filter.bits.count() / bloom_filter.num_bits
    k, m = bloom_filter.num_hashes, bloom_filter.num_bits
    return FillCurve(stops, measured, -np.expm1(-k * stops / m) + 0.0, k)


def plot_fill(curve: FillCurve, ax=None, title: str | None = None):
    """Plot a :func:`fill_curve`: measured fill against 1 - e^(-kn/m), with the half-full line.

    At the best k a filter is half full when it holds the n it was sized for.

    >>> from bloomedu import BloomFilter
    >>> ax = plot_fill(fill_curve(BloomFilter(1000, 3), range(200), points=4))
    >>> [line.get_label() for line in ax.get_lines()][:2]
    ['measured', 'theory 1 - e^(-kn/m)']
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """
    ax = ax if ax is not None else new_axes()
    ax.plot(curve.n, curve.measured, "o", ms=3, label=_("measured"))
    ax.plot(curve.n, curve.theory, "-", label=_("theory 1 - e^(-kn/m)"))
    ax.axhline(0.5, color="grey", lw=0.8, ls=":")
    return decorate(ax, xlabel=_("keys inserted (n)"), ylabel=_("fraction of bits set"),
                    ylim=(0, 1), title=title or _("Fill of a filter with k = {k}").format(
                        k=curve.num_hashes))


def draw_key_bits(bloom_filter, key, inserted: Iterable = (), width: int = 32, ax=None):
    """Draw the filter's bits as a grid, ``key``'s k bits in orange, each labelled by its setters.

    A set bit is dark, a clear one light; cells show their index while m is at
    most 128; under the grid one line per position names the inserted keys
    that set it (from :func:`bit_setters`).  Meant for small filters: m is at
    most 16,384.

    >>> from bloomedu import SaltedBloomFilter
    >>> f = SaltedBloomFilter(num_hashes=3, hash_bits=6)
    >>> for message_id in ["123", "456"]: f.add(message_id)
    >>> ax = draw_key_bits(f, "789", ["123", "456"], width=16)
    >>> [t.get_text() for t in ax.texts[-3:]]
    ['bit 2 = 0, set by no key', 'bit 38 = 0, set by no key', 'bit 8 = 0, set by no key']
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """
    if bloom_filter.num_bits > _MAX_DRAWN_BITS:
        raise ValueError(f"draw_key_bits draws every bit: the filter must have at most "
                         f"{_MAX_DRAWN_BITS:,} bits, not {bloom_filter.num_bits:,}")
    rows = bit_setters(bloom_filter, key, inserted)
    if ax is None:
        grid_rows = math.ceil(bloom_filter.num_bits / width)
        ax = new_axes((7.0, 5.4 * grid_rows / width + 1.0 + 0.2 * len(rows)))
    verdict = (_("all set: claimed present") if all(r.is_set for r in rows)
               else _("a bit is 0: absent"))
    group = _("the key's {count} bits").format(count=len(rows))
    draw_bit_groups(bloom_filter.bits, {group: [r.position for r in rows]},
                    width=width, ax=ax, numbers=bloom_filter.num_bits <= _NUMBERED_BITS,
                    title=f"{_short(key)}: {verdict}")
    for line, row in enumerate(rows):
        who = ", ".join(map(_short, row.setters)) or (_("no key") if not row.is_set
                                                      else _("a key not listed in inserted"))
        ax.annotate(_("bit {bit} = {value}, set by {who}").format(
                        bit=row.position, value=int(row.is_set), who=who), xy=(0, 0),
                    xycoords="axes fraction", xytext=(0, -4 - 11 * line),
                    textcoords="offset points", va="top", fontsize=8)
    ax.figure.tight_layout()
    return ax
