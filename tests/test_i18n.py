"""The library's messages in Italian (bloomedu.i18n and its catalog): the language setting, the
catalog's health, and what predict/reveal and the checkers print in each language."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bloomedu import i18n
from bloomedu.i18n import _, language, phrase, say, set_language
from bloomedu.teaching.experiments import format_table
from bloomedu.teaching.exercises import check, judge, judge_measured
from bloomedu.teaching.predict import predict
from tools import po
from tools.i18n_catalog import (catalog_path, english_prints, lesson_messages, lesson_twins,
                                looked_up_in_code, looked_up_in_lessons, messages_in,
                                package_messages)
from tools.lesson_cells import called_name

ROOT = Path(__file__).resolve().parent.parent
PO = catalog_path()


@pytest.fixture(autouse=True)
def english_again():
    """Every test starts and ends with the library's default state (the language not chosen)."""
    i18n._current.clear()
    yield
    i18n._current.clear()


@pytest.fixture
def italian(monkeypatch):
    monkeypatch.delenv(i18n.ENVIRONMENT, raising=False)
    set_language("it")


def lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


# --- the setting --------------------------------------------------------------------------------

@pytest.mark.parametrize("code", ["fr", "IT", "it_IT", "", None, 1])
def test_an_unknown_language_is_refused_naming_the_argument_and_the_choices(code):
    with pytest.raises(ValueError, match=r"^code must be one of 'en', 'it', got "):
        set_language(code)


def test_a_refused_language_leaves_the_current_one(italian):
    with pytest.raises(ValueError):
        set_language("fr")
    assert language() == "it" and _("Right.") == "Corretto!"


def test_english_is_the_default_and_is_never_translated(monkeypatch):
    monkeypatch.delenv(i18n.ENVIRONMENT, raising=False)
    assert language() == "en"
    assert _("Right.") == "Right." and _("a message no catalog has") == "a message no catalog has"


def test_the_environment_chooses_the_default(monkeypatch):
    monkeypatch.setenv(i18n.ENVIRONMENT, "it")
    assert language() == "it" and _("Right.") == "Corretto!"
    set_language("en")  # the call wins over the environment
    assert language() == "en" and _("Right.") == "Right."


def test_an_unknown_language_in_the_environment_warns_and_keeps_english(monkeypatch):
    monkeypatch.setenv(i18n.ENVIRONMENT, "klingon")
    with pytest.warns(UserWarning, match=r"BLOOMEDU_LANG must be one of 'en', 'it', got 'klingon'"):
        assert language() == "en"
    assert _("Right.") == "Right."


