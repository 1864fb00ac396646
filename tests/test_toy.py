"""The toy for one key (lesson 06): its view is the article's filter, bit for bit, and its panel is live.

The right answers are built here from a SaltedBloomFilter and its bit_indices, never taken
from the view itself.
"""

import io
import warnings

import matplotlib
import pytest

from bloomedu import SaltedBloomFilter
from bloomedu.teaching.toy import toy, toy_view

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FRUITS = ["apple", "banana", "cherry", "date"]


def test_the_bits_are_the_articles_filter_after_the_added_keys():
    bloom = SaltedBloomFilter(3, 5)
    for key in FRUITS:
        bloom.add(key)
    view = toy_view(FRUITS, "kiwi")
    assert list(view.bits) == bloom.bits.to_bools().tolist()
    assert list(view.positions) == bloom.bit_indices("kiwi")
    for bit in range(32):
        setters = [i for i, key in enumerate(FRUITS) if bit in bloom.bit_indices(key)]
        assert list(view.owners[bit]) == setters
        assert view.bits[bit] == bool(setters)


@pytest.mark.parametrize("key, verdict", [("apple", "added"), ("fig", "absent"),
                                          ("lime", "false positive"), ("", "no key")])
def test_each_verdict_agrees_with_the_filter(key, verdict):
    bloom = SaltedBloomFilter(3, 5)
    for added in FRUITS:
        bloom.add(added)
    view = toy_view(FRUITS, key)
    assert view.verdict == verdict
    if key:
        assert (key in bloom) == (verdict in ("added", "false positive"))


def test_a_false_positive_names_the_keys_it_borrowed_from():
    view = toy_view(FRUITS, "lime")
    borrowed = {FRUITS[i] for i in view.borrowed_from()}
    behind = {FRUITS[i] for p in view.positions for i in view.owners[p]}
    assert borrowed == behind and "lime" not in FRUITS
    text = view.text()
    assert "a false positive" in text and all(name in text for name in borrowed)
    assert text.count("set by") == len(set(view.positions))


def test_an_added_key_is_never_reported_absent():
    words = [f"key-{i}" for i in range(40)]
    for count in range(len(words)):
        view = toy_view(words[:count + 1], words[count])
        assert view.verdict == "added"


def test_adding_a_key_twice_changes_nothing():
    assert toy_view(["apple", "apple", "pear"], "pear") == toy_view(["apple", "pear"], "pear")


@pytest.mark.parametrize("call, error, words", [
    (lambda: toy_view("apple", "x"), TypeError, "added must be a list"),
    (lambda: toy_view(["apple", 3], "x"), TypeError, "added[1] is int"),
    (lambda: toy_view([], 7), TypeError, "key must be str"),
    (lambda: toy_view([], "x", hash_bits=9), ValueError, "hash_bits must be an int in 1..7"),
    (lambda: toy_view([], "x", num_hashes=0), ValueError, "num_hashes must be an int in 1..16"),
])
def test_bad_arguments_get_a_clear_error(call, error, words):
    with pytest.raises(error, match=words.replace("[", r"\[").replace("]", r"\]")
                       .replace(".", r"\.")):
        call()


def test_the_drawing_marks_the_keys_bits_and_names_their_keys():
    view = toy_view(FRUITS, "lime")
    ax = view.draw()
    cells = [t.get_text() for t in ax.texts]
    assert cells[0::2] == [str(i) for i in range(32)]  # every index
    assert cells[1::2] == [",".join(str(i + 1) for i in view.owners[b]) for b in range(32)]  # few keys
    assert "false positive" in ax.get_title()
    assert "1 apple" in ax.get_xlabel() and "4 date" in ax.get_xlabel()
    image = ax.get_images()[0].get_array()
    assert all(image.flat[p] == 2 for p in view.positions)  # set bits of the key: orange
    plt.close("all")


def _drawn(view):
    """The figure of a view, rendered as a notebook's inline backend saves it (bbox 'tight')."""
    ax = view.draw()
    ax.figure.savefig(io.BytesIO(), format="png", bbox_inches="tight")
    return ax


def test_keys_the_font_cannot_draw_give_no_missing_glyph_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "Glyph ... missing from font(s)" fails here
        ax = _drawn(toy_view(["\N{RED APPLE}", "banana", "\N{GRAPES}\N{GRAPES}"], "\N{PEAR}"))
    assert "\\U0001f350" in ax.get_title()  # the key, written as its escape
    assert "\\U0001f34e" in ax.get_xlabel() and "2 banana" in ax.get_xlabel()
    assert "\N{PEAR}" in toy_view(["banana"], "\N{PEAR}").text()  # the words keep the emoji
    plt.close("all")


