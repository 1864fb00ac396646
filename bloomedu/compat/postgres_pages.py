"""Reading a ``bloom`` index's pages as PostgreSQL writes them (contrib/bloom's ``bloom.h``).

pageinspect has functions for B-tree, BRIN, GIN, GiST and hash pages, none for bloom; its
``get_raw_page('index', block)`` gives a page's 8192 bytes, and this module reads them
(little-endian, the machine's order):

- every page starts with the 24-byte page header (``pd_lsn``, ``pd_checksum``, ``pd_flags``,
  ``pd_lower``, ``pd_upper``, ``pd_special``, ...) and ends with the bloom "opaque" area at
  ``pd_special``: ``maxoff`` (the number of tuples), ``flags`` (1: the metapage, 2: deleted),
  an unused word and the page id ``0xFF83``;
- block 0 is the metapage: after the header, the magic number ``0xDBAC0DED``, two uint16 and a
  copy of the options, ``BloomOptions``: a varlena header, the length in 16-bit words and the
  bits of each of the 32 possible columns (int32 each);
- every other block holds ``maxoff`` tuples packed from offset 24, each ``6 + 2 * words`` bytes:
  the heap row's address (an ``ItemPointer``: block as two uint16, high half first, then the
  line number) and the signature's words.

Tested against the real server in ``tests/test_postgres_server.py``.

>>> page = bytearray(8192)
>>> page[16:18] = (8184).to_bytes(2, "little")                  # pd_special
>>> page[8184:8192] = bytes([1, 0, 0, 0, 0, 0, 0x83, 0xFF])     # one tuple, flags 0, page id
>>> page[24:34] = bytes([0, 0, 3, 0, 7, 0]) + bytes([5, 0, 0, 128])   # (3, 7) and two words
>>> read_tuples(bytes(page), num_words=2)
[((3, 7), (5, 32768))]
"""

from __future__ import annotations

import struct

__all__ = ["PAGE_SIZE", "BLOOM_PAGE_ID", "BLOOM_MAGIC", "page_flags", "read_options",
           "read_tuples", "read_index"]

PAGE_SIZE = 8192                 # BLCKSZ in a default build
HEADER_SIZE = 24                 # SizeOfPageHeaderData, already a multiple of 8 (MAXALIGN)
BLOOM_PAGE_ID = 0xFF83
BLOOM_MAGIC = 0xDBAC0DED
BLOOM_META, BLOOM_DELETED = 1, 2
MAX_COLUMNS = 32                 # INDEX_MAX_KEYS: BloomOptions has a bit count for each


def _check_page(page: bytes) -> None:
    if not isinstance(page, (bytes, bytearray)):
        raise TypeError(f"page must be bytes (get_raw_page's), not {type(page).__name__}")
    if len(page) != PAGE_SIZE:
        raise ValueError(f"page must be {PAGE_SIZE} bytes long, got {len(page)}")
    special = int.from_bytes(page[16:18], "little")
    if special != PAGE_SIZE - 8 or int.from_bytes(page[-2:], "little") != BLOOM_PAGE_ID:
        raise ValueError("page is not a bloom index page: its special area does not end with "
                         f"the page id {BLOOM_PAGE_ID:#06x}")


def page_flags(page: bytes) -> tuple[int, int]:
    """``(maxoff, flags)`` of a bloom page: its number of tuples, and 1 (metapage) / 2 (deleted) / 0.

    >>> page = bytearray(8192); page[16:18] = (8184).to_bytes(2, "little")
    >>> page[8184:] = bytes([2, 0, 0, 0, 0, 0, 0x83, 0xFF]); page_flags(bytes(page))
    (2, 0)
    """
    _check_page(page)
    maxoff, flags = struct.unpack_from("<HH", page, PAGE_SIZE - 8)
    return maxoff, flags


def read_options(metapage: bytes) -> tuple[int, tuple[int, ...]]:
    """The metapage's options: ``(words, bits of each of the 32 columns)``.

    The index keeps the options it was created with here, frozen; columns the index does not
    have hold the default, 2.

    >>> meta = bytearray(8192); meta[16:18] = (8184).to_bytes(2, "little")
    >>> meta[8184:] = bytes([0, 0, 1, 0, 0, 0, 0x83, 0xFF])               # flags 1: the metapage
    >>> meta[24:28] = BLOOM_MAGIC.to_bytes(4, "little")
    >>> meta[36:44] = struct.pack("<ii", 5, 3)                            # 5 words, col1=3
    >>> words, bits = read_options(bytes(meta)); words, bits[0]
    (5, 3)
    """
    _, flags = page_flags(metapage)
    magic = int.from_bytes(metapage[HEADER_SIZE:HEADER_SIZE + 4], "little")
    if not flags & BLOOM_META or magic != BLOOM_MAGIC:
        raise ValueError("metapage is not a bloom metapage (block 0 of the index)")
    start = HEADER_SIZE + 8 + 4                    # magic, nStart, nEnd, then vl_len_
    words, *bits = struct.unpack_from(f"<i{MAX_COLUMNS}i", metapage, start)
    return words, tuple(bits)


def read_tuples(page: bytes, num_words: int) -> list[tuple[tuple[int, int], tuple[int, ...]]]:
    """The tuples of a data page: ``((heap block, line number), signature words)`` each.

    A deleted page and the metapage hold none: ``[]``.

    >>> page = bytearray(8192); page[16:18] = (8184).to_bytes(2, "little")
    >>> page[8184:] = bytes([1, 0, 2, 0, 0, 0, 0x83, 0xFF])               # flags 2: deleted
    >>> read_tuples(bytes(page), num_words=5)
    []
    """
    maxoff, flags = page_flags(page)
    if flags & (BLOOM_META | BLOOM_DELETED):
        return []
    size = 6 + 2 * num_words                       # BLOOMTUPLEHDRSZ + the words
    tuples = []
    for i in range(maxoff):
        hi, lo, line, *words = struct.unpack_from(f"<HHH{num_words}H", page, HEADER_SIZE + i * size)
        tuples.append((((hi << 16) | lo, line), tuple(words)))
    return tuples


def read_index(pages: list[bytes]) -> tuple[int, tuple[int, ...], list]:
    """A whole bloom index from its pages (block 0 first): ``(words, column bits, tuples)``.

    The tuples are those of :func:`read_tuples`, in the index's order, from every data page.

    >>> meta = bytearray(8192); meta[16:18] = (8184).to_bytes(2, "little")
    >>> meta[8184:] = bytes([0, 0, 1, 0, 0, 0, 0x83, 0xFF])
    >>> meta[24:28] = BLOOM_MAGIC.to_bytes(4, "little"); meta[36:40] = (5).to_bytes(4, "little")
    >>> read_index([bytes(meta)])[0]
    5
    """
    if not pages:
        raise ValueError("pages must hold at least the metapage (block 0)")
    words, bits = read_options(pages[0])
    return words, bits, [item for page in pages[1:] for item in read_tuples(page, words)]