def test_a_new_python_reads_the_environment(tmp_path):
    code = ("from bloomedu.teaching.predict import predict; "
            "predict('q', None).reveal(3)")
    env = {"BLOOMEDU_LANG": "it", "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          cwd=tmp_path, check=True)
    assert done.stdout.splitlines()[0] == "Prevedi: q"
    assert done.stdout.splitlines()[-1] == "Misurato: 3."


def test_the_empty_message_is_not_the_catalog_header(italian):
    assert _("") == ""


# --- the catalog --------------------------------------------------------------------------------

def catalog() -> list[po.Entry]:
    return po.loads(PO.read_text(encoding="utf-8"), str(PO))


def test_the_mo_is_the_compile_of_the_po():
    assert PO.with_suffix(".mo").read_bytes() == po.mo_bytes(catalog()), \
        "bloomedu.mo is stale: python -m tools.i18n_catalog compile"


def test_every_entry_is_translated_and_none_is_fuzzy():
    undone = [entry.msgid for entry in catalog() if not entry.done]
    assert not undone, f"translate these in {PO.relative_to(ROOT)}: {undone}"


def test_every_message_the_package_passes_to_gettext_is_in_the_catalog():
    messages = package_messages()
    assert len(messages) > 50  # the scan finds the package's messages at all
    known = {entry.msgid for entry in catalog()}
    missing = {message: places for message, places in messages.items() if message not in known}
    assert not missing, f"not in the catalog (python -m tools.i18n_catalog update): {missing}"


def test_every_message_the_lessons_say_is_in_the_catalog():
    messages = lesson_messages()
    assert len(messages) > 300  # the scan finds the lessons' say() and phrase() at all
    known = {entry.msgid for entry in catalog()}
    missing = {message: places for message, places in messages.items() if message not in known}
    assert not missing, f"not in the catalog (python -m tools.i18n_catalog update): {missing}"


def test_the_scan_finds_each_way_of_marking_a_message():
    tree = ast.parse("_('a'); gettext('b'); N_('c'); _(name); other('d'); _(f'{x}'); "
                     "say('e', n=1); phrase('f'); say(f'{g}')")
    assert [message for message, _place in messages_in(tree, "f.py")] == ["a", "b", "c", "e", "f"]


def test_every_translation_keeps_the_fields_of_its_english():
    fields = re.compile(r"\{[^{}]*\}")
    for entry in catalog():
        assert sorted(fields.findall(entry.msgstr)) == sorted(fields.findall(entry.msgid)), entry.msgid


def test_the_wheel_carries_the_catalog():
    text = (ROOT / "pyproject.toml").read_text()
    assert '"bloomedu.i18n" = ["locale/*/LC_MESSAGES/bloomedu.mo"' in text


# --- predict and reveal -------------------------------------------------------------------------

def test_say_and_phrase_fill_the_fields_of_the_translation(capsys, italian):
    say("Correct: {what} = {value}.", what="k", value=7)
    assert lines(capsys) == ["Corretto! k = 7."]
    assert phrase("Fill of a filter with k = {k}", k=3) == "Riempimento di un filtro con k = 3"
    assert phrase("a sentence no catalog has, {n:,} times", n=1234) == \
        "a sentence no catalog has, 1,234 times"


def test_say_in_english_is_print_of_the_formatted_english(capsys):
    say("{n:>6,d} keys, {rate:.2%} measured", n=12345, rate=0.01234)
    assert lines(capsys) == [f"{12345:>6,d} keys, {0.01234:.2%} measured"]


@pytest.mark.parametrize("message, fields, error", [
    (b"bytes", {}, r"^message must be a str, got bytes$"),
    (None, {}, r"^message must be a str, got NoneType$"),
    ("{n} keys", {"m": 1}, r"^fields: '\{n\} keys' needs n, got m$"),
    ("{} keys", {}, r"^fields: '\{\} keys' has a field without a name; name it, as in \{n\}$"),
])
def test_say_refuses_a_message_it_cannot_fill_naming_what_is_wrong(capsys, message, fields, error):
    with pytest.raises(TypeError, match=error):
        say(message, **fields)
    assert capsys.readouterr().out == ""


def test_format_table_heads_its_columns_in_italian_as_wide_as_they_need(italian):
    lines_ = format_table([{"rate": 0.5, "m": 8}], ["m", "rate"], float_format=".1f").splitlines()
    assert lines_ == ["m  tasso", "8    0.5"]
    set_language("en")
    assert format_table([{"rate": 0.5, "m": 8}], ["m", "rate"], float_format=".1f").splitlines() \
        == ["m  rate", "8   0.5"]


def test_the_size_report_in_italian_keeps_its_values_in_one_column(capsys, italian):
    from bloomedu.cli import main
    assert main(["size", "--items", "1000000", "--fpp", "0.001"]) == 0
    report = lines(capsys)
    assert report[0].split() == ["elementi", "(n)", "1,000,000"]
    assert report[4].split() == ["memoria", "1,797,200", "byte", "=", "1.71", "MiB", "(1.80", "MB)"]
    assert report[-1].startswith("limite inferiore") and "questo filtro ne usa 1.44 volte" in report[-1]
    columns = {re.search(r"\S {2,}(?=\S)", line).end() for line in report}
    assert len(columns) == 1, report  # every value starts in the same column


def test_predict_and_reveal_in_italian(capsys, italian):
    guess = predict("How many?", None)
    assert lines(capsys) == ["Prevedi: How many?",
                             "La tua previsione: ancora nessuna. Sostituisci None con la tua "
                             "previsione ed esegui la cella prima di continuare a leggere."]
    guess.reveal(1940)
    assert lines(capsys) == ["Sopra non è registrata nessuna previsione: la prossima volta "
                             "impegnati su una prima della risposta.", "Misurato: 1,940."]
    predict("q", 300).reveal(940, label="Counted")
    assert lines(capsys)[2:] == ["La tua previsione: 300. Contati: 940.",
                                 "Eri 640 troppo in basso (un fattore 3.13): l'ordine di grandezza giusto."]
    predict("q", 0.0104).reveal(0.01, label="a label of the lesson's own")
    assert lines(capsys)[2:] == ["La tua previsione: 0.0104. a label of the lesson's own: 0.01.",
                                 "Eri 0.0004 troppo in alto (un fattore 1.04): vicino."]


def test_a_choice_is_shown_in_italian_and_taken_in_either_language(capsys, italian):
    guess = predict("q", "più", choices=("more", "fewer"))
    assert lines(capsys)[0].endswith(" (una tra 'più', 'meno')")
    guess.reveal("more")
    assert lines(capsys) == ["La tua previsione: 'più'. La risposta: 'più'.", "Corretto!"]
    predict("q", "Fewer", choices=("more", "fewer")).reveal("more")  # the code's English works too
    assert lines(capsys)[-1] == "Non questa volta: leggi sotto il perché."
    predict("q", None, choices=("more", "fewer")).reveal("fewer")
    assert lines(capsys)[-1] == "La risposta: 'meno'."
    with pytest.raises(ValueError, match=r"^guess must be None or one of 'più', 'meno', got 'molti'$"):
        predict("q", "molti", choices=("more", "fewer"))


def test_a_choice_in_italian(capsys, italian):
    predict("Better?", "worse", choices=("better", "worse")).reveal("better")
    assert lines(capsys) == ["Prevedi: Better? (una tra 'better', 'worse')",
                             "La tua previsione: 'worse'. La risposta arriva più sotto: continua a leggere.",
                             "La tua previsione: 'worse'. La risposta: 'better'.",
                             "Non questa volta: leggi sotto il perché."]


def test_english_after_italian_is_the_english_of_before(capsys):
    def session():
        predict("How many?", 30).reveal(34)
        predict("Which?", None, choices=("a", "b")).reveal("a")
        return capsys.readouterr().out
    before = session()
    set_language("it")
    assert session() != before
    set_language("en")
    assert session() == before
    assert before.splitlines()[2:4] == ["Your guess: 30. Measured: 34.",
                                        "You were 4 too low (a factor of 1.13): close."]


# --- the checkers -------------------------------------------------------------------------------

def test_the_checkers_in_italian(capsys, italian):
    check.optimal_k(None, num_bits=10_000, n=1000)
    assert lines(capsys) == ["Nessuna risposta ancora: sostituisci None con k."]
    check.optimal_k("seven", num_bits=10_000, n=1000)
    assert lines(capsys) == ["Non ancora: la risposta deve essere un numero (k), non un str ('seven')."]
    judge(7, 7, "k")
    assert lines(capsys) == ["Corretto! k = 7."]
    judge(9, 7, "k", hint="k = (m/n) ln 2")
    assert lines(capsys) == ["Non ancora: 9 è troppo alto per k. Suggerimento: k = (m/n) ln 2"]
    judge(0.7, 0.007, "the rate", unit="rate")
    assert lines(capsys) == ["Non ancora: hai dato una percentuale; dai il tasso come frazione (1% è 0.01)."]
    judge(8_000, 1_000, "the size", unit="bytes")
    assert lines(capsys) == ["Non ancora: hai dato dei bit; la domanda chiede byte (8 bit ciascuno)."]


def test_the_measured_checks_in_italian(capsys, italian):
    judge_measured(0.0104, 0.0100, 0.0003, "the measured rate", trials=100_000)
    assert lines(capsys) == ["Corretto! 0.0104 è entro 4 deviazioni standard (4 x 0.0003) dal "
                             "valore atteso 0.01."]
    judge_measured(1040, 0.0100, 0.0003, "the measured rate", trials=100_000)
    assert lines(capsys) == ["Non ancora: hai dato un conteggio (1,040 su 100,000 chiavi); dividi "
                             "per il numero di chiavi provate."]
    judge_measured(0.02, 0.0100, 0.0003, "the rate", trials=100_000)
    assert lines(capsys)[0].startswith("Non ancora: 0.02 dista 33.3 deviazioni standard dal valore "
                                       "0.01 atteso per")


# --- the toy, the explorer and the plots --------------------------------------------------------

def test_the_toy_in_italian(italian):
    from bloomedu.teaching.toy import toy_view
    view = toy_view(["apple", "banana", "cherry", "date", "elderberry"], "melon")
    assert view.alt() == ("I 32 bit del giocattolo in righe da 16, 12 dei quali messi a 1 da 5 chiavi "
                          "aggiunte; 'melon' accende i bit 12, 10 e 8, tutti messi a 1 da altre "
                          "chiavi (banana, date, elderberry): un falso positivo.")
    text = view.text().splitlines()
    assert text[0] == "BloomFilter(num_bits=32, num_hashes=3): 32 bit, 12 a 1"
    assert text[-1].startswith("tutti i 3 bit sono a 1, ma 'melon' non è mai stata aggiunta: "
                               "un falso positivo")
    assert toy_view(["apple"]).alt().endswith("da 1 chiave aggiunta; ancora nessuna chiave scritta.")
    ax = view.draw()
    assert ax.get_title() == "'melon': tutti i bit a 1, mai aggiunta: un falso positivo"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "a 0", "a 1", "chiave, bit a 1", "chiave, bit a 0"]
    import matplotlib.pyplot as plt
    plt.close("all")


