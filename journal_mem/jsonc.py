"""JSON read and written by CPython's own C codec (`_json`), without the `json` package.

`json` imports `re`, and `re` imports `enum`: together ~8 ms of the start of a hook
whose own work is under 1 ms (the live check runs at every prompt and every tool
call). The hooks read and write JSON here: with the scanner and the encoder that
`json.loads` and `json.dumps` use, set up as their defaults set them up, so the
values and the text are theirs. Input the scanner does not take whole (malformed
JSON, a byte-order mark, text after the value) goes to `json.loads`, which raises its
own error; without `_json` (another Python) `json` does all of it.
"""

from __future__ import annotations

try:
    from _json import encode_basestring, encode_basestring_ascii, make_encoder, make_scanner
except ImportError:  # not CPython: `json` itself
    make_scanner = make_encoder = encode_basestring = None  # type: ignore[assignment,misc]

TYPE_CHECKING = False  # `typing` costs ~2.5 ms a start
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any

SPACE = " \t\n\r"  # what JSON calls whitespace (`json.decoder.WHITESPACE`)


class _Defaults:
    """What `_json.make_scanner` reads of a `json.JSONDecoder()`: its defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"),
                      "NaN": float("nan")}.__getitem__


_SCAN: Callable[[str, int], tuple[object, int]] | None = (
    make_scanner(_Defaults())  # type: ignore[arg-type]  # typeshed: a context is a scanner
    if make_scanner is not None else None)


def loads(text: str) -> Any:
    """`json.loads(text)`."""
    if _SCAN is not None:
        start = len(text) - len(text.lstrip(SPACE))
        try:
            value, end = _SCAN(text, start)
        except StopIteration:  # no value there: json says so, in its words
            pass
        else:
            if end == len(text) or not text[end:].strip(SPACE):
                return value
    return _json().loads(text)  # json raises its error, in its words


def _default(value: object) -> object:
    """`json.JSONEncoder.default`: nothing else is written."""
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def dumps(value: object, *, ensure_ascii: bool = True, sort_keys: bool = False,
          indent: int | None = None, default: Callable[[Any], object] | None = None) -> str:
    """`json.dumps(value, ensure_ascii=ensure_ascii, sort_keys=sort_keys, indent=indent,
    default=default)`; with an `indent`, `json` itself writes it (its C encoder writes
    one line only)."""
    if make_encoder is not None and indent is None:
        try:
            encode = make_encoder({}, default or _default,
                                  encode_basestring_ascii if ensure_ascii else encode_basestring,
                                  None, ": ", ", ", sort_keys, False, True)
        except TypeError:  # another signature: json builds its own
            pass
        else:
            return "".join(encode(value, 0))
    text: str = _json().dumps(value, ensure_ascii=ensure_ascii, sort_keys=sort_keys,
                              indent=indent, default=default)
    return text


def _quoted(text: str) -> str:
    return dumps(text, ensure_ascii=False)


# A JSON string, non-ASCII kept (`json.dumps(text, ensure_ascii=False)`): json's own C
# function, called per string with nothing in between
quoted: Callable[[str], str] = encode_basestring if make_encoder is not None else _quoted


def _json() -> ModuleType:
    """The `json` package, for what the C codec alone does not do."""
    import json

    return json
