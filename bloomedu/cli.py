"""The ``bloomedu`` command: size a Bloom filter from the shell, copy the lessons for a class.

Article 2 ("Bloom Filter: come memorizzare 1 Milione di stringhe in meno di
2MB?") sizes Guava's filter from the number of items n and the false-positive
rate p; ``bloomedu size --items 1000000 --fpp 0.001`` answers the same
question: m bits, k hash functions, the memory in human units, bits per item,
the expected false-positive rate (classic, and exact after Christensen, Roginsky
and Jimeno, "A new analysis of the false positive rate of a Bloom filter", IPL
2010) and the information-theoretic lower bound of
log2(1/p) bits per item (Carter, Floyd, Gill, Markowsky and Wegman, "Exact and
approximate membership testers", STOC 1978).  ``--bits M`` gives the rate of a
filter of a given size; ``--hashes K`` fixes k.

``bloomedu lab [DIR]`` copies the lessons a working folder lacks (``my-lessons`` by default) and
opens it in JupyterLab from the same Python (:mod:`bloomedu.teaching.lab`): with
``pip install "bloomedu[lessons]"``, the whole set-up on any system.

``bloomedu lessons DIR`` copies every lesson and its worked solutions into DIR
(:func:`bloomedu.teaching.lessons.copy_lessons`), for a class; ``--missing`` copies only
those DIR lacks and keeps the rest as they are (``make lab``'s working copy).

Both take ``--lang it`` for the Italian edition (``--lang en``, English, is the default):
``bloomedu lessons DIR --lang it`` copies the Italian lessons in the English layout, and
``bloomedu lab --lang it`` serves them (in ``my-lessons-it`` by default) with the library's
messages in Italian (``BLOOMEDU_LANG=it``, :mod:`bloomedu.i18n`).

Run it as ``python -m bloomedu size ...`` or through the ``bloomedu`` console script.

Taught in ``notebooks/08_sizing_a_filter.ipynb`` (``bloomedu size``, the same sizing); tested in
``tests/test_cli.py``.
"""

from __future__ import annotations

import argparse
import errno
import math
import os
import re
import sys
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from .core import theory
from .i18n import check_language, gettext as _
from .core.checks import MAX_HASHES, MAX_NUM_BITS, human_bytes, probability, whole_number

__all__ = ["SizeReport", "size_report", "memory", "human_bytes", "main"]

WORD_BYTES = 8  # a BloomFilter stores its m bits in whole 64-bit words (bloomedu.core.bits)