def test_the_toy_panel_in_italian(italian):
    from bloomedu.teaching.toy import toy
    panel = toy(["apple"], "pear")
    (box, add, empty), (bits, hashes) = panel.children[0].children, panel.children[1].children
    assert (box.description, box.placeholder, add.description, empty.description) == (
        "chiave", "scrivi una chiave", "aggiungila", "svuota il filtro")
    assert bits.options[0][0] == "8 bit"
    assert "chiavi aggiunte (1): 1 apple" in panel.children[2].value
    import matplotlib.pyplot as plt
    plt.close("all")


def test_the_explorer_in_italian(italian):
    from bloomedu.teaching.explorer import explore, explorer
    result = explore(num_bits=50_000, num_hashes=8, n=1000, num_queries=5000)
    assert result.summary().splitlines() == [
        "m = 50000 bit, k = 8, n = 1000, m/n = 50.00, chiavi = uint64",
        "tasso misurato   0 su 5000 chiavi assenti: sotto 0.00077 (limite superiore di Wilson al 95%)",
        "formula classica 2.28e-07",
        "formula esatta   2.28e-07",
        "riempimento      0.1480  (atteso 0.1479)",
        "k ottimale       35",
        "nessun falso positivo a k = 4-16, 19, 23, 28, 34, 35: disegnati a 0.00077, il limite superiore"]
    assert result.describe().startswith("Tasso di falsi positivi in funzione di k, da 1 a 35 "
                                        "funzioni di hash, per m = 50,000 bit e n = 1,000 elementi")
    ax = result.plot()
    assert ax.get_xlabel() == "k (funzioni di hash)"
    assert ax.get_ylabel() == "tasso di falsi positivi"
    assert ax.get_title() == "Tasso di falsi positivi, m = 50000, n = 1000, chiavi uint64"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "classica (1 - e^(-kn/m))^k", "esatta", "attuale", "0 su 5,000: sotto 7.7e-04 (95%)",
        "misurato"]
    panel = explorer()
    assert [child.description for child in panel.children[0].children] == [
        "m (bit)", "k (hash)", "n (elementi)", "chiavi", "curva su"]
    import matplotlib.pyplot as plt
    plt.close("all")


