"""The sizing command: ``bloomedu size`` answers article 2's question from the shell.

Expected figures are computed here from the formulas written out by hand
(m = -n ln p / (ln 2)^2, k = (m/n) ln 2, p = (1 - e^(-kn/m))^k), not by the
code under test.
"""

import contextlib
import io
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomedu import BloomFilter
from bloomedu.cli import human_bytes, main, size_report
from bloomedu.teaching.lessons import copy_lessons

ROOT = Path(__file__).resolve().parent.parent


def _fields(text: str) -> dict[str, str]:
    """The report's lines as {label: value}."""
    return {line[:22].strip(): line[22:] for line in text.splitlines() if line.strip()}


def _number(text: str) -> float:
    return float(re.match(r"[\d,.e+-]+", text).group(0).replace(",", ""))


def _classic(m, n, k):
    return (1 - math.exp(-k * n / m)) ** k


def test_size_from_items_and_rate_matches_the_formulas(capsys):
    assert main(["size", "--items", "1000000", "--fpp", "0.001"]) == 0
    fields = _fields(capsys.readouterr().out)
    m = math.ceil(-1_000_000 * math.log(0.001) / math.log(2) ** 2)
    assert _number(fields["bits (m)"]) == m
    assert _number(fields["hash functions (k)"]) == 10  # (m/n) ln 2 = 9.966
    words = math.ceil(m / 64)  # a filter stores its bits in whole 64-bit words
    assert fields["memory"] == f"{8 * words:,} bytes = 1.71 MiB ({8 * words / 1e6:.2f} MB)"
    assert fields["memory"].startswith("1,797,200 bytes")
    assert _number(fields["bits per item (m/n)"]) == pytest.approx(m / 1e6, abs=0.005)
    assert _number(fields["false-positive rate"]) == pytest.approx(_classic(m, 1e6, 10), rel=1e-5)
    assert _number(fields["lower bound"]) == pytest.approx(math.log2(1000), abs=0.005)
    assert _number(fields["target rate (p)"]) == 0.001


def test_size_agrees_with_the_filter_the_library_builds(capsys):
    for n, p in [(1_000_000, 0.001), (1000, 0.01), (50, 0.2)]:
        main(["size", "--items", str(n), "--fpp", str(p)])
        fields = _fields(capsys.readouterr().out)
        f = BloomFilter.from_capacity(n, p)
        assert (_number(fields["bits (m)"]), _number(fields["hash functions (k)"])) == \
            (f.num_bits, f.num_hashes)


@pytest.mark.parametrize("n, p", [(1_000_000, 0.001), (1000, 0.01), (50, 0.2), (1, 0.5),
                                  (10_000, 1e-6)])
def test_the_memory_is_the_bytes_the_filter_stores(capsys, n, p):
    main(["size", "--items", str(n), "--fpp", str(p)])
    memory = _fields(capsys.readouterr().out)["memory"]
    assert _number(memory) == BloomFilter.from_capacity(n, p).nbytes


@pytest.mark.parametrize("bits, expected", [
    (1, "8 bytes"),                      # one 64-bit word
    (8_000, "1,000 bytes"),              # under 1 KiB: bytes alone, no "0.00 MB"
    (9_586, "1,200 bytes = 1.17 KiB"),   # 150 words
    (8 * 2**20, "1,048,576 bytes = 1.00 MiB (1.05 MB)"),
    (2**32, "536,870,912 bytes = 512 MiB (536.87 MB)"),
])
def test_the_memory_is_written_in_units_that_fit_its_size(capsys, bits, expected):
    main(["size", "--items", "10", "--bits", str(bits)])
    memory = _fields(capsys.readouterr().out)["memory"]
    assert memory == expected
    assert "0.00" not in memory


