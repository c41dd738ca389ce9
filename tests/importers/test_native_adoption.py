"""Claude Code's native memory, in every shape the corpus lays, becomes lessons: counted.

For every shape: facts before = facts live after + facts refused with a reason. The
corpus (fixtures/native_memory.py) marks each fact `(NM-nnnn)`; after `init`, `distill`
and `check` (all green), every adopted marker is in exactly one live fact, no refused
marker is, every native file is gone from the memory folder in the distill's commit, and
every link of every distilled `MEMORY.md` resolves to a topic file and an anchor in it.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from fixtures.native_memory import (
    ADOPT,
    MEMORY_ROOT,
    REFUSE,
    SHAPES,
    Manifest,
    lay_all,
    make_gitignored,
    make_symlinked,
    write_mem0_snapshot,
)
from journal_mem.layout import is_native
from tests.helpers import git, jmem, make_repo

MARK_RE = re.compile(r"NM-\d+")
# a fact line, after the mark of a probable correction if it has one
FACT_LINK_RE = re.compile(r"^- (?:possibly outdated by \[[a-z0-9-]+\]: (?:“.*?” — was: )?)?"
                          r"\[(?:\\.|[^\\\]])*\]\(([^)\s]+)\) \[[a-z0-9-]+\]$", re.MULTILINE)


def _live_markers(repo: Path) -> dict[str, list[str]]:
    """{marker: [keys of the live facts holding it]}, from `jmem export` (every live fact)."""
    out = jmem(repo, "export")
    assert out.returncode == 0, out.stderr
    found: dict[str, list[str]] = {}
    for fact in json.loads(out.stdout)["facts"]:
        for marker in set(MARK_RE.findall(fact["title"] + "\n" + fact.get("body", ""))):
            found.setdefault(marker, []).append(fact["key"])
    return found


@pytest.fixture
def adopted(tmp_path: Path) -> tuple[Path, Manifest, str]:
    repo = make_repo(tmp_path / "repo")
    made = lay_all(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "native memory")
    init = jmem(repo, "init", "--agent", "api", "--no-claude")
    assert init.returncode == 0, init.stdout + init.stderr
    out = jmem(repo, "distill")
    assert out.returncode == 0, f"distill: {out.stdout}{out.stderr}"
    # A file holding a secret stays where the team keeps it (deleting it would delete it
    # from every clone): `check` names each one, and nothing else.
    refused = {f.path for f in made.files if f.expect and f.expect.outcome == REFUSE}
    out = jmem(repo, "check")
    said = out.stdout + out.stderr
    named = {line.split(": ", 1)[0] for line in said.splitlines() if ": secret: " in line}
    assert out.returncode == (1 if refused else 0), out.stdout + out.stderr
    assert {Path(p).name for p in named} == {Path(p).name for p in refused}, said
    assert all((repo / p).is_file() for p in named)
    return repo, made, init.stdout + init.stderr


def test_every_fact_is_live_once_or_refused_with_a_reason(
        adopted: tuple[Path, Manifest, str]) -> None:
    repo, made, said = adopted
    live = _live_markers(repo)
    counts = {}
    for shape in SHAPES:
        part = made.shape(shape)
        facts = [f for f in part.facts if f.marker]
        alive = [f for f in facts if f.expect.outcome == ADOPT]
        refused = [f for f in facts if f.expect.outcome == REFUSE]
        for fact in alive:
            assert len(live.get(fact.marker or "", [])) == 1, (shape, fact)
        for fact in refused:
            assert fact.marker not in live, (shape, fact)
        counts[shape] = (len(facts), sum(f.marker in live for f in facts), len(refused))
        assert counts[shape][0] == counts[shape][1] + counts[shape][2], (shape, counts)
    # the refused file is named, with its reason, by init
    refused_files = [f.path for f in made.files if f.expect and f.expect.outcome == REFUSE]
    for path in refused_files:
        assert re.search(re.escape(path) + r".*refused \(secret: line \d+: looks like",
                         " ".join(said.split()))  # init's notes come in short lines
    print(counts)


def test_native_files_leave_the_memory_folder_in_a_commit(
        adopted: tuple[Path, Manifest, str]) -> None:
    repo, made, _ = adopted
    tracked = git(repo, "ls-files", str(MEMORY_ROOT)).stdout.split()
    rel = [p[len(str(MEMORY_ROOT)) + 1:] for p in tracked]
    refused = sorted(Path(f.path).name for f in made.files
                     if f.expect and f.expect.outcome == REFUSE)
    # adopted files leave; a refused one (a secret) stays where the team keeps it
    assert sorted(Path(p).name for p in rel if is_native(p)) == refused
    status = git(repo, "status", "--porcelain", "--", str(MEMORY_ROOT)).stdout.splitlines()
    assert [line for line in status if not line.endswith("/.gitkeep")] == []


def _anchors(text: str) -> set[str]:
    """The ids GitHub gives a file's headings: the rendered text, lower case, letters,
    digits, `-` and `_` kept, spaces as `-`, `-1`, `-2`… for repeats."""
    out: set[str] = set()
    for line in text.split("\n"):
        if not line.startswith("#"):
            continue
        shown = html.unescape(re.sub(r"<[^>]*>", "", MarkdownIt("commonmark").render(line)))
        words = "".join(c for c in shown.strip().lower()
                        if c in "-_ " or unicodedata.category(c)[0] in "LNM")
        slug = words.replace(" ", "-")
        n, name = 0, slug
        while name in out:
            n += 1
            name = f"{slug}-{n}"
        out.add(name)
    return out


def test_every_link_in_a_distilled_memory_md_resolves(
        adopted: tuple[Path, Manifest, str]) -> None:
    repo, _, _ = adopted
    links = anchored = 0
    for memory_md in (repo / MEMORY_ROOT).glob("*/MEMORY.md"):
        text = memory_md.read_text()
        assert "\\*" not in text and "\\_" not in text  # emphasis is not escaped away
        for target in FACT_LINK_RE.findall(text):
            path, _, anchor = target.partition("#")
            topic = memory_md.parent / path
            assert topic.is_file(), (memory_md, target)
            links += 1
            if anchor:  # a title too long to fit beside its anchor links the file alone
                assert anchor in _anchors(topic.read_text()), (memory_md, target)
                anchored += 1
    facts = sum(len(re.findall(r"^- .* \[[a-z0-9-]+\]$", p.read_text(), re.MULTILINE))
                for p in (repo / MEMORY_ROOT).glob("*/MEMORY.md"))
    assert links == facts > 100 and anchored > facts * 0.6, (links, anchored, facts)


def test_a_symlinked_memory_folder_gets_one_message_and_the_fix(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    lay_all(repo)
    make_symlinked(repo, tmp_path / "elsewhere")
    out = jmem(repo, "init", "--agent", "api", "--no-claude")
    assert out.returncode != 0
    said = out.stdout + out.stderr
    assert "beyond a symbolic link" not in said
    assert said.count("is a symlink") == 1 and "cp -R " in said, said


def test_gitignored_memory_is_refused_by_every_import(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    make_gitignored(repo)
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore memory")
    claude_md = tmp_path / "CLAUDE.md"
    claude_md.write_text("# Rules\n\n- Never push to main\n")
    out = jmem(repo, "import", "claude-md", str(claude_md), "--agent", "api")
    assert out.returncode != 0
    assert "ignored" in out.stdout + out.stderr
    assert git(repo, "log", "--oneline").stdout.count("\n") == 2


def test_a_mem0_snapshot_keeps_dates_and_history_decides_liveness(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    assert jmem(repo, "init", "--agent", "billing", "--no-claude").returncode == 0
    made = write_mem0_snapshot(tmp_path / "mem0.json")
    out = jmem(repo, "import", "mem0", str(tmp_path / "mem0.json"), "--agent", "billing")
    said = out.stdout + out.stderr
    assert out.returncode == 1, said  # the record holding a token is refused, and named
    assert re.search(r"invalid: .*id 7c1e9a40-5b2d-4f6e-9a31-000000000006.*github token", said)
    assert "record 3 (id " in said and "deleted (its last history event is DELETE)" in said
    facts = {f["key"]: f for f in json.loads(jmem(repo, "export").stdout)["facts"]}
    live = {m: f for f in facts.values() for m in MARK_RE.findall(f["title"] + f["body"])}
    expected = made.facts
    adopted = [f for f in expected if f.expect.outcome == ADOPT]
    assert sorted(live) == sorted(f.marker for f in adopted)  # 4 live, 1 refused, 1 deleted
    for fact in adopted:
        assert fact.marker is not None and fact.expect.created is not None
        created = live[fact.marker]["created"]
        assert created[:19] == fact.expect.created[:19], (fact.marker, created)
    assert len(expected) == len(adopted) + 2


NATIVE_TYPES = {"feedback": "procedural", "project": "semantic", "reference": "semantic",
                "user": "semantic"}


def test_each_memory_file_is_one_lesson_keyed_by_its_name(
        adopted: tuple[Path, Manifest, str]) -> None:
    repo, made, _ = adopted
    facts = json.loads(jmem(repo, "export").stdout)["facts"]
    by_key = {f["key"]: f for f in facts}
    files = [laid for laid in made.files if laid.expect and laid.expect.outcome == ADOPT]
    assert len(files) == 68
    for laid in files:
        expect = laid.expect
        assert expect is not None and expect.key is not None and expect.title is not None
        fact = by_key[expect.key]
        assert fact["title"] == " ".join(expect.title.split())[:150] or \
            fact["title"].endswith("…"), (laid.path, fact["title"])
        assert fact["type"] == NATIVE_TYPES.get(expect.type or "", "semantic"), laid.path
        assert f"{MEMORY_ROOT}/{laid.path}@" in fact["source"], laid.path
