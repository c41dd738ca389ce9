"""Before any distill, a holder sees the words that replace its fact: a pending lesson
that probably corrects a fact without naming its key (whoever wrote it, the fact's own
writer too) marks that fact's MEMORY.md line in the holder's wake pack and in the
corrections a running session gets; an agreement marks nothing."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import jmem

from journal_mem.names import default_key

MEM = Path(".claude/agent-memory")


def write(cwd: Path, agent: str, title: str, body: str, *extra: str, topic: str = "cache") -> str:
    proc = jmem(cwd, "write", "--json", "--agent", agent, "--topic", topic, "--title", title,
                "--body", body, *extra)
    assert proc.returncode == 0, proc.stderr
    return str(json.loads(proc.stdout)["key"])


def distilled_fact(repo: Path) -> str:
    key = write(repo, "api", "The cache listens on port 6380",
                "Redis for sessions runs on 6380 on the cache host.", "--applies-to", "web")
    assert jmem(repo, "distill").returncode == 0
    assert f"[{key}]" in (repo / MEM / "web" / "MEMORY.md").read_text()
    return key


def wake(cwd: Path, agent: str) -> str:
    proc = jmem(cwd, "wake", "--agent", agent)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def fact_line(text: str, key: str) -> str:
    return next(line for line in text.splitlines() if line.endswith(f"[{key}]"))


def test_a_teammate_s_keyless_correction_marks_the_holder_s_line(repo: Path,
                                                                 worktree: Path) -> None:
    old = distilled_fact(repo)
    new = write(worktree, "ops", "The cache moved to port 6390",
                "Redis for sessions now listens on 6390; 6380 is closed.")
    for cwd in (repo, worktree):
        for agent in ("web", "api"):  # a holder it is not for, and the fact's own writer
            line = fact_line(wake(cwd, agent), old)
            assert line.startswith(f"- possibly outdated by [{new}]: “The cache moved to port "
                                   "6390” — was: "), line


def test_the_writer_rewording_its_own_fact_marks_it_for_every_holder(repo: Path) -> None:
    old = distilled_fact(repo)
    new = write(repo, "api", "The cache listens on port 6390 since the move",
                "Redis for sessions moved to 6390.")
    assert fact_line(wake(repo, "web"), old).startswith(f"- possibly outdated by [{new}]: ")


def test_an_agreement_marks_nothing(repo: Path) -> None:
    old = distilled_fact(repo)
    write(repo, "ops", "Session Redis is on port 6380 of the cache host",
          "Connect to 6380 for sessions.")
    line = fact_line(wake(repo, "web"), old)
    assert line.startswith("- [The cache listens on port 6380]"), line


def test_a_running_session_gets_the_marked_line_as_a_correction(repo: Path) -> None:
    old = distilled_fact(repo)
    session = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart",
               "source": "startup", "transcript_path": str(repo / "t.jsonl")}
    start = jmem(repo, "wake", "--hook", "claude", "--agent", "web",
                 stdin=json.dumps(session))
    assert start.returncode == 0, start.stderr
    assert f"[{old}]" in start.stdout and "possibly outdated" not in start.stdout
    new = write(repo, "ops", "The cache moved to port 6390",
                "Redis for sessions now listens on 6390; 6380 is closed.")
    prompt = dict(session, hook_event_name="UserPromptSubmit", prompt="go on")
    later = jmem(repo, "wake", "--hook", "claude", "--agent", "web", stdin=json.dumps(prompt))
    assert later.returncode == 0, later.stderr
    assert f"possibly outdated by [{new}]: “The cache moved to port 6390”" in later.stdout
    assert later.stdout.count(f"[{old}]") == 1


def test_a_correction_by_key_still_hides_the_line(repo: Path) -> None:
    old = distilled_fact(repo)
    write(repo, "ops", "The cache moved to port 6390", "It is 6390 now.", "--supersedes", old)
    text = wake(repo, "web")
    assert "6380" not in text and default_key("The cache moved to port 6390") in text


def test_a_restated_correction_shows_its_newest_words(repo: Path) -> None:
    old = distilled_fact(repo)
    new = write(repo, "ops", "The cache moved to port 6390", "Sessions on 6390 now.")
    write(repo, "ops", "The cache moved to port 6391", "Sessions on 6391 now.", "--key", new)
    line = fact_line(wake(repo, "web"), old)
    assert line.startswith(f"- possibly outdated by [{new}]: “The cache moved to port 6391”"), line


def test_a_pending_correction_corrected_since_marks_nothing(repo: Path) -> None:
    old = distilled_fact(repo)
    wrong = write(repo, "ops", "The cache moved to port 6390", "Sessions on 6390 now.")
    write(repo, "ops", "The cache did not move, sessions stay on 6380",
          "The 6390 note was a test host.", "--supersedes", wrong)
    line = fact_line(wake(repo, "web"), old)
    assert f"[{wrong}]" not in line, line
