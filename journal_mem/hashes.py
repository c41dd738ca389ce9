"""The hash functions journal-mem uses, from CPython's own C modules where it has them.

`import hashlib` loads OpenSSL's bindings: ~3 ms of every command that hashes
anything, a third of a bare interpreter start. The modules hashlib falls back
on (`_sha1`, `_sha2` or `_sha256`, `_blake2`) give the same digests and load in
~0.2 ms each, so `from journal_mem.hashes import sha256` takes the first of them
this interpreter has, and hashlib's only where it has none. Each name is
resolved when first imported: a hook that needs one hash loads one module.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` is not on the hook fast path
if TYPE_CHECKING:
    from hashlib import blake2b, sha1, sha256

__all__ = ["blake2b", "sha1", "sha256"]

# name -> the C modules that may define it, in order (`_sha2` from Python 3.12 on)
_MODULES = {"blake2b": ("_blake2",), "sha1": ("_sha1",), "sha256": ("_sha2", "_sha256")}


def __getattr__(name: str) -> object:
    """`name`'s constructor, resolved on first use and kept in this module."""
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    for module in _MODULES[name]:
        try:
            found: object = getattr(__import__(module), name)
            break
        except (ImportError, AttributeError):
            continue
    else:  # a build without the C module: hashlib's, through OpenSSL
        import hashlib

        found = getattr(hashlib, name)
    globals()[name] = found
    return found
