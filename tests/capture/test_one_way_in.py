"""Every case of "one way in", on every path it can reach: the capture of a native
Write/Edit (PostToolUse, main checkout and linked worktree), `jmem rescue`, and the
distiller's adoption of the same edit committed without the hook. Each path goes
through the one intake, so each must give the same journal."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import add_worktree, git, jmem, journal_files

from journal_mem.journal.entry import Entry, parse

MEM = Path(".claude/agent-memory")


def _init(repo: Path, *agents: str) -> None:
    args = [a for agent in agents for a in ("--agent", agent)]
    assert jmem(repo, "init", *args, "--no-claude").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")


def _write(repo: Path, agent: str, title: str, *extra: str, body: str = "Its detail.",
           topic: str = "build") -> str:
    proc = jmem(repo, "write", "--agent", agent, "--topic", topic, "--title", title,
                "--body", body, "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    return str(json.loads(proc.stdout)["key"])


def _distill(repo: Path, *extra: str) -> None:
    proc = jmem(repo, "distill", *extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _hook(cwd: Path, path: Path, tool: str = "Write") -> str:
    payload = {"hook_event_name": "PostToolUse", "session_id": "s1", "cwd": str(cwd),
               "tool_name": tool, "tool_input": {"file_path": str(path), "content": "x"}}
    proc = jmem(cwd, "wake", "--hook", "claude", stdin=json.dumps(payload))
    assert proc.returncode == 0, proc.stderr
    if not proc.stdout:
        return ""
    return str(json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"])


def _entries(repo: Path, agent: str) -> list[Entry]:
    return [parse(p.read_bytes(), folder_agent=agent) for p in journal_files(repo, agent)]


def _facts(repo: Path) -> dict[str, dict[str, object]]:
    proc = jmem(repo, "export")
    assert proc.returncode == 0, proc.stderr
    return {f["key"]: f for f in json.loads(proc.stdout)["facts"]}


# The ways an edit of a checkout's memory reaches the journal.
def _by_capture_in_main(repo: Path, tmp: Path, rel: Path, text: str) -> str:
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text)
    return _hook(repo, repo / rel)


def _worktree(repo: Path, tmp: Path) -> Path:
    return add_worktree(repo, tmp / "wt", branch=f"feature-{tmp.name}")


def _by_capture_in_worktree(repo: Path, tmp: Path, rel: Path, text: str) -> str:
    wt = _worktree(repo, tmp)
    (wt / rel).parent.mkdir(parents=True, exist_ok=True)
    (wt / rel).write_text(text)
    said = _hook(wt, wt / rel)
    assert git(wt, "status", "--porcelain").stdout == "" or "not filed" in said
    return said


def _by_rescue(repo: Path, tmp: Path, rel: Path, text: str) -> str:
    wt = _worktree(repo, tmp)
    (wt / rel).parent.mkdir(parents=True, exist_ok=True)
    (wt / rel).write_text(text)
    proc = jmem(wt, "rescue")
    return proc.stdout + proc.stderr


def _by_distill(repo: Path, tmp: Path, rel: Path, text: str) -> str:
    """Edited in the main checkout with no hook running; the next distill adopts it."""
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text)
    proc = jmem(repo, "distill")
    return proc.stdout + proc.stderr


WAYS: dict[str, Callable[[Path, Path, Path, str], str]] = {
    "capture-main": _by_capture_in_main, "capture-worktree": _by_capture_in_worktree,
    "rescue": _by_rescue, "distill": _by_distill}


def _team(repo: Path) -> tuple[str, str, str]:
    """api holds two facts of its own and one web wrote for it (applies_to api)."""
    _init(repo, "api", "web")
    shared = _write(repo, "web", "The gateway retries twice", "--applies-to", "api")
    one = _write(repo, "api", "Builds run with make -j4", "--importance", "high",
                 "--type", "procedural", body="More jobs starve the test database.")
    two = _write(repo, "api", "The cache warms in ten seconds")
    three = _write(repo, "api", "Lint runs before the tests")
    _distill(repo)
    return shared, one, two + " " + three


@pytest.mark.parametrize("way", sorted(WAYS))
def test_deleting_another_agents_line_drops_that_holder_only(
        repo: Path, tmp_path: Path, way: str) -> None:
    shared, _, _ = _team(repo)
    rel = MEM / "api" / "MEMORY.md"
    text = (repo / rel).read_text()
    line = next(x for x in text.splitlines() if f"[{shared}]" in x)
    WAYS[way](repo, tmp_path, rel, text.replace(line + "\n", ""))
    _distill(repo)
    facts = _facts(repo)
    assert shared in facts, "web's fact was retracted team-wide"
    assert facts[shared]["holders"] == ["web"], facts[shared]
    [drop] = [e for e in _entries(repo, "api") if e.drops]
    assert drop.drops == (shared,) and drop.knew, "the drop knew nothing of the fact"


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_write_leaving_out_most_lines_is_refused_and_nothing_is_lost(
        repo: Path, tmp_path: Path, way: str) -> None:
    _, one, _ = _team(repo)
    rel = MEM / "api" / "MEMORY.md"
    text = (repo / rel).read_text()
    kept = [x for x in text.splitlines() if "[" not in x or f"[{one}]" in x]
    said = WAYS[way](repo, tmp_path, rel, "\n".join(kept) + "\n")
    assert "more than a third at once" in said, said
    assert not [e for e in _entries(repo, "api") if e.drops or e.retracts]
    if way in ("capture-main", "distill"):  # left where it was written: put back by hand
        assert (repo / rel).read_text() == "\n".join(kept) + "\n"
        git(repo, "checkout", "--", str(rel))
    _distill(repo)
    assert len(_facts(repo)) == 4


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_typo_fix_keeps_the_key_body_topic_type_and_importance(
        repo: Path, tmp_path: Path, way: str) -> None:
    _, one, _ = _team(repo)
    rel = MEM / "api" / "MEMORY.md"
    text = (repo / rel).read_text()
    assert "Builds run with make -j4" in text
    WAYS[way](repo, tmp_path, rel, text.replace("Builds run with make -j4",
                                                "Builds run with `make -j4`"))
    _distill(repo)
    facts = _facts(repo)
    fact = facts[one]
    assert fact["title"] == "Builds run with `make -j4`"
    assert fact["body"] == "More jobs starve the test database."
    assert (fact["topic"], fact["type"], fact["importance"]) == ("build", "procedural", "high")
    assert len(facts) == 4


def _native(name: str, description: str, body: str) -> str:
    return (f"---\nname: {name}\ndescription: {description}\nmetadata:\n  type: project\n"
            f"---\n\n{body}\n")


@pytest.mark.parametrize("way", sorted(WAYS))
def test_two_agents_native_memories_of_one_name_are_two_facts(
        repo: Path, tmp_path: Path, way: str) -> None:
    _init(repo, "api", "web")
    WAYS[way](repo, tmp_path, MEM / "api" / "project_build.md",
              _native("build commands", "api builds with make", "Run make -j4."))
    _distill(repo)
    WAYS[way](repo, tmp_path / "second", MEM / "web" / "project_build.md",
              _native("build commands", "web builds with vite", "Run npm run build."))
    _distill(repo)
    facts = _facts(repo)
    by_title = {f["title"]: f for f in facts.values()}
    assert by_title["api builds with make"]["holders"] == ["api"], facts
    assert by_title["web builds with vite"]["holders"] == ["web"], facts
    assert by_title["web builds with vite"]["key"] == "web-build-commands"
    # the second agent corrects its own memory: its qualified key, never api's
    WAYS[way](repo, tmp_path / "third", MEM / "web" / "project_build.md",
              _native("build commands", "web builds with vite 6", "Run npm run build."))
    _distill(repo)
    titles = sorted(f["title"] for f in _facts(repo).values())
    assert titles == ["api builds with make", "web builds with vite 6"]


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_native_memory_naming_a_subject_is_filed_under_its_topic(
        repo: Path, tmp_path: Path, way: str) -> None:
    """Claude Code's types (project, feedback…) are kinds, not subjects: a memory whose
    title, or file name after the type, starts with a topic the team has goes there."""
    _init(repo, "api", "web")
    _write(repo, "api", "Billing talks to the ledger over gRPC", topic="billing")
    _write(repo, "api", "Billing exports run nightly", topic="billing-exports")
    _distill(repo)
    WAYS[way](repo, tmp_path, MEM / "web" / "project_port.md",
              _native("port", "Billing port set to 8443", "Since the upgrade."))
    WAYS[way](repo, tmp_path / "b", MEM / "web" / "project_billing_retries.md",
              _native("retries", "Retries are capped at 5", "Per request."))
    WAYS[way](repo, tmp_path / "c", MEM / "web" / "project_exports.md",
              _native("exports", "Billing exports are gzipped", "Since May."))
    WAYS[way](repo, tmp_path / "d", MEM / "web" / "feedback_review.md",
              _native("review", "Billingual reviews need two approvals", "Team rule."))
    _distill(repo)
    topics = {f["title"]: f["topic"] for f in _facts(repo).values()}
    assert topics["Billing port set to 8443"] == "billing", topics
    assert topics["Retries are capped at 5"] == "billing", topics
    assert topics["Billing exports are gzipped"] == "billing-exports", topics  # the longest
    assert topics["Billingual reviews need two approvals"] == "project", topics  # words


def _long_notes() -> str:
    sections = [f"## Part {n}: the {n}th subsystem\n\n" + "\n".join(
        f"- Step {n}.{i}: a rule of the subsystem, with its reason spelled out at length."
        for i in range(40)) for n in range(6)]
    return _native("architecture notes", "How the system fits together",
                   "Intro line.\n\n" + "\n\n".join(sections))


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_native_file_over_the_entry_limit_is_kept_whole(
        repo: Path, tmp_path: Path, way: str) -> None:
    _init(repo, "api")
    text = _long_notes()
    assert len(text.encode()) > 8192 * 2
    said = WAYS[way](repo, tmp_path, MEM / "api" / "project_architecture.md", text)
    assert "refused" not in said, said
    _distill(repo)
    assert jmem(repo, "check").returncode == 0
    bodies = "\n".join(str(f.get("body", "")) for f in _facts(repo).values())
    for n in range(6):
        for i in range(40):
            assert f"Step {n}.{i}: a rule" in bodies, (n, i)
    assert not list((repo / ".git" / "journal-mem").glob("refused/**/*.md"))


def test_init_keeps_a_native_file_over_the_limit_and_one_with_a_secret_in_the_tree(
        repo: Path) -> None:
    folder = repo / MEM / "api"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "project_architecture.md").write_text(_long_notes())
    secret = _native("deploy", "How deploys log in", "key AKIAIOSFODNN7EXAMPLF for the bucket")
    (folder / "project_deploy.md").write_text(secret)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the team's memory")
    proc = jmem(repo, "init", "--agent", "api", "--no-claude")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "project_deploy.md: native memory refused (secret" in proc.stdout + proc.stderr
    assert (folder / "project_deploy.md").read_text() == secret  # never removed
    tracked = git(repo, "ls-files", str(MEM)).stdout
    assert "project_deploy.md" in tracked and "project_architecture.md" not in tracked
    bodies = "\n".join(str(f.get("body", "")) for f in _facts(repo).values())
    assert "Step 5.39: a rule" in bodies


def test_a_symlinked_sub_folder_is_never_filed(repo: Path, tmp_path: Path) -> None:
    _init(repo, "api")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "project_x.md").write_text(_native("x", "Outside the repository", "secretly"))
    (repo / MEM / "api" / "notes").symlink_to(outside)
    said = _hook(repo, repo / MEM / "api" / "notes" / "project_x.md")
    assert "symlink" in said and "not filed" in said, said
    assert (outside / "project_x.md").exists()
    assert not [e for e in _entries(repo, "api") if "Outside" in e.title]


@pytest.mark.parametrize("way", ["capture-main", "capture-worktree", "rescue"])
def test_a_deleted_line_wins_by_cause_over_a_clock_ahead(
        repo: Path, tmp_path: Path, way: str) -> None:
    _init(repo, "api")
    key = _write(repo, "api", "The queue acks late")
    others = [_write(repo, "api", f"Fact {n} stays") for n in range(3)]
    path = next(p for p in journal_files(repo, "api") if "queue-acks" in p.name)
    text = path.read_text()  # a teammate's clock three hours ahead wrote it
    created = next(x for x in text.splitlines() if x.startswith("created:"))
    ahead = dt.datetime.now(dt.UTC) + dt.timedelta(hours=3)
    path.write_text(text.replace(created, f"created: {ahead.isoformat()}"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "x", "--no-verify")
    _distill(repo)
    rel = MEM / "api" / "MEMORY.md"
    memory = (repo / rel).read_text()
    line = next(x for x in memory.splitlines() if f"[{key}]" in x)
    WAYS[way](repo, tmp_path, rel, memory.replace(line + "\n", ""))
    _distill(repo)
    assert sorted(_facts(repo)) == sorted(others)


def test_after_a_no_commit_distill_a_captured_edit_files_only_the_edit(repo: Path) -> None:
    _team(repo)
    _write(repo, "api", "One more lesson")
    _distill(repo, "--no-commit")
    rel = MEM / "api" / "MEMORY.md"
    text = (repo / rel).read_text()
    before = len(journal_files(repo, "api"))
    (repo / rel).write_text(text.replace("One more lesson", "One more lesson, corrected"))
    _hook(repo, repo / rel)
    titles = [e.title for e in _entries(repo, "api")]
    assert len(titles) == before + 1, titles  # the edit only: no header, footer, facts again
    assert titles.count("One more lesson, corrected") == 1, titles
    assert (repo / rel).exists()
    _distill(repo)
    assert "One more lesson, corrected" in (repo / rel).read_text()


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_memory_file_and_its_index_line_are_one_fact(
        repo: Path, tmp_path: Path, way: str) -> None:
    """Claude Code's own flow: write the memory file, then add its index line."""
    _init(repo, "api")
    _write(repo, "api", "Lint runs before the tests")
    _distill(repo)
    native = _native("flaky ports", "Port 5433 is taken on CI", "Use 5434 for the test db.")
    rel = MEM / "api" / "MEMORY.md"
    index = "- [Port 5433 is taken on CI](project_flaky_ports.md) — use 5434\n"
    if way == "capture-worktree" or way == "rescue":
        wt = _worktree(repo, tmp_path)
        (wt / MEM / "api" / "project_flaky_ports.md").write_text(native)
        (wt / rel).write_text((wt / rel).read_text() + index)
        if way == "rescue":
            proc = jmem(wt, "rescue")
            assert proc.returncode == 0, proc.stdout + proc.stderr
        else:
            _hook(wt, wt / MEM / "api" / "project_flaky_ports.md")
            _hook(wt, wt / rel, "Edit")
    else:
        (repo / MEM / "api" / "project_flaky_ports.md").write_text(native)
        if way == "capture-main":
            _hook(repo, repo / MEM / "api" / "project_flaky_ports.md")
        (repo / rel).write_text((repo / rel).read_text() + index)
        if way == "capture-main":
            _hook(repo, repo / rel, "Edit")
        else:
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "--no-verify", "-m", "memory without the hook")
    _distill(repo)
    titles = sorted(str(f["title"]) for f in _facts(repo).values())
    assert titles == ["Lint runs before the tests", "Port 5433 is taken on CI"], titles
    assert "\\[" not in (repo / rel).read_text()
