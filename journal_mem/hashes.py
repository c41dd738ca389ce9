"""The hash functions journal-mem uses, each loaded where and when it is needed.

`import hashlib` loads OpenSSL's bindings: ~3 ms of every command that hashes
anything, a third of a bare interpreter start. The C modules hashlib falls back
on (`_sha1`, `_sha2` or `_sha256`, `_blake2`) give the same digests and load in
~0.2 ms each, but hash ~7× slower per byte (7 ms a megabyte against 1). So
`sha1` and `sha256` are theirs, for a title, a key, a snippet; `sha1_bulk` and
`sha256_bulk` are OpenSSL's, for megabytes (git's index, the distilled files'
blob ids, the fold's signature over every path), and load it only where such a
hash is taken (a distill, not a `write`). Each name is resolved when first
used: a hook that needs one hash loads one module.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` is not on the hook fast path
if TYPE_CHECKING:
    from hashlib import blake2b, sha1, sha256
    from hashlib import sha1 as sha1_bulk
    from hashlib import sha256 as sha256_bulk

__all__ = ["blake2b", "sha1", "sha1_bulk", "sha256", "sha256_bulk"]

# name -> the C modules that may define it, in order (`_sha2` from Python 3.12 on), and
# hashlib's name for it; a bulk one is hashlib's own
_MODULES = {"blake2b": (("_blake2",), "blake2b"), "sha1": (("_sha1",), "sha1"),
            "sha256": (("_sha2", "_sha256"), "sha256"), "sha1_bulk": ((), "sha1"),
            "sha256_bulk": ((), "sha256")}


def __getattr__(name: str) -> object:
    """`name`'s constructor, resolved on first use and kept in this module."""
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    modules, hashlib_name = _MODULES[name]
    for module in modules:
        try:
            found: object = getattr(__import__(module), hashlib_name)
            break
        except (ImportError, AttributeError):
            continue
    else:  # a bulk hash, or a build without the C module: hashlib's, through OpenSSL
        import hashlib

        found = getattr(hashlib, hashlib_name)
    globals()[name] = found
    return found