@dataclass(frozen=True, kw_only=True)
class SizeReport:
    """A filter's size and its expected false-positive rate (see :func:`size_report`).

    >>> r = SizeReport(num_bits=96, num_hashes=7, items=10, target_fpp=0.01)
    >>> r.nbytes, r.bits_per_item
    (16, 9.6)
    """

    num_bits: int
    num_hashes: int
    items: int
    target_fpp: float | None = None

    def __post_init__(self) -> None:  # the library's limits; numpy scalars become Python numbers
        for name, top in (("items", MAX_NUM_BITS), ("num_bits", MAX_NUM_BITS),
                          ("num_hashes", MAX_HASHES)):
            object.__setattr__(self, name, whole_number(getattr(self, name), name, 1, top))
        if self.target_fpp is not None:
            object.__setattr__(self, "target_fpp", probability(self.target_fpp, "target_fpp"))

    @property
    def nbytes(self) -> int:
        """Bytes a :class:`~bloomedu.BloomFilter` of m bits stores: whole 64-bit words,
        8 * ceil(m / 64), as its ``nbytes`` says.

        >>> SizeReport(num_bits=65, num_hashes=1, items=1).nbytes
        16
        """
        return WORD_BYTES * -(-self.num_bits // (8 * WORD_BYTES))

    @property
    def bits_per_item(self) -> float:
        """m / n."""
        return self.num_bits / self.items

    @property
    def fpp(self) -> float:
        """The classic expected rate (1 - e^(-kn/m))^k."""
        return theory.false_positive_rate(num_bits=self.num_bits, num_hashes=self.num_hashes,
                                          n=self.items)

    @property
    def exact_fpp(self) -> float:
        """The exact rate for kn independent uniform positions (fast up to k = 1024)."""
        return theory.exact_false_positive_rate(num_bits=self.num_bits, num_hashes=self.num_hashes,
                                                n=self.items)

    @property
    def lower_bound_bits_per_item(self) -> float | None:
        """log2(1/p): no structure answering with rate p can use fewer bits per item.

        p is the target rate, or else the classic rate of this size (None if it
        rounds to 0 or 1).
        """
        p = self.target_fpp if self.target_fpp is not None else self.fpp
        return theory.lower_bound_bits_per_item(p) if 0 < p < 1 else None

    def lines(self) -> list[str]:
        """The report, one fixed-format line per figure, in the reader's language
        (:mod:`bloomedu.i18n`): the labels in a column as wide as the longest needs."""
        bound, exact = self.lower_bound_bits_per_item, self.exact_fpp
        rows = [
            (_("items (n)"), f"{self.items:,}"),
            (_("bits (m)"), f"{self.num_bits:,}"),
            (_("hash functions (k)"), f"{self.num_hashes}"),
            (_("memory"), memory(self.nbytes)),
            (_("bits per item (m/n)"), f"{self.bits_per_item:.2f}"),
            (_("false-positive rate"), _("{fpp:.6g} (classic (1 - e^(-kn/m))^k)").format(fpp=self.fpp)),
            (_("exact rate"), _("{exact:.6g} (kn independent uniform positions)").format(exact=exact)),
            (_("lower bound"), _("{bound:.2f} bits per item (log2(1/p)); this filter uses {times:.2f} "
                                 "times that").format(bound=bound, times=self.bits_per_item / bound)
             if bound else _("not defined: the rate rounds to 0 or 1")),
        ]
        if self.target_fpp is not None:
            rows.insert(1, (_("target rate (p)"), f"{self.target_fpp:.6g}"))
        width = max(22, max(len(label) for label, _value in rows) + 2)
        return [f"{label:<{width}}{value}" for label, value in rows]


def memory(nbytes: int) -> str:
    """A byte count as the size report writes it: the exact bytes (in the reader's language),
    then binary units from 1 KiB on, then decimal megabytes (article 2 asks for "less than 2MB")
    from 1 MB on.

    >>> memory(16), memory(1_200), memory(1_797_200)
    ('16 bytes', '1,200 bytes = 1.17 KiB', '1,797,200 bytes = 1.71 MiB (1.80 MB)')
    """
    nbytes = whole_number(nbytes, "nbytes", 0)
    text = _("{nbytes:,} bytes").format(nbytes=nbytes) if nbytes != 1 else _("1 byte")
    if nbytes >= 1024:
        text += f" = {human_bytes(nbytes)}"
    if nbytes >= 10 ** 6:
        text += f" ({Decimal(nbytes) / 10 ** 6:,.2f} MB)"  # Decimal: any int, none too big
    return text


def size_report(*, bits: int | None = None, hashes: int | None = None, items: int,
                fpp: float | None = None) -> SizeReport:
    """Size a filter for ``items`` at rate ``fpp``, or report on one of ``bits`` bits.

    From (n, p): m = ceil(-n ln p / (ln 2)^2) and the best whole k; with
    ``hashes`` fixed, the fewest bits that reach p with that k,
    m = ceil(-k n / ln(1 - p^(1/k))).  From (n, m): k is ``hashes`` or the best.
    n and m are at most 2**63-1 and k at most 1024, as in :class:`~bloomedu.BloomFilter`;
    a size beyond them is a ``ValueError`` that names the arguments asking for it.

    >>> r = size_report(items=1_000_000, fpp=0.001)
    >>> r.num_bits, r.num_hashes, human_bytes(r.nbytes)
    (14377588, 10, '1.71 MiB')
    >>> size_report(bits=10_000, items=1000).num_hashes
    7
    """
    if (fpp is None) == (bits is None):
        raise ValueError("give exactly one of fpp (to size a filter) and bits (to rate one)")
    n = whole_number(items, "items", 1, MAX_NUM_BITS)
    k = None if hashes is None else whole_number(hashes, "hashes", 1, MAX_HASHES)
    if bits is not None:
        m = whole_number(bits, "bits", 1, MAX_NUM_BITS)
        k = k if k is not None else theory.optimal_num_hashes(num_bits=m, n=n)
        return SizeReport(num_bits=m, num_hashes=k, items=n)
    p = probability(fpp, "fpp")
    asked = f"items={n} at fpp={p}" + (f" with hashes={k}" if k is not None else "")
    if k is None:  # the library's one sizing rule, as BloomFilter.from_capacity sizes
        m, k = theory.size_for(n=n, p=p, asked=asked)
    else:  # the fewest m with (1 - e^(-kn/m))^k <= p; ln(1 - p^(1/k)) kept exact near 0 and 1
        root = math.log(p) / k
        bits = -k * n / (math.log1p(-math.exp(root)) if root < -1 else math.log(-math.expm1(root)))
        m = math.ceil(bits) if math.isfinite(bits) else MAX_NUM_BITS + 1  # past a float: too many
    if m > MAX_NUM_BITS:
        about = f"about {float(m):.3g}" if m <= 2 ** 1000 else "more"
        raise ValueError(f"{asked} needs {about} bits, more than a filter can hold (2**63-1)")
    return SizeReport(num_bits=m, num_hashes=k, items=n, target_fpp=p)


def _whole(text: str, name: str, top: int) -> int:
    """A whole number in 1..top, written 1000000, 1_000_000, 1,000,000 or 1e6."""
    try:
        value = Decimal(text.replace(",", "").replace("_", ""))
    except InvalidOperation:
        value = Decimal("NaN")
    if not (value.is_finite() and 1 <= value <= top and value == value.to_integral_value()):
        limit = "2**63-1" if top == MAX_NUM_BITS else str(top)
        raise argparse.ArgumentTypeError(f"{name} must be a positive whole number up to {limit}, "
                                          f"got {text!r}")
    return int(value)


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(
            f"false-positive rate must be strictly between 0 and 1 (0.001 is 1 in 1000), "
            f"got {text!r}")
    return value


def _parser() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    parser = argparse.ArgumentParser(
        prog="bloomedu", description="Bloom filters taught step by step: command-line tools.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    size = commands.add_parser(
        "size", help="size a Bloom filter from (n, p), or rate one of m bits",
        description="Size a Bloom filter for n items at false-positive rate p (--fpp), or "
                    "give the expected rate of a filter of m bits (--bits).",
        epilog="example: bloomedu size --items 1000000 --fpp 0.001")
    size.add_argument("--items", "-n", required=True, metavar="N",
                      type=lambda t: _whole(t, "--items", MAX_NUM_BITS),
                      help="expected number of items n")
    size.add_argument("--fpp", "-p", type=_rate, metavar="P",
                      help="target false-positive rate p, e.g. 0.001 for 1 in 1000")
    size.add_argument("--bits", "-m", metavar="M",
                      type=lambda t: _whole(t, "--bits", MAX_NUM_BITS),
                      help="number of bits m of an existing filter (instead of --fpp)")
    size.add_argument("--hashes", "-k", metavar="K",
                      type=lambda t: _whole(t, "--hashes", MAX_HASHES),
                      help=f"fix the number of hash functions k, at most {MAX_HASHES} "
                           "(default: the best k)")
    _add_lessons_command(commands)
    _add_lab_command(commands)
    return parser, size


def _port(text: str) -> int:
    if not re.fullmatch(r"[0-9]{1,5}", text.strip()) or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"--port must be a whole number in 0..65535, got {text!r}")
    return int(text)


