"""`distill-state.json`: which entries the distiller has folded, and the date it used.

Written only by the distiller, at the top of the memory root, as
deterministic JSON (sorted keys, indent 1, LF, one trailing newline):
`{"schema": 1, "date": "YYYY-MM-DD", "folded": [memory-root-relative paths]}`, and
`"judged": COMMIT` when a fact cites code: the commit its citations were judged at.
A fresh clone learns from it what is still pending; `check` rebuilds with its
date (so expiry cannot make the check flap) and its commit.
"""

from __future__ import annotations

from itertools import repeat

from journal_mem import jsonc

SCHEMA = 1

TYPE_CHECKING = False
if TYPE_CHECKING:  # the wake-up hook reads the state (`listing`): `datetime` costs it ~2 ms
    import datetime as dt


class FoldState:
    """The recorded distill: its date and the sorted paths it folded.

    A plain class, not a dataclass: the wake-up hook reads this file and
    `import dataclasses` alone costs it ~8 ms.
    """

    __slots__ = ("date", "folded", "judged")

    def __init__(self, date: dt.date, folded: tuple[str, ...], judged: str = "") -> None:
        self.date = date
        self.folded = folded
        self.judged = judged  # the commit citations were judged at ("" when none cite)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FoldState) and (self.date, self.folded, self.judged) == (
            other.date, other.folded, other.judged)

    def __hash__(self) -> int:
        return hash((self.date, self.folded, self.judged))

    def __repr__(self) -> str:
        return f"FoldState({self.date!r}, {len(self.folded)} folded)"


def render_state(state: FoldState) -> bytes:
    """The file's bytes: those of `json.dumps(..., sort_keys=True, indent=1,
    ensure_ascii=False)`, written without its encoder (with an indent json encodes in
    Python: 100k paths took 54 ms)."""
    folded = sorted(state.folded)
    text = ['{\n "date": ', _string(state.date.isoformat()), ',\n "folded": ',
            "[\n  " + _strings(folded, ",\n  ") + "\n ]" if folded else "[]"]
    if state.judged:
        text += [',\n "judged": ', _string(state.judged)]
    text += [f',\n "schema": {SCHEMA}\n}}\n']
    return "".join(text).encode()


_string = jsonc.quoted  # a JSON string, non-ASCII kept: ensure_ascii=False
# printable ASCII but `"` and `\`: a string of these alone is its JSON text between quotes
_AS_IS = bytes(range(0x20, 0x7F)).replace(b'"', b"").replace(b"\\", b"")


def _strings(values: list[str], between: str) -> str:
    """`between.join(map(_string, values))`: at once when every value is printable ASCII
    with nothing to escape, as entry paths are (100k paths: 39 ms one by one, 5 at once)."""
    joined = "".join(values)
    if joined.isascii() and not joined.encode().translate(None, _AS_IS):
        return '"' + ('"' + between + '"').join(values) + '"'
    return between.join(map(_string, values))


def parse_state(data: bytes) -> FoldState | None:
    """The recorded state, or None when the bytes are not a valid state file."""
    import datetime as dt

    try:
        raw = jsonc.loads(data.decode("utf-8"))
        date = dt.date.fromisoformat(raw["date"])
        folded = raw["folded"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    if raw.get("schema") != SCHEMA or not isinstance(folded, list):
        return None
    if not all(map(isinstance, folded, repeat(str))):  # in C: 100k paths at 100k lessons
        return None
    judged = raw.get("judged", "")
    if not isinstance(judged, str):
        return None
    return FoldState(date, tuple(sorted(folded)), judged)


def read_state(path: str) -> FoldState | None:
    """The state file at `path`, or None when it is missing or unreadable."""
    try:
        with open(path, "rb") as fh:
            return parse_state(fh.read())
    except OSError:
        return None