def test_a_dollar_in_a_key_is_drawn_as_it_is_not_as_a_formula():
    ax = _drawn(toy_view(["$x^2$"], "a$b$"))
    assert ax.get_title().startswith(r"'a\$b\$'") and r"\$x^2\$" in ax.get_xlabel()
    plt.close("all")


@pytest.mark.parametrize("added, key", [
    (["apple"], "x" * 300),                       # a 300-character key
    (["a" * 300, "b" * 40], "pear"),              # long keys added
    ([f"key-{i}" for i in range(60)], "plum"),    # many keys added
])
def test_long_keys_never_shrink_the_drawing(added, key):
    reference = _drawn(toy_view(["apple"], "pear"))
    ax = _drawn(toy_view(added, key))
    figure = ax.figure
    box = figure.get_tightbbox(figure.canvas.get_renderer())  # what the inline backend crops to
    width, height = figure.get_size_inches()
    assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= width and box.y1 <= height
    assert ax.get_window_extent().width == pytest.approx(reference.get_window_extent().width)
    assert len(ax.get_title()) < 80 and all(len(line) <= 80 for line in ax.get_xlabel().splitlines())
    assert len(ax.get_xlabel().splitlines()) <= 2
    plt.close("all")


def test_many_keys_are_counted_under_the_drawing_when_not_all_fit():
    ax = _drawn(toy_view([f"key-{i}" for i in range(60)], ""))
    shown = ax.get_xlabel().replace("\n", "   ").removeprefix("keys added: ")
    listed = [name for name in shown.split("   ") if name[:1].isdigit()]
    assert shown.endswith(f"... {60 - len(listed)} more") and listed[0] == "1 key-0"
    plt.close("all")


def test_cell_numbers_are_readable_and_fit_their_cells():
    view = toy_view([f"key-{i}" for i in range(40)], "kiwi")
    ax = _drawn(view)
    assert min(text.get_fontsize() for text in ax.texts) >= 7
    assert max(len(text.get_text()) for text in ax.texts) <= 5
    for bit in range(32):
        owners, drawn = view.owners[bit], view.cell_owners(bit)
        if "+" in drawn:  # the first key and how many more
            first, more = drawn.split("+")
            assert (int(first), int(more)) == (owners[0] + 1, len(owners) - 1)
        else:
            assert drawn == ",".join(str(i + 1) for i in owners)
    plt.close("all")


@pytest.mark.parametrize("hash_bits", range(1, 8))
def test_every_size_of_the_toy_draws(hash_bits):
    view = toy_view(["apple", "banana"], "kiwi", hash_bits=hash_bits)
    ax = _drawn(view)
    assert ax.get_images()[0].get_array().size == 2 ** hash_bits
    assert [t.get_text() for t in ax.texts][0::2] == [str(i) for i in range(2 ** hash_bits)]
    plt.close("all")


def test_the_panel_follows_typing_and_adding():
    panel = toy(["apple"], "")
    box, add, empty = panel.children[0].children
    words = panel.children[2]
    assert "type a key" in words.value and add.disabled
    box.value = "pear"
    assert "key &#x27;pear&#x27;" in words.value and not add.disabled
    add.click()
    assert "keys added (2): 1 apple, 2 pear" in words.value and add.disabled
    box.value = "plum"
    assert "&#x27;plum&#x27;" in words.value
    empty.click()
    assert "keys added (0)" in words.value
    assert "bloomedu-toy" in panel._dom_classes
    plt.close("all")


def test_the_panels_m_and_k_place_the_same_keys_again():
    panel = toy(["apple", "banana"], "lime")
    (bits, hashes), words = panel.children[1].children, panel.children[2]
    assert (bits.value, hashes.value) == (5, 3)
    assert [label for label, _ in bits.options] == ["8 bits", "16 bits", "32 bits", "64 bits", "128 bits"]
    bits.value, hashes.value = 7, 5
    expected = toy_view(["apple", "banana"], "lime", num_hashes=5, hash_bits=7)
    assert "SaltedBloomFilter(num_hashes=5, hash_bits=7): 128 bits" in words.value
    assert f"bits {', '.join(map(str, expected.positions))}" in words.value
    hashes.value = 1
    assert "num_hashes=1, hash_bits=7" in words.value
    plt.close("all")
