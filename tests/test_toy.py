"""The toy for one key (lesson 06): its view is BloomFilter(m, k), bit for bit, and its panel is live.

The right answers are built here from a BloomFilter and its bit_indices, never taken from the
view itself; the site's toy page computes the same positions (tests/test_toy_page.py).
"""

import io
import warnings

import matplotlib
import pytest

from bloomedu import BloomFilter
from bloomedu.teaching.toy import toy, toy_view

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FRUITS = ["apple", "banana", "cherry", "date", "elderberry"]  # lesson 06's


def test_the_bits_are_the_librarys_filter_after_the_added_keys():
    bloom = BloomFilter(32, 3)
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
                                          ("melon", "false positive"), ("", "no key")])
def test_each_verdict_agrees_with_the_filter(key, verdict):
    bloom = BloomFilter(32, 3)
    for added in FRUITS:
        bloom.add(added)
    view = toy_view(FRUITS, key)
    assert view.verdict == verdict
    if key:
        assert (key in bloom) == (verdict in ("added", "false positive"))


def test_a_false_positive_names_the_keys_it_borrowed_from():
    view = toy_view(FRUITS, "melon")
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
    (lambda: toy_view([], "x", num_bits=129), ValueError, "num_bits must be an int in 1..128"),
    (lambda: toy_view([], "x", num_bits=0), ValueError, "num_bits must be an int in 1..128"),
    (lambda: toy_view([], "x", num_hashes=0), ValueError, "num_hashes must be an int in 1..16"),
])
def test_bad_arguments_get_a_clear_error(call, error, words):
    with pytest.raises(error, match=words.replace("[", r"\[").replace("]", r"\]")
                       .replace(".", r"\.")):
        call()


def test_the_drawing_marks_the_keys_bits_and_names_their_keys():
    view = toy_view(FRUITS, "melon")
    ax = view.draw()
    cells = [t.get_text() for t in ax.texts]
    assert cells[0::2] == [str(i) for i in range(32)]  # every index
    assert cells[1::2] == [view.cell_owners(b) for b in range(32)]
    assert cells[1 + 2 * 12] == "4" and cells[1 + 2 * 10] == "5"  # melon's bits 12 and 10: date, elderberry
    assert "false positive" in ax.get_title()
    assert "1 apple" in ax.get_xlabel() and "5 elderberry" in ax.get_xlabel()
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


@pytest.mark.parametrize("num_bits", [1, 2, 7, 8, 16, 32, 50, 100, 128])
def test_every_size_of_the_toy_draws(num_bits):
    view = toy_view(["apple", "banana"], "kiwi", num_bits=num_bits)
    ax = _drawn(view)
    image = ax.get_images()[0].get_array()
    assert image.count() == num_bits and image.size == -(-num_bits // 16) * min(16, num_bits)
    assert [t.get_text() for t in ax.texts][0::2] == [str(i) for i in range(num_bits)]
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
    assert (bits.value, hashes.value) == (32, 3)
    assert [label for label, _ in bits.options] == ["8 bits", "16 bits", "32 bits", "64 bits",
                                                    "100 bits", "128 bits"]
    bits.value, hashes.value = 128, 5
    expected = toy_view(["apple", "banana"], "lime", num_bits=128, num_hashes=5)
    assert "BloomFilter(num_bits=128, num_hashes=5): 128 bits" in words.value
    assert f"bits {', '.join(map(str, expected.positions))}" in words.value
    hashes.value = 1
    assert "num_bits=128, num_hashes=1" in words.value
    plt.close("all")


@pytest.mark.parametrize("num_bits, num_hashes", [(32, 3), (100, 4), (128, 8), (7, 2)])
def test_the_toy_lights_the_positions_of_the_sites_toy_page(num_bits, num_hashes):
    """One toy: the notebook's positions are key_positions, which the page's script reproduces."""
    from bloomedu.core.filter import key_positions

    for key in FRUITS + ["melon", "lime", "789", ""]:
        view = toy_view(FRUITS, key, num_bits=num_bits, num_hashes=num_hashes)
        expected = key_positions(key, num_bits=num_bits, num_hashes=num_hashes) if key else []
        assert list(view.positions) == expected


def test_lesson_06s_toy_and_exercise_keys_are_the_ones_the_lesson_prints():
    view = toy_view(FRUITS, "melon")
    assert view.verdict == "false positive" and sum(view.bits) == 12
    assert view.positions == (12, 10, 8)
    assert [FRUITS[i] for i in view.borrowed_from()] == ["banana", "date", "elderberry"]
    assert toy_view(FRUITS, "fig").positions == (25, 21, 23)


@pytest.mark.parametrize("key, words", [("", "no key typed"), ("fig", "is 0: never added"),
                                        ("apple", "it was added"), ("melon", "a false positive")])
def test_the_drawing_has_a_text_alternative_that_says_what_it_shows(key, words):
    from bloomedu.teaching.plots import check_alt

    view = toy_view(FRUITS, key)
    alt = check_alt(view.alt())  # a sentence of words, as every figure of the course carries
    assert words in alt and f"{sum(view.bits)} of them set by {len(FRUITS)} added keys" in alt
    if key:
        assert all(str(p) in alt for p in view.positions)
    if key == "melon":
        assert "banana, date, elderberry" in alt