def test_the_plots_and_a_figure_in_italian(italian):
    import matplotlib.pyplot as plt
    from types import SimpleNamespace as Row
    from bloomedu.teaching.classroom import fill_curve, plot_fill
    from bloomedu.teaching.plots import decorate, draw_rate_sweep, new_axes, show
    from bloomedu.teaching.space_curves import curves, draw_bits_per_key
    from bloomedu import BloomFilter
    rows = [Row(rate=r, low=r / 2, high=r * 2, classic=r, exact=r) for r in (0.1, 0.01)]
    ax = draw_rate_sweep([1, 2], rows, xlabel="k", optimum=1.5)
    assert ax.get_ylabel() == "tasso di falsi positivi p"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "Wilson 95%", "esatta", "classica", "misurato", "(m/n) ln 2 = 1.50"]
    ax = plot_fill(fill_curve(BloomFilter(1000, 3), range(200), points=4))
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == (
        "Riempimento di un filtro con k = 3", "chiavi inserite (n)", "frazione di bit a 1")
    ax = draw_bits_per_key(curves())
    assert ax.get_title() == "Bit per chiave in funzione del tasso (linee: formule, punti: misurati)"
    assert "filtro di Bloom" in [t.get_text() for t in ax.get_legend().get_texts()]
    ax = new_axes(); ax.plot([0, 1], [1, 0], label="measured")
    decorate(ax, title="a title no catalog has", xlabel="Measured")
    assert (ax.get_title(), ax.get_xlabel()) == ("a title no catalog has", "Misurato")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["misurato"]
    assert repr(show("A line falling from 1 to 0 as x goes from 0 to 1.")) == \
        "Figura: A line falling from 1 to 0 as x goes from 0 to 1."
    plt.close("all")