def test_bits_gives_the_rate_of_a_given_size(capsys):
    assert main(["size", "--items", "1000", "--bits", "10000"]) == 0
    fields = _fields(capsys.readouterr().out)
    assert _number(fields["hash functions (k)"]) == 7  # 10 ln 2 = 6.93
    assert _number(fields["false-positive rate"]) == pytest.approx(_classic(10_000, 1000, 7), rel=1e-5)
    assert "target rate (p)" not in fields
    # the lower bound is log2(1/p) for the rate this size reaches
    assert _number(fields["lower bound"]) == pytest.approx(-math.log2(_classic(10_000, 1000, 7)),
                                                           abs=0.005)


def _exact_by_counting(m, n, k):
    """E[(X/m)^k], X the bits set by kn uniform throws, by Stirling numbers of the second kind."""
    throws = k * n
    stirling = [[0] * (throws + 1) for _ in range(throws + 1)]
    stirling[0][0] = 1
    for t in range(1, throws + 1):
        for i in range(1, t + 1):
            stirling[t][i] = i * stirling[t - 1][i] + stirling[t - 1][i - 1]
    return sum((i / m) ** k * math.comb(m, i) * math.factorial(i) * stirling[throws][i] / m ** throws
               for i in range(1, min(m, throws) + 1))


def test_exact_rate_is_printed_beside_the_classic_one(capsys):
    main(["size", "--items", "3", "--bits", "20", "--hashes", "2"])
    fields = _fields(capsys.readouterr().out)
    assert _number(fields["exact rate"]) == pytest.approx(_exact_by_counting(20, 3, 2), rel=1e-5)
    assert _number(fields["exact rate"]) > _number(fields["false-positive rate"])  # classic is below
    main(["size", "--items", "10", "--bits", "64", "--hashes", "600"])  # k up to 1024 is fast
    fields = _fields(capsys.readouterr().out)
    assert _number(fields["exact rate"]) == 1.0  # 6,000 positions in 64 bits set them all
    assert fields["lower bound"] == "not defined: the rate rounds to 0 or 1"


def test_hashes_fixes_k(capsys):
    main(["size", "--items", "1000", "--bits", "10000", "--hashes", "2"])
    fields = _fields(capsys.readouterr().out)
    assert _number(fields["hash functions (k)"]) == 2
    assert _number(fields["false-positive rate"]) == pytest.approx(_classic(10_000, 1000, 2), rel=1e-5)


def test_hashes_with_a_rate_gives_the_fewest_bits_for_that_k():
    report = size_report(hashes=3, items=1_000_000, fpp=0.001)
    assert report.num_hashes == 3
    assert _classic(report.num_bits, 1e6, 3) <= 0.001 < _classic(report.num_bits - 1, 1e6, 3)
    # fewer hash functions than the best k cost bits
    assert report.num_bits > size_report(items=1_000_000, fpp=0.001).num_bits


@pytest.mark.parametrize("text, value", [("1000000", 1_000_000), ("1_000_000", 1_000_000),
                                         ("1,000,000", 1_000_000), ("1e6", 1_000_000)])
def test_items_may_be_written_several_ways(capsys, text, value):
    main(["size", "--items", text, "--fpp", "0.01"])
    assert _number(_fields(capsys.readouterr().out)["items (n)"]) == value


