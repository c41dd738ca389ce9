"""The native-memory corpus (fixtures/native_memory.py) says what it lays.

These tests check the fixture against itself, not journal-mem: the manifest counts
what is on disk, every line it names is there, every index link resolves or is marked
as pointing at no file, markers are unique, the output is the same on every run, and
the symlink and gitignore helpers do what they say. No journal_mem import.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from fixtures.native_memory import (
    ADOPT,
    DELETED,
    HTML_COMMENT,
    INDEX_LINE,
    MEMORY_ROOT,
    PLACEHOLDER,
    REFUSE,
    SECRET,
    SHAPES,
    SKIP,
    TYPES,
    Manifest,
    fake_aws_key,
    lay_agent_files,
    lay_agent_index,
    lay_all,
    make_gitignored,
    make_symlinked,
    mem0_snapshot,
    write_mem0_snapshot,
)

NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
LINK_RE = re.compile(r"\[(?:[^\]]|\](?!\())+\]\(([^)\s]+)\)")


def _tree(root: Path) -> dict[str, bytes]:
    mem = root / MEMORY_ROOT
    return {p.relative_to(mem).as_posix(): p.read_bytes()
            for p in sorted(mem.rglob("*")) if p.is_file()}


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)


@pytest.fixture
def laid(tmp_path: Path) -> tuple[Path, Manifest]:
    root = tmp_path / "repo"
    root.mkdir()
    return root, lay_all(root)


def test_the_manifest_names_every_file_laid_and_nothing_else(laid: tuple[Path, Manifest]) -> None:
    root, made = laid
    assert sorted(_tree(root)) == sorted(f.path for f in made.files)
    assert len({f.path for f in made.files}) == len(made.files)
    assert {f.shape for f in made.files} == set(SHAPES)
    totals = made.totals()
    assert totals["files"] == len(_tree(root)) == 75
    assert totals[ADOPT] + totals[REFUSE] + totals[SKIP] == totals["items"]


def test_the_agent_has_fifty_memory_files_of_every_kind(laid: tuple[Path, Manifest]) -> None:
    root, made = laid
    files = made.shape("agent-files").files
    assert len(files) == 50 and {f.agent for f in files} == {"api"}
    texts = {f.path: (root / MEMORY_ROOT / f.path).read_text(encoding="utf-8") for f in files}
    styles = {
        "metadata": sum("\nmetadata:\n  type:" in t for t in texts.values()),
        "top-level type": sum(re.search(r"^type: ", t, re.M) is not None for t in texts.values()),
        "extra metadata keys": sum("originSessionId:" in t for t in texts.values()),
        "no frontmatter": sum(not t.startswith("---") for t in texts.values()),
        "heading first": sum(t.startswith("# ") for t in texts.values()),
        "only a heading": sum(t.count("\n") == 1 and t.startswith("# ") for t in texts.values()),
        "sections": sum("\n## " in t for t in texts.values()),
    }
    assert all(styles.values()), styles
    kinds = {f.expect.type for f in files if f.expect}
    assert kinds == {*TYPES, None}
    for f in files:
        assert f.expect and f.expect.outcome == ADOPT and f.facts
        assert f.expect.key and NAME_RE.fullmatch(f.expect.key), f.expect.key
        assert f.expect.title and f.expect.title in texts[f.path]
    keys = [f.expect.key for f in files if f.expect]
    assert len(set(keys)) == len(keys)


def test_every_fact_is_on_its_line_and_every_marker_is_laid_once(
        laid: tuple[Path, Manifest]) -> None:
    root, made = laid
    tree = {path: data.decode("utf-8") for path, data in _tree(root).items()}
    everything = "\n".join(tree.values())
    for laid_file in made.files:
        lines = tree[laid_file.path].split("\n")
        for fact in laid_file.facts:
            assert fact.line is not None and fact.text in lines[fact.line - 1], fact
            if fact.marker:
                assert f"({fact.marker})" in fact.text, fact
    markers = made.markers
    assert len(markers) == len(set(markers))
    assert sorted(re.findall(r"\((NM-\d+)\)", everything)) == sorted(markers)


def test_index_links_resolve_or_are_marked_as_pointing_at_no_file(
        laid: tuple[Path, Manifest]) -> None:
    root, made = laid
    mem = root / MEMORY_ROOT
    indexes = [f for f in made.files if f.path.endswith("MEMORY.md")]
    assert len(indexes) == 6 and all(f.expect is None for f in indexes)
    dangling = 0
    for index in indexes:
        lines = (mem / index.path).read_text(encoding="utf-8").split("\n")
        linked = {n for n, line in enumerate(lines, 1) if LINK_RE.search(line)}
        facts = {f.line: f for f in index.facts if f.link}
        assert set(facts) <= linked
        for fact in facts.values():
            if fact.target is None:
                dangling += 1
                assert fact.expect.outcome == ADOPT and fact.marker, fact
                assert fact.expect.key and NAME_RE.fullmatch(fact.expect.key)
                assert not list(mem.rglob(Path(fact.link or "").name)), fact
            else:
                assert (mem / fact.target).is_file(), fact
                assert fact.expect == type(fact.expect)(SKIP, reason=INDEX_LINE)
        for n in linked - set(facts):  # a link inside a line judged as a bullet
            assert any(f.line == n for f in index.facts), (index.path, n)
    assert dangling == 10  # api 4, root 2, i18n 2, web 2
    by_name = made.file("MEMORY.md").facts
    assert any(f.link == "feedback_review_checklist.md"
               and f.target == "data/feedback_review_checklist.md" for f in by_name)


def test_what_is_skipped_and_refused_and_why(laid: tuple[Path, Manifest]) -> None:
    _, made = laid
    reasons = {(f.expect.outcome, f.expect.reason) for f in made.facts}
    assert reasons == {(ADOPT, None), (REFUSE, SECRET), (SKIP, HTML_COMMENT),
                       (SKIP, PLACEHOLDER), (SKIP, INDEX_LINE)}
    placeholders = [f.text for f in made.facts if f.expect.reason == PLACEHOLDER]
    assert "No active feedback entries." in placeholders and not any(
        f.marker for f in made.facts if f.expect.outcome == SKIP)
    assert all(f.expect.outcome == REFUSE for f in made.facts if not f.marker
               and f.expect.outcome != SKIP)  # the lines holding the secret
    comments = [f for f in made.facts if f.expect.reason == HTML_COMMENT]
    assert comments and all(f.text.startswith("<!--") or f.text.endswith("-->")
                            or f.line == 2 for f in comments)
    assert made.file("api/MEMORY.md").facts[0].expect.reason == HTML_COMMENT


def test_secret_like_code_is_adopted_and_the_fake_key_refused(laid: tuple[Path, Manifest]) -> None:
    root, made = laid
    header = made.file("gateway/reference_api_key_header.md")
    assert header.expect and header.expect.outcome == ADOPT
    assert any('apiKey = context.Request.Headers["X-API-Key"]' in f.text for f in header.facts)
    sandbox = made.file("gateway/project_partner_sandbox.md")
    assert sandbox.expect and sandbox.expect.outcome == REFUSE
    assert all(f.expect.reason == SECRET for f in sandbox.facts)
    key_id, secret = fake_aws_key()
    assert [f.text.split(" = ")[1] for f in sandbox.facts if not f.marker] == [key_id, secret]
    text = (root / MEMORY_ROOT / sandbox.path).read_text(encoding="utf-8")
    assert re.fullmatch(r"AKIA[0-9A-Z]{16}", key_id) and len(secret) == 40
    assert key_id in text and secret in text
    assert key_id not in Path(__file__).read_text() + Path(
        "fixtures/native_memory.py").read_text()  # built at run time, not in the source


def test_nested_items_carry_their_parents_words(laid: tuple[Path, Manifest]) -> None:
    root, made = laid
    index = made.file("data/MEMORY.md")
    lines = (root / MEMORY_ROOT / index.path).read_text(encoding="utf-8").split("\n")
    nested = [f for f in index.facts if f.context]
    assert len(nested) >= 10
    for fact in nested:
        assert fact.expect.title is None  # the importer titles it, keeping the context
        above = "\n".join(lines[: (fact.line or 0) - 1])
        assert all(word in above for word in fact.context), fact
    deep = next(f for f in nested if "pyarrow" in f.text)
    assert lines[(deep.line or 0) - 1].startswith("    - ")


def test_beyond_ascii_and_literal_markdown_are_laid_as_written(
        laid: tuple[Path, Manifest]) -> None:
    root, made = laid
    text = "".join((root / MEMORY_ROOT / f.path).read_text(encoding="utf-8")
                   for f in made.shape("non-ascii").files)
    for sample in ("é", "한글", "日本", "术语", "طلب", "₫", "👩\u200d💻", "🇫🇷", "⚠️", "e\u0301"):
        assert sample in text, sample
    # the title is the description, markdown kept; the `name` (`**Never** …`) is the key
    expects = {f.expect.title: f.expect.key for f in made.shape("literal-markdown").files
               if f.expect}
    assert expects["Use the tb- utility classes: never `style={{…}}`"] == \
        "never-add-inline-styles"
    web = "".join((root / MEMORY_ROOT / f.path).read_text(encoding="utf-8")
                  for f in made.shape("literal-markdown").files)
    for sample in ("`style={{…}}`", "[[feedback_never_inline_styles]]", "\\|", "C:\\build",
                   "```sh\n# this is", "name: **Never**", "[**Never** force-push `main`]"):
        assert sample in web, sample


def test_the_same_calls_lay_the_same_bytes(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    assert lay_all(first).to_json() == lay_all(second).to_json()
    assert _tree(first) == _tree(second)
    assert write_mem0_snapshot(first / "m.json").to_json() == write_mem0_snapshot(
        second / "m.json").to_json()
    assert (first / "m.json").read_bytes() == (second / "m.json").read_bytes()


def test_shapes_can_be_laid_alone(tmp_path: Path) -> None:
    files = lay_agent_files(tmp_path)
    index = lay_agent_index(tmp_path)
    assert files.totals()["files"] == 50 and index.totals()["facts"] == 4
    links = [f for f in index.facts if f.link]
    assert sum(f.target is None for f in links) == 4 and len(links) == 50


def test_the_mem0_snapshot_shape(tmp_path: Path) -> None:
    data, facts = mem0_snapshot()
    made = write_mem0_snapshot(tmp_path / "mem0.json")
    assert json.loads((tmp_path / "mem0.json").read_text(encoding="utf-8")) == data
    records = data["memories"]
    assert isinstance(records, list) and len(records) == len(facts) == made.totals()["items"]
    for record, fact in zip(records, facts, strict=True):
        memory, history = record["memory"], record["history"]
        history = sorted(history, key=lambda row: (row["updated_at"] or "", str(row["id"])))
        assert {"id", "memory", "createdAt", "updatedAt", "metadata"} <= set(memory)
        assert fact.marker and fact.marker in memory["memory"]
        events = [row.get("event", row.get("action")) for row in history]
        assert events[0] == "ADD" and set(events) <= {"ADD", "UPDATE", "DELETE"}
        if events[-1] == "DELETE":
            assert fact.expect.outcome == SKIP and fact.expect.reason == DELETED
            assert history[-1]["new_memory"] is None and history[-1]["is_deleted"] is True
        else:
            last = history[-1].get("new_memory", history[-1].get("new_value"))
            assert last == memory["memory"]
        if fact.expect.outcome == ADOPT:
            assert fact.expect.title == memory["memory"]
            assert fact.expect.created == memory["createdAt"]
    assert [f.expect.outcome for f in facts].count(ADOPT) == 4
    ts = [r["history"] for r in records if "previous_value" in r["history"][0]]
    assert ts and ts[0][0]["id"] > ts[0][-1]["id"]  # the TypeScript SDK's rows, newest first


def test_the_memory_folder_can_be_a_symlink(tmp_path: Path) -> None:
    for relative in (False, True):
        root = tmp_path / f"repo-{relative}"
        made = lay_all(root)
        elsewhere = tmp_path / f"shared-{relative}" / "agent-memory"
        link = make_symlinked(root, elsewhere, relative=relative)
        assert link.is_symlink() and link == root / MEMORY_ROOT
        assert os.path.isabs(os.readlink(link)) is not relative
        assert sorted(_tree(root)) == sorted(f.path for f in made.files)
    root = tmp_path / "one-agent"
    lay_all(root)
    link = make_symlinked(root, tmp_path / "api-elsewhere", agent="api")
    assert link.is_symlink() and (link / "MEMORY.md").is_file()


@pytest.mark.parametrize("where", ["gitignore", "exclude"])
def test_the_memory_folder_can_be_gitignored(tmp_path: Path, where: str) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    assert _git(root, "init", "-q", "-b", "main").returncode == 0
    lay_all(root)
    (root / ".gitignore").write_text("node_modules/")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "memory, then ignored")
    written = make_gitignored(root, where=where)
    assert written.read_text().endswith("# Claude Code\n.claude/agent-memory/\n")
    probe = root / MEMORY_ROOT / "api" / "feedback_new.md"
    probe.write_text("new\n")
    assert _git(root, "check-ignore", "-q", str(probe)).returncode == 0
    status = _git(root, "status", "--porcelain").stdout
    assert "feedback_new" not in status
    tracked = _git(root, "ls-files", str(MEMORY_ROOT)).stdout.split()
    assert len(tracked) == 75  # ignored, yet committed: still tracked