def _add_lab_command(commands) -> None:
    lab = commands.add_parser(
        "lab", help="copy the lessons into a working folder and open them in JupyterLab",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Copy the lessons FOLDER lacks (your edits there are kept) and start\n"
                    "JupyterLab on it from this Python; print its URL with its token.\n"
                    "Ctrl+C stops it.",
        epilog="examples:\n"
               "  bloomedu lab                         the lessons in ./my-lessons\n"
               "  bloomedu lab ~/bloom --port 8890     another folder, another port\n"
               "  bloomedu lab --no-browser            print the URL, open no browser\n"
               "  bloomedu lab --lang it               the Italian lessons in ./my-lessons-it")
    lab.add_argument("folder", metavar="FOLDER", nargs="?", default=None,
                     help="the working folder (default: my-lessons, or my-lessons-it with "
                          "--lang it, in the current folder)")
    _add_language(lab, "the lessons' language: en (English) or it (Italian: the Italian "
                       "lessons, and the library's messages in Italian in their kernels)")
    lab.add_argument("--port", type=_port, default=8888,
                     help="the port to try first (default 8888; a busy one is passed over, "
                          "and the URL printed names the port taken)")
    lab.add_argument("--no-browser", action="store_true", help="do not open a browser")


def _add_lessons_command(commands) -> None:
    lessons = commands.add_parser(
        "lessons", help="copy the lessons and their solutions into a folder for a class",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Copy every lesson (NN_slug.ipynb, executed), the optional ones of its\n"
                    "subfolders and, under solutions/, the worked solutions into FOLDER\n"
                    "(created if missing). A notebook already in FOLDER is replaced only\n"
                    "with --overwrite; without it or --missing, nothing is copied then.",
        epilog="examples:\n"
               "  bloomedu lessons ~/bloom-class            a copy for a class\n"
               "  bloomedu lessons my-lessons --missing     what `bloomedu lab` (make lab) does\n"
               "      first in my-lessons/: the lessons a `git pull` brought are added, your\n"
               "      edits are kept; delete a notebook there to get the course's version back\n"
               "  bloomedu lessons ~/bloom-it --lang it     the Italian edition")
    lessons.add_argument("folder", metavar="FOLDER", help="where to put the lessons")
    _add_language(lessons, "the edition to copy: en (English) or it (Italian)")
    lessons.add_argument("--no-solutions", action="store_true", help="copy the lessons only")
    replace = lessons.add_mutually_exclusive_group()
    replace.add_argument("--overwrite", action="store_true",
                         help="replace lessons already in FOLDER")
    replace.add_argument("--missing", action="store_true",
                         help="copy only the notebooks FOLDER lacks; keep every one already "
                              "there as it is (your edits)")


