"""`journal_mem.hashes` gives hashlib's digests without loading OpenSSL."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from journal_mem import hashes

SAMPLES = [b"", b"a lesson\n", "ünïcode – text".encode(), bytes(range(256)) * 40]


@pytest.mark.parametrize("data", SAMPLES)
def test_the_digests_are_hashlibs(data: bytes) -> None:
    assert hashes.sha1(data, usedforsecurity=False).hexdigest() == hashlib.sha1(data).hexdigest()
    assert hashes.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert hashes.blake2b(data, digest_size=16).digest() == \
        hashlib.blake2b(data, digest_size=16).digest()
    grown = hashes.blake2b(digest_size=16)
    grown.update(data)
    grown.update(b"more")
    assert grown.digest() == hashlib.blake2b(data + b"more", digest_size=16).digest()


@pytest.mark.parametrize("data", SAMPLES)
def test_the_bulk_digests_are_hashlibs_own(data: bytes) -> None:
    assert hashes.sha1_bulk is hashlib.sha1 and hashes.sha256_bulk is hashlib.sha256
    assert hashes.sha1_bulk(data).digest() == hashes.sha1(data).digest()
    assert hashes.sha256_bulk(data).digest() == hashes.sha256(data).digest()


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="md5"):
        hashes.md5  # noqa: B018


def run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return proc.stdout.strip()


def test_hashing_loads_no_openssl() -> None:
    out = run("import sys\nfrom journal_mem import hashes\n"
              "print(hashes.sha256(b'x').hexdigest()[:8], hashes.sha1(b'x').hexdigest()[:8],"
              " hashes.blake2b(b'x').hexdigest()[:8], '_hashlib' in sys.modules)")
    assert out == "2d711642 11f6ad8e 0909377a False"


def test_without_the_c_modules_it_is_hashlibs() -> None:
    """A Python built without `_sha2`/`_sha256` and `_sha1` (hashlib's blake2b is
    `_blake2`'s anyway): hashlib's, through OpenSSL, with the same digests."""
    out = run("import sys\n"
              "for name in ('_sha2', '_sha256', '_sha1'): sys.modules[name] = None\n"
              "from journal_mem import hashes\n"
              "print(hashes.sha256(b'x').hexdigest()[:8], hashes.sha1(b'x').hexdigest()[:8],"
              " '_hashlib' in sys.modules)")
    assert out == "2d711642 11f6ad8e True"
