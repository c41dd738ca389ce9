"""Plain journal entries: a markdown file with a `# ` title and no frontmatter is a lesson."""

from __future__ import annotations

from pathlib import Path

from distill_helpers import MEM, lesson, memory_md
from guardkit import install_hooks
from helpers import git, jmem, journal_files

MUSIC = ("# Reading user listening habits from Spotify / Apple Music is closed off "
         "(2026-08-13)\n\nBoth services closed their APIs for new apps; do not plan on it.\n")


def plain(repo: Path, agent: str, name: str, text: str = MUSIC) -> Path:
    path = repo / MEM / agent / "journal" / name
    path.write_text(text)
    return path


def test_a_plain_entry_is_folded_shown_and_accepted_by_every_command(repo: Path) -> None:
    plain(repo, "api", "2026-08-13-music-service-taste-import-closed.md")
    title = "Reading user listening habits from Spotify / Apple Music is closed off"

    assert title in jmem(repo, "wake", "--agent", "api").stdout
    proc = jmem(repo, "distill")

    assert proc.returncode == 0, proc.stdout + proc.stderr
    memory = memory_md(repo, "api")
    assert title in memory and "(2026-08-13)" not in memory
    general = (repo / MEM / "api" / "topics" / "general.md").read_text()
    assert "Both services closed their APIs" in general
    assert jmem(repo, "check").returncode == 0


def test_the_guard_accepts_a_plain_entry(repo: Path) -> None:
    install_hooks(repo)
    plain(repo, "api", "2026-08-13-music.md")
    git(repo, "add", "-A")
    proc = git(repo, "commit", "-q", "-m", "a plain lesson", check=False)
    assert proc.returncode == 0, proc.stderr


def test_a_plain_entry_takes_the_topic_its_file_name_starts_with(repo: Path) -> None:
    lesson(repo, "api", "schema-first", topic="database")
    lesson(repo, "api", "data-general", topic="data")
    plain(repo, "api", "2026-08-13-database-migrations-run-nightly.md",
          "# Migrations run nightly\n\nNot during the day.\n")
    plain(repo, "api", "2026-08-14-other.md", "# Something else\n")

    assert jmem(repo, "distill").returncode == 0

    topics = repo / MEM / "api" / "topics"
    assert "Migrations run nightly" in (topics / "database.md").read_text()
    assert "Something else" in (topics / "general.md").read_text()
    assert jmem(repo, "check").returncode == 0


def test_the_default_topic_is_a_setting(repo: Path) -> None:
    toml = repo / ".claude" / "journal-mem.toml"
    toml.write_text(toml.read_text().replace("[distill]", "[distill]\ndefault_topic = \"notes\"",
                                             1))
    plain(repo, "api", "2026-08-13-music.md")
    assert jmem(repo, "distill").returncode == 0
    assert (repo / MEM / "api" / "topics" / "notes.md").exists()


def test_a_file_without_frontmatter_or_title_is_invalid(repo: Path) -> None:
    plain(repo, "api", "2026-08-13-notes.md", "just some words\n")
    out = jmem(repo, "check").stdout
    assert "2026-08-13-notes.md: invalid entry: frontmatter: missing" in out


def test_write_from_file_takes_a_plain_file(repo: Path, tmp_path: Path) -> None:
    source = tmp_path / "music.md"
    source.write_text(MUSIC)
    proc = jmem(repo, "write", "--agent", "web", "--from-file", str(source))
    assert proc.returncode == 0, proc.stderr
    [path] = journal_files(repo, "web")
    text = path.read_text()
    assert "agent: web" in text and "topic: general" in text
    assert "# Reading user listening habits from Spotify / Apple Music is closed off\n" in text


def test_misnamed_journal_files_are_reported_not_ignored(repo: Path) -> None:
    plain(repo, "api", "2026-11-30_underscore.md", "# Underscore\n")
    plain(repo, "api", "2026-11-30-upper.MD", "# Upper\n")
    (repo / MEM / "api" / "journal" / ".hidden").write_text("x")  # never reported
    names = ("2026-11-30_underscore.md", "2026-11-30-upper.MD")

    status = jmem(repo, "status").stdout
    check = jmem(repo, "check")
    distill = jmem(repo, "distill")

    assert check.returncode == 1 and distill.returncode == 1
    for out in (status, check.stdout, distill.stdout + distill.stderr):
        for name in names:
            assert name in out
        assert "YYYY-MM-DD-<words>.md" in out
        assert ".hidden" not in out
