"""The keys of W1, W2 and W4 (written once to files every run reads) and W3's grid."""

from __future__ import annotations

from pathlib import Path

import numpy as np

NUM_KEYS = 1_000_000
WORKLOADS = {  # name: (capacity n, false-positive rate p, what the keys are)
    "W1": (NUM_KEYS, 0.001, "1,000,000 URL strings inserted, 1,000,000 absent URLs queried"),
    "W2": (NUM_KEYS, 0.01, "1,000,000 uint64 keys inserted, 1,000,000 absent uint64 keys queried"),
}
SWEEP_QUERIES = 20_000
SEED = 20_240_611
# W4: filters far larger than the cache.  Each: (capacity n, p, what); the keys are shared.
LARGE_INTS, LARGE_STRINGS, LARGE_ABSENT = 10_000_000, 2_000_000, 10_000_000
LARGE_KEYS = (f"{LARGE_INTS:,} uint64 keys and {LARGE_STRINGS:,} UUID strings inserted, "
              f"{LARGE_ABSENT:,} absent uint64 keys queried")
LARGE_WORKLOADS = {
    "W4": (20_000_000, 0.001, LARGE_KEYS),
    "W4-day": (864_000_000, 0.001, LARGE_KEYS + " (the filter article 1's day needs)"),
}


def sweep_grid() -> list[tuple[int, int, int]]:
    """Lesson 07's grid: (m, k, n) for m in 2^14, 2^16, 2^18, k in 1..8, 10 n from m/64 to m/2."""
    grid = []
    for m in (2 ** 14, 2 ** 16, 2 ** 18):
        counts = np.unique(np.geomspace(m / 64, m / 2, 10).round().astype(int))
        grid += [(m, k, int(n)) for k in range(1, 9) for n in counts]
    return grid


def uint64_keys(count: int, seed: int) -> np.ndarray:
    """``count`` distinct uint64 keys from a seeded generator."""
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, 2 ** 64 - 1, count + count // 1000 + 16, dtype=np.uint64,
                                  endpoint=True))
    if keys.size < count:  # about 2**-40 likely: say so rather than loop
        raise RuntimeError("not enough distinct keys; change the seed")
    return rng.permutation(keys)[:count]


def write_keys(directory: Path) -> None:
    """Write W1's and W2's inserted and absent keys into ``directory``."""
    from bloomedu.workloads.urls import malicious_urls, safe_urls

    (directory / "W1_inserted.txt").write_text("\n".join(malicious_urls(NUM_KEYS, seed=SEED)))
    (directory / "W1_absent.txt").write_text("\n".join(safe_urls(NUM_KEYS, seed=SEED)))
    both = uint64_keys(2 * NUM_KEYS, SEED)  # distinct, so the second half is never inserted
    np.save(directory / "W2_inserted.npy", both[:NUM_KEYS])
    np.save(directory / "W2_absent.npy", both[NUM_KEYS:])


def write_large_keys(directory: Path) -> None:
    """Write W4's keys: uint64 keys inserted and absent, and UUID strings inserted."""
    from bloomedu.workloads.clicks import uuid4_strings
    from bloomedu.workloads.day import splitmix64

    # splitmix64 is a bijection: distinct counters give distinct keys, with no sort to check
    both = splitmix64(np.arange(LARGE_INTS + LARGE_ABSENT, dtype=np.uint64) + np.uint64(SEED << 32))
    np.save(directory / "W4_inserted.npy", both[:LARGE_INTS])
    np.save(directory / "W4_absent.npy", both[LARGE_INTS:])
    strings = uuid4_strings(LARGE_STRINGS, np.random.default_rng(SEED + 5))
    (directory / "W4_strings.txt").write_text("\n".join(strings))


def read_large_keys(directory: Path):
    """(uint64 keys inserted, UUID strings inserted, uint64 keys absent) of W4."""
    return (np.load(directory / "W4_inserted.npy"),
            (directory / "W4_strings.txt").read_text().split("\n"),
            np.load(directory / "W4_absent.npy"))


def read_keys(directory: Path, workload: str):
    """(inserted, absent): lists of str for W1, uint64 arrays for W2."""
    if workload == "W1":
        return tuple((directory / f"W1_{part}.txt").read_text().split("\n")
                     for part in ("inserted", "absent"))
    return tuple(np.load(directory / f"W2_{part}.npy") for part in ("inserted", "absent"))
