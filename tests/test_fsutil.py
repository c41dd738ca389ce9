"""`fsutil`: the package's one atomic replace and its exclusive creates."""

from __future__ import annotations

import ast
import os
import stat
from pathlib import Path
from typing import BinaryIO

import pytest
from distill_helpers import MEM, lesson
from helpers import REPO_ROOT, jmem

from journal_mem import fsutil


def test_replace_atomic_replaces_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "file.md"
    fsutil.replace_atomic(str(target), "one\n")
    fsutil.replace_atomic(str(target), b"two\n", durable=True)
    assert target.read_bytes() == b"two\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["file.md"]


def test_a_failed_write_keeps_the_old_file_and_removes_its_temp(tmp_path: Path) -> None:
    target = tmp_path / "file.md"
    target.write_bytes(b"old")

    def half(fh: BinaryIO) -> None:
        fh.write(b"half of it")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        fsutil.replace_atomic_with(str(target), half)
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["file.md"]


def test_an_executable_stays_executable_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        fsutil.replace_atomic(str(tmp_path / "hook"), "#!/bin/sh\n", mode=0o755)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "hook").stat().st_mode) == 0o755


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"),
                    reason="names each fsynced descriptor through /proc (Linux)")
def test_durable_fsyncs_the_file_and_its_folder(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[str] = []
    real = os.fsync

    def record(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", record)
    fsutil.replace_atomic(str(tmp_path / "cache"), b"x")
    assert synced == []  # a cache is not worth an fsync
    fsutil.replace_atomic(str(tmp_path / "MEMORY.md"), b"x", durable=True)
    assert len(synced) == 2
    assert os.path.basename(synced[0]).startswith(fsutil.TMP_PREFIX)
    assert synced[1] == str(tmp_path)


def test_create_new_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "a" / "config.toml"
    assert fsutil.create_new(str(path), "first\n")
    assert not fsutil.create_new(str(path), "second\n")
    assert path.read_text() == "first\n"


def test_distill_sweeps_the_temp_files_of_a_killed_distill(repo: Path) -> None:
    lesson(repo, "api", "k1", 1)
    assert jmem(repo, "distill").returncode == 0
    topics = repo / MEM / "api" / "topics"
    left = [topics / f"{fsutil.TMP_PREFIX}dead", topics / ".tmp-distill-older"]
    for path in left:
        path.write_bytes(b"half")
    keep = topics / ".notes"
    keep.write_bytes(b"mine")
    lesson(repo, "api", "k2", 2)
    assert jmem(repo, "distill").returncode == 0
    assert not any(p.exists() for p in left)
    assert keep.read_bytes() == b"mine"


def test_only_fsutil_renames_a_file_into_place() -> None:
    """Every atomic write goes through `fsutil` (there were nine, one with an fsync)."""
    found = []
    for path in (REPO_ROOT / "journal_mem").rglob("*.py"):
        if path.name == "fsutil.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr == "replace"
                    and isinstance(node.value, ast.Name) and node.value.id == "os"):
                found.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}")
    assert found == []
