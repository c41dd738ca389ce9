"""`jmem write`: one valid entry in the main checkout, from anywhere; nothing on bad input."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
from pathlib import Path

import pytest
from helpers import base_env, git, jmem, journal_files, make_repo

from journal_mem import main as entry_point
from journal_mem.journal.entry import parse

MEM = Path(".claude") / "agent-memory"


def all_files(root: Path) -> set[Path]:
    """Every file of the checkout and its outbox (the config snapshot cache aside)."""
    return {p for p in root.rglob("*") if p.is_file() and "cache" not in p.parts}


def outbox_files(main: Path) -> list[Path]:
    return sorted((main / ".git" / "journal-mem" / "outbox").rglob("*.md"))


def test_write_from_worktree_subdirectory_lands_in_main(repo: Path, worktree: Path) -> None:
    sub = worktree / "a" / "b"
    sub.mkdir(parents=True)
    proc = jmem(sub, "write", "--agent", "api", "--topic", "testing", "--title",
                "Use the fixture", "--body", "Because.", "--tag", "db", "--importance", "high")
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stdout.strip())
    assert path.parent == (repo / MEM / "api" / "journal").resolve()
    assert path.name.startswith(parse(path.read_bytes()).created.date().isoformat())
    entry = parse(path.read_bytes(), folder_agent="api")
    assert (entry.title, entry.body, entry.tags, entry.importance) == (
        "Use the fixture", "Because.", ("db",), "high")
    assert not list((worktree / MEM / "api" / "journal").glob("*.md"))
    assert git(worktree, "status", "--porcelain").stdout == ""


def test_write_inside_a_pre_commit_hook_of_a_worktree(repo: Path, worktree: Path) -> None:
    """The hook inherits GIT_DIR and GIT_INDEX_FILE of the worktree; the entry goes to main."""
    hooks = Path(git(repo, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
                 .stdout.strip())
    hooks.mkdir(exist_ok=True)
    hook = hooks / "pre-commit"
    hook.write_text(
        "#!/bin/sh\n"
        f'"{os.sys.executable}" -m journal_mem write --agent web --topic hooks '
        '--title "Written from a hook" > "$GIT_DIR/../hook-out" 2>&1 || exit 1\n'
        'test -n "$GIT_INDEX_FILE" || exit 1\n'
    )
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    (worktree / "code.txt").write_text("x\n")
    git(worktree, "add", "code.txt")
    git(worktree, "commit", "-q", "-m", "code")
    files = journal_files(repo, "web")
    assert [parse(f.read_bytes()).title for f in files] == ["Written from a hook"]
    assert git(repo, "status", "--porcelain", "--untracked-files=no").stdout == ""
    assert git(repo, "ls-files", "--stage").stdout.count("journal/") == 2  # only the .gitkeeps


@pytest.mark.parametrize("how", ["flag", "env"])
def test_outbox(repo: Path, worktree: Path, how: str) -> None:
    args = ["write", "--agent", "api", "--topic", "t", "--title", "Boxed", "--json"]
    env = base_env(JMEM_OUTBOX="1") if how == "env" else None
    proc = jmem(worktree, *args, *(["--outbox"] if how == "flag" else []), env=env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["outbox"] is True and out["key"] == "boxed"
    assert Path(out["path"]).parent == (repo / ".git" / "journal-mem" / "outbox" / "api").resolve()
    assert "outbox" in proc.stderr
    assert journal_files(repo, "api") == []


def test_unwritable_main_checkout_falls_back_to_outbox(repo: Path, worktree: Path) -> None:
    blocked = repo / MEM / "newagent"
    blocked.mkdir()
    (blocked / "journal").write_text("not a folder")
    proc = jmem(worktree, "write", "--agent", "newagent", "--topic", "t", "--title", "Fallback")
    assert proc.returncode == 0, proc.stderr
    assert "cannot be written" in proc.stderr and "outbox" in proc.stderr
    assert [p.parent.name for p in outbox_files(repo)] == ["newagent"]


def test_body_sources(repo: Path, tmp_path: Path) -> None:
    assert jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", "Stdin",
                stdin="from stdin\n").returncode == 0
    body = tmp_path / "body.md"
    body.write_text("from a file\n")
    assert jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", "File",
                "--body-file", str(body)).returncode == 0
    assert jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", "Dash",
                "--body-file", "-", stdin="dash\n").returncode == 0
    bodies = {parse(p.read_bytes()).title: parse(p.read_bytes()).body
              for p in journal_files(repo, "api")}
    assert bodies == {"Stdin": "from stdin", "File": "from a file", "Dash": "dash"}
    proc = jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", "Both",
                "--body", "x", "--body-file", str(body))
    assert proc.returncode == 2 and "give the body once" in proc.stderr


def test_every_field_option(repo: Path) -> None:
    proc = jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", "All fields",
                "--type", "procedural", "--confidence", "0.6", "--importance", "critical",
                "--key", "my-key", "--supersedes", "old-a", "--supersedes", "old-b",
                "--retracts", "gone", "--applies-to", "web", "--valid-until", "2030-01-01",
                "--tag", "x", "--ref", "src/app.py", "--source", "PR #12", "--json")
    assert proc.returncode == 0, proc.stderr
    entry = parse(Path(json.loads(proc.stdout)["path"]).read_bytes())
    assert (entry.type, entry.confidence, entry.key) == ("procedural", 0.6, "my-key")
    assert entry.supersedes == ("old-a", "old-b") and entry.retracts == ("gone",)
    assert entry.applies_to == ("web",) and str(entry.valid_until) == "2030-01-01"
    assert entry.refs == ("src/app.py",) and entry.source == "PR #12"


def test_from_file_keeps_created(repo: Path, tmp_path: Path) -> None:
    note = tmp_path / "2024-01-02-old-note.md"
    note.write_text("---\nagent: web\ntopic: history\n---\n\n# An old note\n\nbackfilled\n")
    proc = jmem(repo, "write", "--from-file", str(note))
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stdout.strip())
    assert path.name.startswith("2024-01-02-an-old-note-")
    assert str(parse(path.read_bytes()).created) == "2024-01-02 00:00:00+00:00"
    proc = jmem(repo, "write", "--from-file", str(note), "--agent", "api")
    assert proc.returncode == 1 and "the file says 'web' but --agent is 'api'" in proc.stderr
    proc = jmem(repo, "write", "--from-file", str(note), "--title", "x")
    assert proc.returncode == 2 and "drop --title" in proc.stderr


@pytest.mark.parametrize(
    ("args", "stdin", "expected"),
    [
        (["--agent", "../x", "--topic", "t", "--title", "x"], None, "agent: '../x' is not a valid"),
        (["--agent", "api", "--topic", "../../etc", "--title", "x"], None, "topic: '../../etc'"),
        (["--agent", "api", "--topic", "t", "--title", ""], None, "title: empty"),
        (["--agent", "api", "--topic", "t", "--title", "x" * 151], None, "title: 151 characters"),
        (["--agent", "api", "--topic", "t", "--title", "x", "--confidence", "0.5"], None,
         "confidence: 0.5 is outside 0.7–0.95 for type semantic"),
        (["--agent", "api", "--topic", "t", "--title", "x", "--valid-until", "2026-13-01"],
         None, "valid_until: '2026-13-01' is not a real date"),
        (["--agent", "api", "--topic", "t", "--title", "x"] + [f"--tag=t{i}" for i in range(9)],
         None, "tags: 9 tags, at most 8"),
        (["--agent", "api", "--topic", "t", "--title", "x", "--tag", "b@d"], None,
         "tags: 'b@d' is not a valid tag"),
        (["--agent", "api", "--topic", "t", "--title", "x"], "y" * 9000,
         "body: 9000 bytes, over the 8192-byte limit"),
        (["--agent", "api", "--topic", "t", "--title", "x"], b"\xff\xfe", "stdin: not valid UTF-8"),
        (["--agent", "api", "--topic", "t", "--title", "x"], b"a\x00b", "stdin: holds a NUL byte"),
        (["--agent", "api", "--title", "x"], None, "topic: required (--topic)"),
    ],
)
def test_bad_input_exit_1_and_nothing_written(repo: Path, args: list[str],
                                              stdin: str | bytes | None, expected: str) -> None:
    before = all_files(repo)
    proc = jmem(repo, "write", *args, stdin=stdin)
    assert proc.returncode == 1, proc.stderr
    assert expected in proc.stderr
    assert all_files(repo) == before


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"---\nagent: api\ntopic: t\ncreated: 2026-01-01T00:00:00Z\nsupersede: [x]\n---\n# t\n",
         "supersede: unknown field (did you mean 'supersedes'?)"),
        (b"---\n- a\n---\n# t\n", "frontmatter: must be a mapping"),
        (b"---\nagent: !!python/object/apply:os.system [id]\n---\n# t\n", "YAML tag"),
        (b"---\nagent: api\xff\n---\n# t\n", "not valid UTF-8"),
        (b"---\nagent: a\x00pi\n---\n# t\n", "NUL byte"),
    ],
)
def test_bad_from_file_names_the_file(repo: Path, tmp_path: Path, text: bytes,
                                      expected: str) -> None:
    bad = tmp_path / "2026-01-01-bad.md"
    bad.write_bytes(text)
    before = all_files(repo)
    proc = jmem(repo, "write", "--from-file", str(bad))
    assert proc.returncode == 1
    assert f"{bad}: " in proc.stderr and expected in proc.stderr
    assert all_files(repo) == before


def test_a_retraction_under_a_facts_key_is_refused_not_taken_for_a_restatement(
        repo: Path) -> None:
    """A lesson that retracts (or drops) keys states no fact: given the key of a live
    fact, its words would never replace that fact's, and nothing said so (the fact
    stayed as it was, while `log` called the lesson a correction). Refused, with the
    fix; a retraction under its own key, written twice, is not."""
    def write(*args: str) -> object:
        return jmem(repo, "write", "--agent", "api", "--topic", "ci", *args, stdin="")

    fact = write("--title", "The CI cache lives in /var/cache/ci", "--key", "ci-cache")
    other = write("--title", "Builds retry twice", "--key", "ci-retry")
    assert fact.returncode == 0 and other.returncode == 0  # type: ignore[attr-defined]
    before = all_files(repo)
    proc = jmem(repo, "write", "--agent", "api", "--topic", "ci", "--key", "ci-cache",
                "--retracts", "ci-retry", "--title", "The CI cache lives in /srv/ci-cache",
                stdin="")
    assert proc.returncode == 1, proc.stderr
    assert "'ci-cache' names a fact, but a lesson that retracts keys" in proc.stderr
    assert "write the new wording as one lesson (--key ci-cache)" in proc.stderr
    assert all_files(repo) == before
    for _ in range(2):  # its own key: the newest entry of it states no fact either
        proc = write("--retracts", "ci-retry", "--title", "Builds no longer retry")
        assert proc.returncode == 0, proc.stderr  # type: ignore[attr-defined]
    restated = write("--key", "ci-cache", "--title", "The CI cache lives in /srv/ci-cache")
    assert restated.returncode == 0, restated.stderr  # type: ignore[attr-defined]


def test_not_a_repository_exit_4(tmp_path: Path) -> None:
    proc = jmem(tmp_path, "write", "--agent", "a", "--topic", "t", "--title", "x")
    assert proc.returncode == 4 and "not inside a git work tree" in proc.stderr


def test_bare_repository_worktree_exit_4(tmp_path: Path) -> None:
    src = make_repo(tmp_path / "src")
    git(tmp_path, "clone", "-q", "--bare", str(src), str(tmp_path / "b.git"))
    git(tmp_path / "b.git", "worktree", "add", "-q", str(tmp_path / "wt"), "main")
    proc = jmem(tmp_path / "wt", "write", "--agent", "a", "--topic", "t", "--title", "x")
    assert proc.returncode == 4 and "bare" in proc.stderr


def test_unexpected_error_exit_3_with_log(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("journal_mem.lessons.write.file_entry", explode)
    monkeypatch.chdir(repo)
    code = entry_point.main(["write", "--agent", "api", "--topic", "t", "--title", "x",
                             "--body", "b"])
    err = capsys.readouterr().err
    assert code == 3 and "unexpected error: RuntimeError: disk on fire" in err
    log = Path(err.split("the details are in ")[1].split(";")[0])
    assert "disk on fire" in log.read_text() and "Traceback" in log.read_text()


def _writer(args: tuple[str, int]) -> int:
    from journal_mem.journal.entry import build
    from journal_mem.journal.files import record
    from journal_mem.repo import open_context

    root, count = args
    ctx = open_context(root)
    for _ in range(count):
        record(ctx.layout, build(agent="api", topic="race", title="Same title every time"))
    return count


def test_concurrent_writers_lose_nothing(repo: Path) -> None:
    """8 processes x 200 writes of one title: 1,600 distinct, valid files."""
    with multiprocessing.get_context("spawn").Pool(8) as pool:
        assert sum(pool.map(_writer, [(str(repo), 200)] * 8)) == 1600
    files = journal_files(repo, "api")
    assert len(files) == 1600
    assert len({f.name for f in files}) == 1600
    assert all(parse(f.read_bytes(), folder_agent="api").title == "Same title every time"
               for f in files)
    leftovers = [p for p in (repo / MEM / "api" / "journal").iterdir() if p.name.startswith(".tmp")]
    assert leftovers == []


@pytest.mark.parametrize("tmpfile", [True, False])
def test_create_exclusive_never_replaces_and_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmpfile: bool) -> None:
    from journal_mem.errors import JournalMemError
    from journal_mem.fsutil import create_exclusive

    if not tmpfile:  # a filesystem or OS without O_TMPFILE: the named temp file path
        monkeypatch.delattr(os, "O_TMPFILE", raising=False)
    (tmp_path / "taken.md").write_bytes(b"old")
    with pytest.raises(JournalMemError, match="could not find a free file name"):
        create_exclusive(str(tmp_path), lambda suffix: "taken.md", b"new")
    assert (tmp_path / "taken.md").read_bytes() == b"old"
    path = create_exclusive(str(tmp_path), lambda suffix: f"n-{suffix}.md", b"new")
    assert Path(path).read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["taken.md", Path(path).name])


@pytest.mark.parametrize("title", [
    "Prod key is sk-ant-" + "api03-Xk9Lm2Np8Rs3Tv6Wy1Za4Bc7De0Fg5Hj8",
    "Connect to postgres://admin:" + "S3cr3tPassw0rd" + "@db.internal/app",
    "AWS secret " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYz8Q8ZR3KEY",
])
def test_a_secret_in_a_title_never_becomes_a_key_or_a_file_name(tmp_path: Path,
                                                                title: str) -> None:
    """Refused even with `guard.scan_secrets` off: the key and file name would keep it."""
    main = make_repo(tmp_path / "main")
    assert jmem(main, "init", "--agent", "api").returncode == 0
    before = all_files(main)
    env = {**base_env(), "JMEM_GUARD_SCAN_SECRETS": "false"}
    proc = jmem(main, "write", "--agent", "api", "--topic", "ops", "--title", title, env=env)
    assert proc.returncode != 0
    assert "in the title" in proc.stderr
    secret = title.split()[-1]
    assert secret not in proc.stderr + proc.stdout
    assert all_files(main) == before
