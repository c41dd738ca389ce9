"""`jmem init` registers the merge driver for distilled files; the driver keeps one side
and asks for a distill."""

from __future__ import annotations

from pathlib import Path

from distill_helpers import MEM, lesson
from helpers import git, jmem, make_repo

from journal_mem.distill import schedule
from journal_mem.gitops import mergedriver
from journal_mem.repo import open_context


def _init(main: Path, *args: str) -> str:
    proc = jmem(main, "init", "--agent", "api", "--no-claude", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_init_writes_the_attributes_and_registers_the_driver_once(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    (main / ".gitattributes").write_text("*.png binary")  # the user's, no final newline
    out = _init(main)
    assert ".gitattributes" in out and "merge driver" in out
    text = (main / ".gitattributes").read_text()
    assert text.startswith("*.png binary\n")
    for line in mergedriver.patterns(".claude/agent-memory"):
        assert line in text.splitlines()
    driver = git(main, "config", f"merge.{mergedriver.NAME}.driver").stdout
    assert "-m journal_mem merge-driver %O %A %B %P" in driver
    check = git(main, "check-attr", "merge", "--", f"{MEM}/api/MEMORY.md",
                f"{MEM}/api/topics/x.md", f"{MEM}/distill-state.json",
                f"{MEM}/api/journal/2026-05-01-x.md").stdout.splitlines()
    assert [line.rsplit(": ", 1)[1] for line in check] == [mergedriver.NAME] * 3 + [
        "unspecified"]
    again = _init(main)
    assert ".gitattributes" not in again and "merge driver" not in again
    assert (main / ".gitattributes").read_text() == text
    gone = jmem(main, "init", "--uninstall")
    assert gone.returncode == 0 and "merge driver" in gone.stdout
    assert git(main, "config", f"merge.{mergedriver.NAME}.driver", check=False).returncode == 1


def test_the_driver_keeps_the_checked_out_side_and_makes_a_distill_due(repo: Path,
                                                                       tmp_path: Path) -> None:
    ours, theirs, base = (tmp_path / n for n in ("ours", "theirs", "base"))
    ours.write_text("ours\n")
    theirs.write_text("theirs\n")
    base.write_text("base\n")
    ctx = open_context(str(repo))
    assert not schedule.is_due(ctx)
    proc = jmem(repo, "merge-driver", str(base), str(ours), str(theirs), f"{MEM}/api/MEMORY.md")
    assert proc.returncode == 0, proc.stderr
    assert ours.read_text() == "ours\n"
    assert schedule.is_due(ctx)  # no pending lesson, yet due: the files must be rebuilt
    lesson(repo, "api", "k1")
    assert jmem(repo, "distill").returncode == 0
    assert not mergedriver.wanted(ctx.layout.state_dir) and not schedule.is_due(ctx)