def test_decorate_s_legend_options_keep_the_labels_translated(italian):
    import matplotlib.pyplot as plt
    from bloomedu.teaching.plots import decorate, new_axes
    ax = new_axes(); ax.plot([0, 1], [1, 0], label="measured"); ax.plot([0, 1], [0, 1], label="exact")
    decorate(ax, legend=dict(loc="upper center", fontsize=7, ncols=2, title="measured"))
    shown = ax.get_legend()
    assert [t.get_text() for t in shown.get_texts()] == ["misurato", "esatta"]
    assert shown.get_title().get_text() == "misurato"
    assert [t.get_fontsize() for t in shown.get_texts()] == [7.0, 7.0]
    assert shown._ncols == 2 and shown._loc == 9  # matplotlib's code for "upper center"
    with pytest.raises(TypeError, match="legend must be a dict"):
        decorate(ax, legend="upper center")
    with pytest.raises(ValueError, match="legend must not set labels"):
        decorate(ax, legend=dict(labels=["a", "b"]))
    ax = new_axes(); ax.plot([0, 1], [1, 0], label="measured")
    assert decorate(ax, title="measured", legend=False).get_legend() is None
    plt.close("all")


def test_draw_bit_groups_outlines_cells_and_names_them_in_italian(italian):
    import matplotlib.pyplot as plt
    from bloomedu.teaching.plots import draw_bit_groups
    ax = draw_bit_groups([1, 0, 0, 1], {"set": [0]}, width=4, outlined={"measured": [2, 3]})
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a 0", "a 1", "a 1", "misurato"]
    assert sorted(p.get_xy() for p in ax.patches) == [(1.5, -0.5), (2.5, -0.5)]
    with pytest.raises(ValueError, match="outlined must have at most 2"):
        draw_bit_groups([1, 0], {}, outlined={"a": [0], "b": [1], "c": [1]})
    plt.close("all")


def test_decorate_keeps_a_constrained_layout():
    import matplotlib.pyplot as plt
    from matplotlib.layout_engine import ConstrainedLayoutEngine
    from bloomedu.teaching.plots import decorate
    fig, axes = plt.subplots(1, 2, layout="constrained")
    decorate(axes[0], title="left")
    assert isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)
    plt.close("all")


