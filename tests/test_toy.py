"""The toy for one key (lesson 05): its view is the article's filter, bit for bit, and its panel is live.

The right answers are built here from a SaltedBloomFilter and its bit_indices, never taken
from the view itself.
"""

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
    assert cells[1::2] == [",".join(str(i + 1) for i in view.owners[b]) for b in range(32)]
    assert "false positive" in ax.get_title()
    assert "1 apple" in ax.get_xlabel() and "4 date" in ax.get_xlabel()
    image = ax.get_images()[0].get_array()
    assert all(image.flat[p] == 2 for p in view.positions)  # set bits of the key: orange
    plt.close("all")


def test_the_panel_follows_typing_and_adding():
    panel = toy(["apple"], "")
    box, add, empty = panel.children[0].children
    words = panel.children[1]
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
