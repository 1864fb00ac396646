"""The C split-block loop (``benchmarks/c/split_block.c``): compiled and run by the benchmarks.

``make bench-day`` divides bloomedu's nanoseconds a key by this loop's, measured in the same
run on the same number of keys and a filter of the same size, so that the ratio, unlike the
seconds, does not move with the load of this shared machine.  The C file hashes each 64-bit
ID as bloomedu does (h1 of MurmurHash3 x64 128 of its 8 little-endian bytes) and does the
in-then-add of :class:`bloomedu.variants.BlockedBloomFilter`: its bits equal bloomedu's
(``tests/test_bench_c_reference.py``).

>>> find_compiler() is None or Path(find_compiler()).name in ("cc", "gcc", "clang")
True
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["SOURCE", "find_compiler", "compile_reference", "time_reference", "reference_bits"]

SOURCE = Path(__file__).resolve().parent / "c" / "split_block.c"
FLAGS = ["-O2", "-march=native"]


def find_compiler() -> str | None:
    """The machine's C compiler: ``$CC``, else ``cc``, ``gcc`` or ``clang`` on the PATH; None if none."""
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def compile_reference(directory: Path) -> Path | None:
    """Compile ``split_block.c`` with ``-O2`` into ``directory``; None when there is no compiler.

    A compiler that fails raises ``RuntimeError`` with its message (that is a bug to fix, not
    a machine without a compiler).
    """
    compiler = find_compiler()
    if compiler is None:
        return None
    executable = Path(directory) / "split_block"
    done = subprocess.run([compiler, *FLAGS, "-o", str(executable), str(SOURCE)],
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{compiler} {' '.join(FLAGS)} {SOURCE} failed:\n{done.stderr}")
    return executable


def time_reference(executable: Path, num_blocks: int, num_keys: int, seed: int) -> dict:
    """Run the timed loop: ``num_keys`` splitmix64 IDs into ``num_blocks`` blocks.

    Returns its printed pairs as numbers: keys, found, wall_s, cpu_s, ns_per_key.
    """
    done = subprocess.run([str(executable), "time", str(num_blocks), str(num_keys), str(seed)],
                          capture_output=True, text=True, check=True)
    pairs = (item.split("=") for item in done.stdout.split())
    return {name: float(value) if "." in value else int(value) for name, value in pairs}


def reference_bits(executable: Path, num_blocks: int, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The C loop's filter words (uint32, 8 a block) and its answers (True: all the key's
    bits were set before it) for ``keys`` (any integer array, taken by value)."""
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        np.ascontiguousarray(keys).astype("<u8").tofile(folder / "keys")
        subprocess.run([str(executable), "file", str(num_blocks), str(folder / "keys"),
                        str(folder / "words"), str(folder / "present")], check=True,
                       capture_output=True)
        words = np.fromfile(folder / "words", dtype="<u4")
        present = np.fromfile(folder / "present", dtype=np.uint8).astype(bool)
    return words, present