@pytest.mark.parametrize("argv, message", [
    (["size", "--items", "0", "--fpp", "0.01"], "--items must be a positive whole number"),
    (["size", "--items", "2.5", "--fpp", "0.01"], "--items must be a positive whole number"),
    (["size", "--items", "ten", "--fpp", "0.01"], "--items must be a positive whole number"),
    (["size", "--items", "10", "--fpp", "1"], "strictly between 0 and 1"),
    (["size", "--items", "10", "--fpp", "0"], "strictly between 0 and 1"),
    (["size", "--items", "10", "--fpp", "nan"], "strictly between 0 and 1"),
    (["size", "--items", "10", "--bits", "-5"], "--bits must be a positive whole number"),
    (["size", "--items", "10", "--bits", "64", "--hashes", "0"], "--hashes must be a positive"),
    (["size", "--items", "10"], "exactly one of --fpp"),
    (["size", "--items", "10", "--fpp", "0.1", "--bits", "64"], "exactly one of --fpp"),
    (["size", "--fpp", "0.1"], "--items"),
    ([], "choose a command"),
])
def test_bad_input_exits_with_status_2_and_a_clear_message(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_human_bytes_units():
    assert [human_bytes(b) for b in (0, 1023, 1024, 1536, 10 * 2**20, 999 * 2**30)] == \
        ["0 B", "1023 B", "1.00 KiB", "1.50 KiB", "10.0 MiB", "999 GiB"]
    with pytest.raises(ValueError, match="nbytes"):
        human_bytes(-1)


def test_python_dash_m_runs_the_command():
    result = subprocess.run([sys.executable, "-m", "bloomedu", "size", "--items", "1000000",
                             "--fpp", "0.001"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "1.71 MiB" in result.stdout


def test_console_script_exits_with_status_2_on_bad_input():
    script = Path(sys.executable).with_name("bloomedu")
    assert script.exists(), "reinstall the project (pip install -e .) to get the bloomedu script"
    bad = subprocess.run([str(script), "size", "--items", "10", "--fpp", "5"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "strictly between 0 and 1" in bad.stderr
    good = subprocess.run([str(script), "size", "--items", "10", "--bits", "96"],
                          capture_output=True, text=True)
    assert good.returncode == 0 and "bits (m)" in good.stdout


# --- no argument string makes it print a traceback ------------------------------------------
EXTREMES = ["1e17", "1e308", "1e-300", "1e400", "1e-320", "-5", "-0.5", "nan", "inf", "-inf", "",
            " ", "0", "1", "2.5", "1e6", "1,000", "1024", "1025", "0.5", "0.999999999999",
            "9223372036854775807", "9223372036854775808", "1e999999999", "0x10", "1_0", "٣"]
values = st.one_of(st.sampled_from(EXTREMES), st.text(max_size=12),
                   st.floats(allow_nan=True, allow_infinity=True).map(repr),
                   st.integers(-2 ** 70, 2 ** 70).map(str))


def _flag(name, usual):
    """A flag left out, with a usual value, with an extreme one, or with any string at all."""
    return st.one_of(st.just([]), st.just([name, usual]),
                     st.builds(lambda value: [name, value], st.sampled_from(EXTREMES)),
                     st.builds(lambda value: [name, value], values))


@settings(deadline=None)
@given(_flag("--items", "1000"), _flag("--fpp", "0.01"), _flag("--bits", "9586"),
       _flag("--hashes", "7"), st.lists(st.sampled_from(["--items", "--fpp", "-k", "x"]), max_size=2))
def test_any_arguments_give_a_report_or_a_usage_error(items, fpp, bits, hashes, stray):
    argv = ["size"] + items + fpp + bits + hashes + stray
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exit_info:
            status = exit_info.code
    if status == 2:
        assert err.getvalue().strip().splitlines()[-1].startswith(("bloomedu size: error: ",
                                                                  "bloomedu: error: "))
    else:
        assert status == 0 and "bits (m)" in out.getvalue() and "exact rate" in out.getvalue()


@pytest.mark.parametrize("argv, message", [
    (["--items", "1000", "--fpp", "0.01", "--hashes", "1e17"], "--hashes must be a positive whole number up to 1024"),
    (["--items", "1e308", "--fpp", "0.01"], "--items must be a positive whole number up to 2**63-1"),
    (["--items", "1000", "--bits", "1e400"], "--bits must be a positive whole number up to 2**63-1"),
    (["--items", "1000", "--fpp", "1e-320"], "hash functions, more than 1024"),
    (["--items", "1000", "--fpp", "1e-300", "--hashes", "3"], "more than a filter can hold"),
    (["--items", "1000", "--fpp", "1e-320", "--hashes", "1"], "more than a filter can hold"),
    (["--items", "10", "--fpp", "5e-324", "--hashes", "2"], "more than a filter can hold"),
    (["--items", str(2 ** 63 - 1), "--fpp", "0.5"], "a filter can hold"),
    (["--items", "-5", "--fpp", "0.01"], "--items must be a positive whole number"),
    (["--items", "", "--fpp", "0.01"], "--items must be a positive whole number"),
    (["--items", "inf", "--fpp", "0.01"], "--items must be a positive whole number"),
    (["--items", "10", "--fpp", "inf"], "strictly between 0 and 1"),
    (["--items", "10", "--bits", "nan"], "--bits must be a positive whole number"),
])
def test_extreme_arguments_are_usage_errors_without_a_traceback(argv, message):
    done = subprocess.run([sys.executable, "-m", "bloomedu", "size", *argv], capture_output=True,
                          text=True, cwd=ROOT)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_the_tiniest_rate_a_double_holds_is_still_sized(capsys):
    assert main(["size", "--items", "1000", "--fpp", "1e-300"]) == 0  # k = 997, under 1024
    fields = _fields(capsys.readouterr().out)
    assert _number(fields["hash functions (k)"]) == 997
    assert _number(fields["exact rate"]) == pytest.approx(1e-300, rel=0.2)


# --- the command in a pipeline and on any terminal -------------------------------------------------
def _run_into_a_closed_pipe(argv):
    """Run the console script with its output a pipe whose reader has already gone
    (``bloomedu size ... | true``): every write meets EPIPE."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([str(Path(sys.executable).with_name("bloomedu")), *argv],
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)


@pytest.mark.parametrize("argv", [["size", "--items", "1000000", "--fpp", "0.001"],
                                  ["size", "--items", "10", "--bits", "96", "--hashes", "3"]])
def test_a_closed_output_pipe_ends_the_command_quietly(argv):
    done = _run_into_a_closed_pipe(argv)
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize("output", ["a full disk", "closed"])
@pytest.mark.parametrize("command", ["size", "lessons"])
def test_an_output_that_cannot_be_written_ends_with_a_message_and_status_1(output, command,
                                                                           tmp_path):
    """/dev/full fails every write with ENOSPC; a closed descriptor 1 leaves no stdout at all.
    Either way the command says so on standard error, with no traceback, and exits 1."""
    argv = {"size": ["size", "--items", "1000", "--fpp", "0.01"],
            "lessons": ["lessons", str(tmp_path / "class"), "--no-solutions"]}[command]
    script = str(Path(sys.executable).with_name("bloomedu"))
    if output == "a full disk":
        with open("/dev/full", "w") as full:
            done = subprocess.run([script, *argv], stdout=full, stderr=subprocess.PIPE,
                                  text=True, timeout=120)
    else:
        done = subprocess.run([script, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, timeout=120, preexec_fn=lambda: os.close(1))
    assert done.returncode == 1, done.stderr
    assert "could not be written" in done.stderr and "Traceback" not in done.stderr, done.stderr
    if command == "lessons":  # the copy itself was done before the report failed
        assert (tmp_path / "class" / "01_seen_ids.ipynb").is_file()


def test_a_folder_the_terminal_cannot_print_is_copied_and_named_without_a_traceback(tmp_path):
    target = tmp_path / "classe di città \u2603"
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    done = subprocess.run([str(Path(sys.executable).with_name("bloomedu")), "lessons", str(target),
                           "--no-solutions"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "citt\\xe0 \\u2603" in done.stdout and (target / "01_seen_ids.ipynb").is_file()
    again = subprocess.run([str(Path(sys.executable).with_name("bloomedu")), "lessons", str(target),
                            "--no-solutions"], capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 1 and "exists" in again.stderr and "Traceback" not in again.stderr


def test_an_empty_folder_name_is_refused_not_read_as_the_current_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["lessons", ""]) == 1
    assert "FOLDER must name a folder" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="target must name a folder"):
        copy_lessons("")
