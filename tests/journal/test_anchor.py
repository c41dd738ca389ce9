"""Where cited lines are in a file now (`anchor.still_there`), against its definition."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from journal_mem.journal.anchor import _outward, digest, still_there, stripped_lines

_LINES = st.lists(st.sampled_from(["a", "b", "a  ", "b\t", "", "é漢", "x = 1", " a"]),
                  min_size=1, max_size=30)


def _defined(lines: list[str], size: int, want: str, near: int) -> tuple[int, int] | None:
    """The nearest window of `size` lines, outward from line `near`, whose `digest` is
    `want`: what a citation's lines are looked for by."""
    for i in _outward(near - 1, len(lines) - size + 1):
        if digest(lines[i:i + size]) == want:
            return i + 1, i + size
    return None


@settings(max_examples=400, deadline=None)
@given(_LINES, st.integers(1, 4), st.integers(0, 30), st.integers(1, 31),
       st.sampled_from(["window", "other", "upper", "short", "junk"]))
@example(["a", "a  ", "a"], 1, 0, 3, "window")  # two windows alike: the nearest wins
def test_cited_lines_are_found_where_their_digest_says(
        lines: list[str], size: int, at: int, near: int, how: str) -> None:
    """`still_there` gives the nearest window whose digest is the recorded one, from the
    file's text or its stripped lines; a digest in upper case, cut short or not hex
    finds nothing, as no window's digest is such a text."""
    text = "\n".join(lines)
    stripped = stripped_lines(text)
    start = min(at, max(len(stripped) - size, 0))
    want = {"window": digest(stripped[start:start + size]), "other": digest(["zzz"] * size),
            "upper": digest(stripped[start:start + size]).upper(),
            "short": digest(stripped[start:start + size])[:15], "junk": "not a digest"}[how]
    anchor = f"L{near}-L{near + size - 1}"
    expected = _defined(stripped, size, want, near)
    assert still_there(text, anchor, want, near) == expected
    assert still_there(stripped, anchor, want, near) == expected
    if how == "window" and size <= len(stripped):
        assert expected is not None
