"""`jmem distill` end to end: real repositories, real git, the real program."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from distill_helpers import MEM, head, lesson, memory_md, snapshot
from helpers import base_env, git, jmem, journal_files
from hypothesis import given, settings
from hypothesis import strategies as st

from fixtures import six_agents
from journal_mem.journal.lock import DistillLock


def test_distill_commits_only_memory_paths_and_leaves_other_changes_alone(repo: Path) -> None:
    lesson(repo, "api", "run-tests-serially", title="Run the API tests serially")
    lesson(repo, "web", "use-node-20", title="Use node 20", applies_to=("all",),
           type="principle", confidence=1.0)
    (repo / "staged.txt").write_text("mine\n")
    git(repo, "add", "staged.txt")
    (repo / "README").write_text("edited, not staged\n")
    before = head(repo)
    proc = jmem(repo, "distill")
    assert proc.returncode == 0, proc.stderr
    assert "committed" in proc.stdout
    changed = git(repo, "diff", "--name-only", before, "HEAD").stdout.split()
    assert changed and all(p.startswith(MEM + "/") for p in changed)
    assert f"{MEM}/distill-state.json" in changed
    assert git(repo, "diff", "--cached", "--name-only").stdout.split() == ["staged.txt"]
    assert (repo / "README").read_text() == "edited, not staged\n"
    msg = git(repo, "log", "-1", "--format=%B").stdout
    assert "api/journal/2026-05-01-run-tests-serially.md" in msg
    assert "api: +2" in msg and "added   use-node-20: Use node 20" in msg
    assert "[use-node-20]" in memory_md(repo, "api") and "[use-node-20]" in memory_md(repo, "web")
    state = json.loads((repo / MEM / "distill-state.json").read_text())
    assert state["schema"] == 1 and len(state["folded"]) == 2


def test_distilling_twice_changes_nothing(repo: Path) -> None:
    lesson(repo, "api", "k1")
    assert jmem(repo, "distill").returncode == 0
    tip, files = head(repo), snapshot(repo)
    proc = jmem(repo, "distill")
    assert proc.returncode == 0 and "up to date" in proc.stdout
    assert head(repo) == tip and snapshot(repo) == files
    assert jmem(repo, "distill", "--check").returncode == 0


def test_six_agents_all_get_the_correction_in_one_distill(tmp_path: Path) -> None:
    main = six_agents.build(tmp_path / "six")
    day1 = six_agents.DAY1.date().isoformat()
    assert jmem(main, "distill", "--date", day1).returncode == 0
    for agent in six_agents.AGENTS:
        assert six_agents.WRONG in memory_md(main, agent)
    six_agents.correct(main)
    proc = jmem(main, "distill", "--date", six_agents.DISTILL_DATE.isoformat())
    assert proc.returncode == 0, proc.stderr
    for agent in six_agents.AGENTS:
        text = memory_md(main, agent)
        assert f"[{six_agents.RIGHT_KEY}]" in text
        assert six_agents.WRONG not in text and f"[{six_agents.WRONG_KEY}]" not in text
        topic = (main / MEM / agent / "topics" / "search.md").read_text()
        assert six_agents.WRONG not in topic
    msg = git(main, "log", "-1", "--format=%B").stdout
    assert f"removed {six_agents.WRONG_KEY}: superseded by {six_agents.RIGHT_KEY}" in msg
    assert msg.count(f"added   {six_agents.RIGHT_KEY}") == 6


def test_invalid_entries_are_reported_skipped_and_exit_1(repo: Path) -> None:
    lesson(repo, "api", "good")
    bad = repo / MEM / "api" / "journal" / "2026-05-01-bad.md"
    bad.write_text("---\nagent: api\ntopic: t\nsupersede: [x]\n---\n\n# Bad\n")
    proc = jmem(repo, "distill")
    assert proc.returncode == 1
    assert "2026-05-01-bad.md" in proc.stderr and "supersede" in proc.stderr
    assert "[good]" in memory_md(repo, "api")
    assert bad.read_text().startswith("---\nagent: api")
    tracked = git(repo, "ls-files", MEM).stdout
    assert "2026-05-01-good.md" in tracked and "2026-05-01-bad.md" not in tracked


def test_hand_edits_of_distilled_files_are_adopted_not_overwritten(repo: Path) -> None:
    lesson(repo, "api", "k1")
    assert jmem(repo, "distill").returncode == 0
    target = repo / MEM / "api" / "MEMORY.md"
    target.write_text(target.read_text() + "my own note\n")  # joins the footer's paragraph
    lesson(repo, "api", "k2")
    proc = jmem(repo, "distill")
    assert proc.returncode == 0, proc.stderr
    assert "api/MEMORY.md: hand edit adopted: 1 added" in proc.stdout
    text = target.read_text()
    assert "- [my own note](topics/" in text and "[my-own-note]" in text and "[k2]" in text
    assert git(repo, "status", "--porcelain", MEM).stdout.strip() == ""


def test_refuses_the_wrong_branch_and_mid_merge(repo: Path) -> None:
    lesson(repo, "api", "k1")
    git(repo, "switch", "-q", "-c", "other")
    proc = jmem(repo, "distill")
    assert proc.returncode == 1 and "distill.branch is 'main'" in proc.stderr
    git(repo, "switch", "-q", "main")
    (repo / "f.txt").write_text("main\n")
    git(repo, "add", "f.txt")
    git(repo, "commit", "-q", "-m", "main side")
    git(repo, "switch", "-q", "-c", "side", "HEAD~1")
    (repo / "f.txt").write_text("side\n")
    git(repo, "add", "f.txt")
    git(repo, "commit", "-q", "-m", "side")
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "side", check=False)
    proc = jmem(repo, "distill")
    assert proc.returncode == 1 and "in the middle of a merge" in proc.stderr
    assert not (repo / MEM / "api" / "MEMORY.md").exists()


def test_a_second_distill_exits_75_naming_the_holder(repo: Path) -> None:
    lesson(repo, "api", "k1")
    state = repo / ".git" / "journal-mem"
    with DistillLock(str(state)):
        proc = jmem(repo, "distill")
    assert proc.returncode == 75
    assert f"pid {os.getpid()}" in proc.stderr
    assert jmem(repo, "distill").returncode == 0


def test_two_distills_at_once_exactly_one_writes(repo: Path) -> None:
    for i in range(30):
        lesson(repo, "api", f"k{i}", i)
    tip = head(repo)
    cmd = [sys.executable, "-m", "journal_mem", "distill"]
    procs = [subprocess.Popen(cmd, cwd=repo, env=base_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(2)]
    codes = sorted(p.wait() for p in procs)
    assert codes in ([0, 0], [0, 75])
    commits = git(repo, "rev-list", f"{tip}..HEAD").stdout.split()
    assert len(commits) == 1


def test_outbox_is_drained_into_the_journal_and_committed(repo: Path, worktree: Path) -> None:
    proc = jmem(worktree, "write", "--agent", "web", "--topic", "build", "--outbox",
                "--title", "The web build needs more memory")
    assert proc.returncode == 0, proc.stderr
    outboxed = Path(proc.stdout.strip())
    data = outboxed.read_bytes()
    proc = jmem(worktree, "distill")
    assert proc.returncode == 0, proc.stderr
    assert not outboxed.exists()
    copies = [p for p in journal_files(repo, "web") if p.read_bytes() == data]
    assert len(copies) == 1 and copies[0].name == outboxed.name
    assert "the-web-build-needs-more-memory" in git(repo, "show", "--stat", "HEAD").stdout


def test_distill_from_a_worktree_hook_environment_commits_in_main(repo: Path,
                                                                  worktree: Path) -> None:
    lesson(repo, "api", "k1")
    git_dir = git(worktree, "rev-parse", "--absolute-git-dir").stdout.strip()
    env = base_env(GIT_DIR=git_dir, GIT_INDEX_FILE=os.path.join(git_dir, "index"),
                   GIT_WORK_TREE=str(worktree))
    proc = jmem(worktree, "distill", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "distill" in git(repo, "log", "-1", "--format=%s").stdout
    assert git(worktree, "status", "--porcelain").stdout == ""


def test_if_due_waits_for_the_threshold_and_honours_the_switches(repo: Path) -> None:
    import datetime as dt

    from distill_helpers import DAY

    recent = int((dt.datetime.now(dt.UTC) - DAY).total_seconds() // 60) - 60  # an hour ago
    lesson(repo, "api", "k1", recent)  # not old yet
    tip = head(repo)
    proc = jmem(repo, "distill", "--if-due")
    assert proc.returncode == 0 and head(repo) == tip and "not due" in proc.stdout
    for i in range(10):
        lesson(repo, "api", f"n{i}", recent)
    proc = jmem(repo, "distill", "--if-due", env=base_env(JMEM_DISABLE="1"))
    assert proc.returncode == 0 and "disabled" in proc.stdout and head(repo) == tip
    proc = jmem(repo, "distill", "--if-due", env=base_env(JMEM_HOOKS_DISTILL_ON_COMMIT="false"))
    assert proc.returncode == 0 and "distill_on_commit" in proc.stdout and head(repo) == tip
    assert jmem(repo, "distill", "--if-due").returncode == 0
    assert head(repo) != tip


def test_old_pending_lesson_makes_it_due(repo: Path) -> None:
    lesson(repo, "api", "k1")  # 2026-05-01: older than 24 hours
    assert jmem(repo, "distill", "--if-due").returncode == 0
    assert (repo / MEM / "api" / "MEMORY.md").exists()


def test_an_unchanged_invalid_entry_does_not_keep_it_due(repo: Path) -> None:
    bad = repo / MEM / "api" / "journal" / "2026-05-01-broken.md"
    bad.write_text("---\nagent: api\ntopic: t\nsupersede: [x]\n---\n# Broken\n")
    due_at_once = base_env(JMEM_DISTILL_MAX_AGE_HOURS="0")
    proc = jmem(repo, "distill", "--if-due", env=due_at_once)  # runs, reports it, exit 1
    assert proc.returncode == 1 and "2026-05-01-broken.md" in proc.stdout + proc.stderr
    again = jmem(repo, "distill", "--if-due", env=due_at_once)  # unchanged: not pending
    assert again.returncode == 0 and "not due" in again.stdout + again.stderr
    bad.write_text("---\nagent: api\ntopic: t\nsupersedes: [x]\n---\n# Fixed\n")
    fixed = jmem(repo, "distill", "--if-due", env=due_at_once)  # changed: pending, folded
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Fixed" in (repo / MEM / "api" / "MEMORY.md").read_text()


def test_background_returns_at_once_and_logs(repo: Path) -> None:
    lesson(repo, "api", "k1")
    tip = head(repo)
    proc = jmem(repo, "distill", "--if-due", "--background")
    assert proc.returncode == 0 and "background" in proc.stdout
    log = repo / ".git" / "journal-mem" / "logs" / "distill.log"
    for _ in range(300):  # bounded wait for the detached process
        if head(repo) != tip:
            break
        time.sleep(0.05)
    assert head(repo) != tip
    assert "jmem distill --if-due" in log.read_text()


def test_dry_run_and_check_write_nothing(repo: Path) -> None:
    lesson(repo, "api", "k1")
    files = snapshot(repo)
    proc = jmem(repo, "distill", "--dry-run")
    assert proc.returncode == 0 and "would write" in proc.stdout
    proc = jmem(repo, "distill", "--check")
    assert proc.returncode == 1 and "would change" in proc.stdout
    assert snapshot(repo) == files


def test_no_commit_then_commit_is_not_mistaken_for_a_hand_edit(repo: Path) -> None:
    lesson(repo, "api", "k1")
    assert jmem(repo, "distill", "--no-commit").returncode == 0
    lesson(repo, "api", "k2", 5)
    tip = head(repo)
    proc = jmem(repo, "distill")
    assert proc.returncode == 0, proc.stderr
    assert head(repo) != tip
    assert git(repo, "status", "--porcelain").stdout == ""
    msg = git(repo, "log", "-1", "--format=%B").stdout
    assert "2 new lessons folded" in msg


def test_json_report(repo: Path) -> None:
    lesson(repo, "api", "k1")
    data = json.loads(jmem(repo, "distill", "--json").stdout)
    assert data["status"] == "distilled" and data["changes"]["api"]["added"] == ["k1"]
    assert data["exit_code"] == 0 and data["commit"]


def test_without_a_memory_root_it_says_to_run_init(tmp_path: Path) -> None:
    from helpers import make_repo

    main = make_repo(tmp_path / "bare-main")
    proc = jmem(main, "distill")
    assert proc.returncode == 1 and "jmem init" in proc.stderr
    assert not (main / ".claude").exists()


def test_a_topic_written_without_commit_then_emptied_commits_cleanly(repo: Path) -> None:
    lesson(repo, "api", "k1", topic="short")
    assert jmem(repo, "distill", "--no-commit").returncode == 0
    assert (repo / MEM / "api" / "topics" / "short.md").exists()
    lesson(repo, "api", "k2", 5, retracts=("k1",))
    proc = jmem(repo, "distill")
    assert proc.returncode == 0, proc.stderr
    assert not (repo / MEM / "api" / "topics" / "short.md").exists()
    assert git(repo, "status", "--porcelain").stdout == ""
    msg = git(repo, "log", "-1", "--format=%B").stdout  # relative to HEAD: k1 never was
    assert "k1:" not in msg
    assert "added   k2" not in msg  # a pure retraction states no fact


def test_near_duplicates_are_reported_as_pairs_a_screenful_then_a_count(repo: Path) -> None:
    for i in range(8):  # 8 titles that differ by one word: 28 pairs
        lesson(repo, "api", f"k{i}", i, title=f"Use the fixture for word{i}")
    out = jmem(repo, "distill").stdout.splitlines()
    at = out.index("near-duplicate titles (not merged; check them): 28 pairs")
    assert out[at + 1:at + 21] == [f"  {a} ~ {b}" for a, b in sorted(
        (f"k{i}", f"k{j}") for i in range(8) for j in range(i + 1, 8))][:20]
    assert out[at + 21] == "  … and 8 more pairs (`jmem distill --json`)"


def test_a_huge_group_of_near_duplicates_is_told_as_a_group_not_listed_pair_by_pair() -> None:
    """Numbered titles ("Lesson N about thing N") are one signature group: 10k of them
    are 50 million pairs, which the report once listed for six minutes."""
    from journal_mem.distill.outcome import COUNT_MAX, pairs

    big = tuple(f"k{i:05d}" for i in range(10_000))
    first, count = pairs([big, ("a", "b"), ("k00000", "k00001")])
    assert count is None and len(big) ** 2 // 2 > COUNT_MAX
    assert first == [("a", "b"), *[("k00000", f"k{i:05d}") for i in range(1, 20)]]
    assert pairs([("x", "y", "z"), ("x", "y")]) == ([("x", "y"), ("x", "z"), ("y", "z")], 3)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcdefghij"), min_size=2, max_size=5, unique=True)
                .map(tuple), max_size=8), st.integers(0, 25))
def test_near_duplicate_pairs_are_the_sorted_distinct_pairs_and_their_count(
        groups: list[tuple[str, ...]], limit: int) -> None:
    """Groups that share keys or not: the first pairs and the count are those of the set
    of every pair."""
    from itertools import combinations

    from journal_mem.distill.outcome import pairs

    every = sorted({p for g in groups for p in combinations(sorted(g), 2)})
    assert pairs(groups, limit) == (every[:limit], len(every))


def test_a_ref_written_as_dot_slash_matches_and_every_stale_drop_is_reported(
        repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "gone.py").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "code")
    for i, ref in enumerate(["./README", "src/gone.py", "src/gone.py"]):
        proc = jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", f"Fact {i}",
                    "--key", f"fact-{i}", "--ref", ref)
        assert proc.returncode == 0, proc.stderr
    assert jmem(repo, "distill").returncode == 0
    git(repo, "rm", "-q", "src/gone.py")
    git(repo, "commit", "-q", "--no-verify", "-m", "remove")
    proc = jmem(repo, "distill", "--json")
    data = json.loads(proc.stdout)
    assert data["stale_refs"] == {"fact-1": "refs gone: src/gone.py",
                                  "fact-2": "refs gone: src/gone.py"}
    assert "[fact-0]" in memory_md(repo, "api")
    out = jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", "Fact 3",
               "--key", "fact-3", "--ref", "src/gone.py")
    assert out.returncode == 0
    text = jmem(repo, "distill").stdout
    assert "dropped because every file they cite is gone from HEAD: 1 fact" in text
    assert "  fact-3: refs gone: src/gone.py" in text
    hits = json.loads(jmem(repo, "recall", "Fact", "--json").stdout)
    assert {h["key"] for h in hits} == {"fact-0"}


def test_a_fact_citing_a_file_that_moved_follows_it(repo: Path) -> None:
    """`git mv` of a cited file (and of a folder, and twice) is not a stale ref: the fact
    stays; a file deleted after its move is gone, and the fact is dropped."""
    (repo / "src" / "pay").mkdir(parents=True)
    (repo / "src" / "other.py").write_text("def retry():\n    return 3\n")
    (repo / "src" / "pay" / "api.py").write_text("PORT = 8443\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "code")
    for key, ref in (("retry", "src/other.py"), ("port", "src/pay"), ("api", "src/pay/api.py")):
        proc = jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", f"Fact {key}",
                    "--key", key, "--ref", ref)
        assert proc.returncode == 0, proc.stderr
    assert jmem(repo, "distill").returncode == 0
    git(repo, "mv", "src/other.py", "src/retries.py")
    git(repo, "mv", "src/pay", "src/payments")
    git(repo, "commit", "-q", "--no-verify", "-m", "move")
    git(repo, "mv", "src/retries.py", "lib.py")  # and once more
    git(repo, "commit", "-q", "--no-verify", "-m", "move again")
    data = json.loads(jmem(repo, "distill", "--json").stdout)
    assert data["stale_refs"] == {}, data["stale_refs"]
    text = memory_md(repo, "api")
    assert "[retry]" in text and "[port]" in text and "[api]" in text
    git(repo, "rm", "-q", "lib.py")
    git(repo, "commit", "-q", "--no-verify", "-m", "remove")
    data = json.loads(jmem(repo, "distill", "--json").stdout)
    assert data["stale_refs"] == {"retry": "refs gone: src/other.py"}


def test_one_secret_policy_write_and_distill_agree(repo: Path) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    args = ("write", "--agent", "api", "--topic", "ops", "--title", "Deploy token lives in CI",
            "--body", f"token {token}")
    refused = jmem(repo, *args)
    assert refused.returncode == 1 and "looks like a github token" in refused.stderr
    off = base_env(JMEM_GUARD_SCAN_SECRETS="false")
    assert jmem(repo, *args, env=off).returncode == 0
    # the setting that let `write` accept it lets distill fold it (and check accept it)
    proc = jmem(repo, "distill", env=off)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Deploy token lives in CI" in memory_md(repo, "api")
    assert jmem(repo, "check", env=off).returncode == 0
    # with the setting on, every command refuses the same lesson
    assert jmem(repo, "check").returncode == 1


# --- line endings, and facts never dropped because an entry became invalid ---------


def _crlf_clone(repo: Path, tmp_path: Path, attributes: bool) -> Path:
    for title in ("Facts survive CRLF", "Second old fact"):
        assert jmem(repo, "write", "--agent", "api", "--topic", "eol", "--title", title,
                    "--body", "Line one.\nLine two.").returncode == 0
    if not attributes:
        (repo / ".gitattributes").unlink()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lessons")
    assert jmem(repo, "distill").returncode == 0
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "-c", "core.autocrlf=true", str(repo), str(clone))
    return clone


def test_crlf_checkout_keeps_every_fact(repo: Path, tmp_path: Path) -> None:
    clone = _crlf_clone(repo, tmp_path, attributes=False)
    entries = journal_files(clone, "api")
    assert entries and all(b"\r\n" in p.read_bytes() for p in entries)  # really CRLF
    assert b"\r\n" in (clone / MEM / "api" / "MEMORY.md").read_bytes()
    assert jmem(clone, "check").returncode == 0
    assert jmem(clone, "write", "--agent", "api", "--topic", "eol", "--title",
                "A new fact").returncode == 0

    proc = jmem(clone, "distill")

    assert proc.returncode == 0, proc.stdout + proc.stderr
    memory = (clone / MEM / "api" / "MEMORY.md").read_text()
    assert all(t in memory for t in ("Facts survive CRLF", "Second old fact", "A new fact"))
    subject = git(clone, "log", "-1", "--format=%s").stdout
    assert "facts +1 ~0 -0" in subject
    assert jmem(clone, "check").returncode == 0, jmem(clone, "check").stdout


def test_init_keeps_memory_files_lf_in_a_crlf_clone(repo: Path, tmp_path: Path) -> None:
    assert (repo / ".gitattributes").read_text() == f"/{MEM}/** text eol=lf\n"
    clone = _crlf_clone(repo, tmp_path, attributes=True)
    assert not any(b"\r" in p.read_bytes() for p in (clone / MEM).rglob("*.md"))


def test_init_merges_its_rule_into_an_existing_gitattributes(tmp_path: Path) -> None:
    main = tmp_path / "m"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    (main / ".gitattributes").write_text("*.png binary")  # no final newline
    for _ in range(2):  # idempotent
        assert jmem(main, "init", "--agent", "api", "--no-git-hooks", "--no-claude")\
            .returncode == 0
    assert (main / ".gitattributes").read_text() == f"*.png binary\n/{MEM}/** text eol=lf\n"


def test_distill_refuses_to_drop_the_facts_of_an_entry_that_became_invalid(
        repo: Path) -> None:
    assert jmem(repo, "write", "--agent", "api", "--topic", "eol", "--title", "A long fact",
                "--body", "x" * 400).returncode == 0
    assert jmem(repo, "distill").returncode == 0
    before = head(repo)
    lesson(repo, "api", "newer")
    small = base_env(JMEM_BUDGET_ENTRY_BYTES="300")  # the folded entry is now too big

    proc = jmem(repo, "distill", env=small)

    assert proc.returncode == 1
    assert "distill refused, nothing changed" in proc.stderr
    assert "a-long-fact" in proc.stderr and "over the 300-byte limit" in proc.stderr
    assert head(repo) == before
    assert "A long fact" in memory_md(repo, "api")
    assert "Lesson newer" not in memory_md(repo, "api")


def test_a_one_shot_distill_leaves_its_journal_for_the_process_end(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`jmem distill` run as the program ends with the process (no teardown:
    `main._leave`), so its journal and fold are kept to the end, not freed one object at a
    time, and left out of the collector's passes; a distill of a process that goes on
    (`jmem watch`, the MCP server, `main` called with arguments) keeps nothing, and a
    second one-shot distill keeps its own in place of the first's."""
    import gc

    from journal_mem import boundary
    from journal_mem.distill import distiller
    from journal_mem.journal.reader import Journal
    from journal_mem.main import main
    from journal_mem.repo import open_context

    monkeypatch.setattr(boundary, "_LEFT", [])
    monkeypatch.chdir(repo)
    lesson(repo, "api", "k1")
    distiller.distill(open_context(str(repo)), distiller.Options())
    lesson(repo, "api", "k2")
    assert main(["distill"]) == 0  # called with arguments: the process goes on
    assert boundary._LEFT == [] and not boundary.ONE_SHOT and gc.get_freeze_count() == 0
    exits: list[int] = []  # run as the program, but the test goes on after its end (when
    monkeypatch.setattr(os, "_exit", exits.append)  # pytest's threads let `_leave` end it)
    monkeypatch.setattr(boundary, "ONE_SHOT", False)  # put back after the test
    monkeypatch.setattr(sys, "argv", ["jmem", "distill"])
    try:
        lesson(repo, "api", "k3")
        assert main() == 0 and boundary.ONE_SHOT
        first = [o for o in boundary._LEFT if isinstance(o, Journal)]
        assert len(first) == 1 and len(first[0].entries) == 3
        assert gc.get_freeze_count() > 0
        lesson(repo, "web", "k4")
        assert main() == 0
        kept = [o for o in boundary._LEFT if isinstance(o, Journal)]
        assert len(kept) == 1 and kept[0] is not first[0] and len(kept[0].entries) == 4
    finally:
        gc.unfreeze()