def test_the_classroom_in_italian(italian):
    from bloomedu.teaching.classroom import BitSetters, Collision, FalsePositive
    assert str(Collision("a", "b", 7, 2)) == "'a' e 'b' hanno lo stesso hash, 7 (trovati dopo 2 tentativi)"
    assert str(FalsePositive("x", (BitSetters(3, True, ("a", "b")),), 9)).splitlines() == [
        "'x' non è mai stato inserito, eppure i suoi 1 bit sono tutti a 1 (trovato dopo 9 tentativi):",
        "  bit 3 messo a 1 da 'a', 'b'"]


def test_the_exercises_own_explanations_in_italian(capsys, italian):
    check.optimal_k(3, num_bits=10_000, n=1000)
    assert lines(capsys) == ["Non ancora: hai usato log10 invece di ln: k = (m/n) ln 2."]
    check.optimal_k(5, num_bits=10_000, n=1000)
    assert lines(capsys) == ["Non ancora: il tuo k = 5 è il miglior k intero quando m/n è tra 6.5 "
                             "e 7.9, ma questo filtro ha m/n = 10."]
    check.optimal_k(7, num_bits=10_000, n=1000)
    assert lines(capsys) == ["Corretto! k = 7."]
    check.sized_num_bits(1, n=50_000, p=0.02)
    assert lines(capsys) == ["Non ancora: 1 è troppo basso per il numero di bit m. Suggerimento: "
                             "m = -n ln p / (ln 2)^2, arrotondato per eccesso a un bit intero."]


def test_update_keeps_what_the_package_and_lessons_use_and_drops_what_is_gone(tmp_path):
    from tools.i18n_catalog import compile_catalog, update
    package = tmp_path / "bloomedu"
    package.mkdir()
    (package / "m.py").write_text("from bloomedu.i18n import _\nprint(_('Right.'))\nprint(_('New one'))\n")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "05_x.py").write_text(
        '# %%\nguess = predict("How many?", None)\nsay("{n:,} left", n=3)\n')
    po_path = catalog_path("it", package)
    po_path.parent.mkdir(parents=True)
    po_path.write_text(po.dumps([
        po.Entry("Right.", "Corretto!", references=["bloomedu/m.py:2"]),
        po.Entry("How many?", "Quanti?", references=["notebooks/05_x.py:9"]),
        po.Entry("{n:,} left", "ne restano {n:,}", references=["notebooks/05_x.py:1"]),
        po.Entry("A question no lesson asks now", "Sparita", references=["notebooks/05_x.py:4"]),
        po.Entry("Gone from the code", "Sparito", references=["bloomedu/m.py:9"])]), encoding="utf-8")
    update("it", package)
    entries = {e.msgid: e for e in po.loads(po_path.read_text(encoding="utf-8"))}
    assert sorted(entries) == ["How many?", "New one", "Right.", "{n:,} left"]
    assert (entries["Right."].msgstr, entries["New one"].msgstr, entries["How many?"].msgstr) == (
        "Corretto!", "", "Quanti?")
    assert entries["How many?"].references == ["notebooks/05_x.py:2"]  # where it is now
    assert entries["{n:,} left"].references == ["notebooks/05_x.py:3"]
    assert po_path.with_suffix(".mo").read_bytes() == compile_catalog("it", package).read_bytes()


# --- what the lessons' code hands the library ---------------------------------------------------