def _language(text: str) -> str:
    try:
        return check_language(text.strip(), "--lang")
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _add_language(command, text: str) -> None:
    command.add_argument("--lang", type=_language, default="en", metavar="LANG",
                         help=f"{text} (default: en)")


def _say(text: str, stream=None) -> None:
    """Print ``text``, with what the stream's encoding cannot write (a folder named in another
    alphabet on an ASCII terminal, a file name that is not UTF-8) as backslash escapes."""
    stream = sys.stdout if stream is None else stream
    if stream is None:  # the process was started with its output closed (>&-)
        raise OSError(errno.EBADF, "standard output is closed")
    encoding = getattr(stream, "encoding", None) or "utf-8"
    print(text.encode(encoding, "backslashreplace").decode(encoding, "replace"), file=stream)


def _lessons(args) -> int:
    from .teaching.lessons import (copy_lessons, course_notebooks, kept_note, lessons_folder,
                                   tally)

    if not args.folder.strip():  # "" would be the current folder: never chosen by accident
        _say(f"bloomedu lessons: FOLDER must name a folder, got {args.folder!r} (use '.' for "
             "the current folder)", sys.stderr)
        return 1
    try:
        written = copy_lessons(args.folder, solutions=not args.no_solutions,
                               overwrite=args.overwrite, missing=args.missing, language=args.lang)
    except (OSError, ValueError) as error:
        _say(f"bloomedu lessons: {error}", sys.stderr)
        return 1
    source, target = lessons_folder(args.lang), Path(args.folder)
    course = course_notebooks(source, solutions=not args.no_solutions)
    _say(f"copied {tally([path.relative_to(target) for path in written], course)} "
         f"to {args.folder}")
    if args.missing:
        note = kept_note(target, written, course, source)
        if note:
            _say(note)
    _say(f"open them with: bloomedu lab {args.folder}"
         + (f" --lang {args.lang}" if args.lang != "en" else ""))
    sys.stdout.flush()
    return 0


def _lab(args) -> int:
    from .teaching.lab import run_lab

    if args.folder is not None and not args.folder.strip():
        _say(f"bloomedu lab: FOLDER must name a folder, got {args.folder!r} (use '.' for the "
             "current folder)", sys.stderr)
        return 1
    try:
        return run_lab(args.folder, port=args.port, browser=not args.no_browser,
                       language=args.lang)
    except (OSError, ValueError) as error:
        _say(f"bloomedu lab: {error}", sys.stderr)
        return 1


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (argparse exits with 2 on bad input).

    When the reader of its output goes away (``bloomedu size ... | head -1``), it stops
    quietly with status 0, as a Unix tool does: what was left to print had no reader.

    >>> main(["size", "--items", "1000", "--bits", "9586", "--hashes", "7"])
    items (n)             1,000
    bits (m)              9,586
    hash functions (k)    7
    memory                1,200 bytes = 1.17 KiB
    bits per item (m/n)   9.59
    false-positive rate   0.0100345 (classic (1 - e^(-kn/m))^k)
    exact rate            0.0100436 (kn independent uniform positions)
    lower bound           6.64 bits per item (log2(1/p)); this filter uses 1.44 times that
    0
    """
    try:
        return _run(argv)
    except BrokenPipeError:
        # The interpreter flushes stdout again at exit: point it at /dev/null first, so that
        # flush meets no closed pipe either (the recipe of Python's signal documentation).
        _silence_stdout()
        return 0
    except OSError as error:  # a full disk, a closed or unwritable output: said, never a traceback
        try:
            _say(f"bloomedu: its output could not be written ({error.strerror or error}); "
                 "what the command did before that is done", sys.stderr)
        except (OSError, ValueError):  # standard error is gone too: the status says it
            pass
        _silence_stdout()
        return 1


def _silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so the interpreter's flush at exit cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


def _run(argv: list[str] | None) -> int:
    parser, size = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.error("choose a command: size, lessons or lab")
    if args.command == "lessons":
        return _lessons(args)
    if args.command == "lab":
        return _lab(args)
    if (args.fpp is None) == (args.bits is None):
        size.error("give exactly one of --fpp (to size a filter) and --bits (to rate one)")
    try:
        report = size_report(bits=args.bits, hashes=args.hashes, items=args.items, fpp=args.fpp)
    except ValueError as error:  # each flag is in range, but together they ask too much
        size.error(str(error))
    _say("\n".join(report.lines()))
    sys.stdout.flush()  # a closed pipe or a full disk shows here, inside main, not at exit
    return 0