def test_the_scan_of_the_lessons_finds_each_kind_of_text_the_library_looks_up():
    source = ('# %%\nguess = predict("How many?", None)\nguess.reveal(3, label="Counted")\n'
              'show("05")\ndraw_bytes_per_item(s, d, 36, "reference")\n'
              '# %%\nax.plot(x, y, label="drawn by decorate")\n'
              'decorate(ax, title="A  title", xlabel=f"n = {n}", yscale="log")\n'
              'show("A figure  sentence\\n of at least six words.")\n'
              '# %%\nax.plot(x, y, label="redrawn by legend")\ndecorate(ax)\nax.legend()\n'
              'ax.set(title="not looked up")\n'
              '# %%\nax.plot(x, y, label="drawn with options")\n'
              'decorate(ax, legend=dict(loc="upper center", title="Legend title"))\n'
              'draw_bit_groups(b, {"key": [1]}, outlined={"padding": [9]})\n'
              'print(format_table(rows, ["num_bits", "rate", "p", "bits/item"]))\n'
              'predict("Which?", None, choices=("more", "fewer"))\n'
              '# %%\nstored = {"kept by name": [1], phrase("said"): [2]}\n'
              'draw_bytes_per_item(sizes, stored, 4, "ref")\n')
    literals, formatted = looked_up_in_code(source, "l.py")
    assert literals == {"How many?": ["l.py:2"], "Counted": ["l.py:3"],
                        "reference": ["l.py:5"], "drawn by decorate": ["l.py:7"],
                        "A  title": ["l.py:8"], "A figure sentence of at least six words.": ["l.py:9"],
                        "drawn with options": ["l.py:16"], "Legend title": ["l.py:17"],
                        "key": ["l.py:18"], "padding": ["l.py:18"], "rate": ["l.py:19"],
                        "bits/item": ["l.py:19"], "Which?": ["l.py:20"], "more": ["l.py:20"],
                        "fewer": ["l.py:20"], "kept by name": ["l.py:22"], "ref": ["l.py:23"]}
    assert formatted == ["l.py:8"]


def test_the_lessons_print_no_english_but_through_say():
    assert len(lesson_twins()) == len(list(ROOT.glob("notebooks/*.ipynb"))) + len(
        list(ROOT.glob("notebooks/deeper/*.ipynb"))) + len(list(ROOT.glob("notebooks/solutions/*.ipynb")))
    found = [place for path in lesson_twins()
             for place in english_prints(path.read_text(encoding="utf-8"),
                                         path.relative_to(ROOT).as_posix())]
    assert not found, ("these print English the Italian edition cannot translate; print them "
                       f"with say('...', field=value) and add the Italian to the catalog: {found}")


def test_the_print_scan_finds_english_wherever_print_shows_it():
    source = ('print(f"{n:,} keys")\nprint(f"{\'rate\':>8} {n:8d}")\nprint("a" + "b" + "cd")\n'
              'print(x if y else "none")\nprint(*["ok"], sep="\\n")\n'
              'print(f"{n:8d} {m:8.3f}")\nprint(kept)\nprint(", ".join(words))\n'
              'print(format_table(rows, ["rate"]))\nprint("m = " + str(m))\nsay("{n} keys", n=n)\n')
    assert english_prints(source, "l.py") == ["l.py:1", "l.py:2", "l.py:3", "l.py:4", "l.py:5"]


def test_the_lessons_hand_say_and_phrase_only_literals_a_catalog_can_find():
    found = []
    for path in lesson_twins():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and called_name(node) in ("say", "phrase")
                    and not (node.args and isinstance(node.args[0], ast.Constant))):
                found.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno}")
    assert not found, f"say/phrase need the literal English, not an f-string or a name: {found}"


def test_every_text_the_lessons_code_hands_the_library_has_an_italian_entry(italian):
    literals, formatted = looked_up_in_lessons()
    assert len(literals) > 150  # the scan reads the lessons at all
    assert not formatted, ("an f-string handed to the library is never found in the catalog: "
                           f"build it with phrase('...', field=value): {formatted}")
    entries = {entry.msgid: entry for entry in catalog()}
    missing = {text: places for text, places in literals.items()
               if text not in entries or not entries[text].done}
    assert not missing, (f"add these to {PO.relative_to(ROOT)} with a '#: notebooks/...' "
                         f"reference and their Italian, then compile: {missing}")
    for text in literals:  # and the library really shows the Italian
        assert _(text) == entries[text].msgstr
