"""Memory that checks the code it cites (issue 32): a fact citing lines or a symbol is
marked, on its own MEMORY.md line and in the wake pack, when a later commit changes that
code, naming the path and the commit; moves and renames never mark or drop it.

Every repository here is real git with real history; lessons are written with the real
`jmem write --ref PATH#ANCHOR`, from the main checkout or a linked worktree, and folded by
the real `jmem distill`; `jmem check` must agree with every distill."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import add_worktree, git, jmem

MEM = ".claude/agent-memory"
PAY = """\
import os


class Billing:
    def charge(self, amount):
        limit = 3
        return amount * limit

    def refund(self, amount):
        return -amount


def helper():
    return os.sep
"""


MOVED = ("import os\n\n\ndef helper():\n    return os.sep\n\n\n"
         + PAY.split("\n\n\ndef helper")[0])


def repo(tmp_path: Path, text: str = PAY) -> Path:
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "src").mkdir()
    (root / "src" / "pay.py").write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the payment module")
    assert jmem(root, "init", "--agent", "api", "--agent", "web", "--no-git-hooks",
                "--no-claude").returncode == 0
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "jmem")
    return root


def write(cwd: Path, title: str, *refs: str, agent: str = "api", key: str = "",
          ok: bool = True) -> str:
    args = ["write", "--agent", agent, "--topic", "pay", "--title", title, "--json"]
    args += [x for r in refs for x in ("--ref", r)]
    args += ["--key", key] if key else []
    res = jmem(cwd, *args, stdin="")
    if not ok:
        assert res.returncode != 0, res.stdout
        return res.stderr
    assert res.returncode == 0, res.stderr
    return str(json.loads(res.stdout)["key"])


def commit(root: Path, message: str, edit: dict[str, str] | None = None) -> str:
    for path, text in (edit or {}).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").stdout.strip()


def distill(root: Path) -> str:
    res = jmem(root, "distill")
    assert res.returncode == 0, res.stdout + res.stderr
    check = jmem(root, "check")
    assert check.returncode == 0, check.stdout + check.stderr
    return (root / MEM / "api" / "MEMORY.md").read_text()


def line_of(memory: str, key: str) -> str:
    found = [line for line in memory.splitlines() if line.endswith(f"[{key}]")]
    assert len(found) == 1, memory
    return found[0]


def test_lines_inserted_above_follow_silently(tmp_path: Path) -> None:
    root = repo(tmp_path)
    key = write(root, "Charging multiplies by the limit of 3", "src/pay.py#L6-L7")
    distill(root)
    commit(root, "a header", {"src/pay.py": "# header\n# more\n\n" + PAY})
    line = line_of(distill(root), key)
    assert line.startswith("- [Charging multiplies"), line


def test_edited_lines_mark_the_fact_with_path_and_commit(tmp_path: Path) -> None:
    root = repo(tmp_path)
    key = write(root, "Charging multiplies by the limit of 3", "src/pay.py#L6-L7")
    other = write(root, "Refunds are negative charges", "src/pay.py#Billing.refund")
    distill(root)
    sha = commit(root, "Raise the charge limit to 5",
                 {"src/pay.py": PAY.replace("limit = 3", "limit = 5")})
    memory = distill(root)
    line = line_of(memory, key)
    assert line.startswith(f"- cited code changed: `src/pay.py#L6-L7` in {sha[:7]} "
                           "(Raise the charge limit to 5) — was: [Charging"), line
    assert line_of(memory, other).startswith("- [Refunds"), memory
    wake = jmem(root, "wake", "--agent", "api")
    assert f"`src/pay.py#L6-L7` in {sha[:7]}" in wake.stdout
    topic = (root / MEM / "api" / "topics" / "pay.md").read_text()
    assert f"cited code changed: `src/pay.py#L6-L7` in {sha[:7]}" in topic
    # a later commit elsewhere in the file does not move the blame
    commit(root, "helper docs", {"src/pay.py": PAY.replace("limit = 3", "limit = 5")
                                 + "\n# trailing\n"})
    assert f"in {sha[:7]} " in line_of(distill(root), key)


def test_a_renamed_file_is_followed_for_lines_symbols_and_files(tmp_path: Path) -> None:
    root = repo(tmp_path)
    lines = write(root, "Charging multiplies by the limit of 3", "src/pay.py#L6-L7")
    symbol = write(root, "Refunds are negative charges", "src/pay.py#Billing.refund")
    whole = write(root, "The payment module holds the billing class", "src/pay.py")
    distill(root)
    git(root, "mv", "src/pay.py", "src/billing.py")
    commit(root, "rename the module")
    memory = distill(root)
    for key in (lines, symbol, whole):
        assert line_of(memory, key).startswith("- ["), memory
    # and after the rename, an edit is still seen through it
    sha = commit(root, "refunds round down",
                 {"src/billing.py": PAY.replace("return -amount", "return -int(amount)")})
    assert f"`src/pay.py#Billing.refund` in {sha[:7]}" in line_of(distill(root), symbol)


def test_a_symbol_moved_within_its_file_is_followed(tmp_path: Path) -> None:
    root = repo(tmp_path)
    key = write(root, "helper returns the path separator", "src/pay.py#helper")
    distill(root)
    moved = MOVED
    commit(root, "helper first", {"src/pay.py": moved + "\n"})
    assert line_of(distill(root), key).startswith("- [helper returns")
    sha = commit(root, "helper returns a slash",
                 {"src/pay.py": moved.replace("return os.sep", 'return "/"') + "\n"})
    assert f"`src/pay.py#helper` in {sha[:7]}" in line_of(distill(root), key)


def test_lines_moved_within_the_file_are_followed(tmp_path: Path) -> None:
    root = repo(tmp_path)
    key = write(root, "helper returns the path separator", "src/pay.py#L13-L14")
    distill(root)
    moved = MOVED
    commit(root, "helper first", {"src/pay.py": moved + "\n"})
    assert line_of(distill(root), key).startswith("- [helper returns")


def test_a_deleted_file_drops_the_fact_or_marks_it(tmp_path: Path) -> None:
    root = repo(tmp_path)
    key = write(root, "Charging multiplies by the limit of 3", "src/pay.py#L6-L7")
    distill(root)
    git(root, "rm", "-q", "src/pay.py")
    commit(root, "drop the payment module")
    res = jmem(root, "distill", "--json")
    assert res.returncode == 0, res.stderr
    assert key in json.loads(res.stdout)["stale_refs"]
    assert f"[{key}]" not in (root / MEM / "api" / "MEMORY.md").read_text()
    assert jmem(root, "check").returncode == 0


def test_a_deleted_file_is_marked_when_stale_refs_flag(tmp_path: Path) -> None:
    root = repo(tmp_path)
    key = write(root, "Charging multiplies by the limit of 3", "src/pay.py#L6-L7")
    distill(root)
    config = root / ".claude" / "journal-mem.toml"
    text = config.read_text()
    assert '# stale_refs = "drop"' in text
    config.write_text(text.replace('# stale_refs = "drop"', 'stale_refs = "flag"'))
    git(root, "rm", "-q", "src/pay.py")
    sha = commit(root, "drop the payment module")
    line = line_of(distill(root), key)
    assert line.startswith(f"- cited file deleted: `src/pay.py#L6-L7` in {sha[:7]}"), line


def test_a_merge_that_brings_the_change_names_the_commit_that_made_it(tmp_path: Path) -> None:
    root = repo(tmp_path)
    key = write(root, "Charging multiplies by the limit of 3", "src/pay.py#L6-L7")
    distill(root)
    git(root, "checkout", "-q", "-b", "side")
    side = commit(root, "limit of 7 on the side",
                  {"src/pay.py": PAY.replace("limit = 3", "limit = 7")})
    git(root, "checkout", "-q", "main")
    commit(root, "unrelated", {"docs.txt": "hello\n"})
    git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    assert f"in {side[:7]} (limit of 7 on the side)" in line_of(distill(root), key)


def test_a_citation_from_a_rebased_branch_follows_its_code(tmp_path: Path) -> None:
    root = repo(tmp_path)
    tree = add_worktree(root, tmp_path / "wt", "feature")
    commit(tree, "fees", {"src/fees.py": "def fee(x):\n    return x // 100\n"})
    key = write(tree, "Fees are one percent, rounded down", "src/fees.py#fee")
    commit(root, "main moves on", {"docs.txt": "hello\n"})
    distill(root)  # the branch is not merged: its code is not judged yet
    assert line_of((root / MEM / "api" / "MEMORY.md").read_text(), key).startswith("- [Fees")
    git(tree, "rebase", "-q", "main")
    git(root, "merge", "-q", "--ff-only", "feature")
    assert line_of(distill(root), key).startswith("- [Fees")
    sha = commit(root, "fees round up",
                 {"src/fees.py": "def fee(x):\n    return -(-x // 100)\n"})
    assert f"`src/fees.py#fee` in {sha[:7]}" in line_of(distill(root), key)


def test_a_citation_of_uncommitted_code_waits_for_it(tmp_path: Path) -> None:
    root = repo(tmp_path)
    tree = add_worktree(root, tmp_path / "wt", "feature")
    (tree / "src" / "pay.py").write_text(PAY.replace("limit = 3", "limit = 4"))
    key = write(tree, "Charging multiplies by the limit of 4", "src/pay.py#L6-L7")
    cited = next((root / MEM / "api" / "journal").glob("*.md")).read_text()
    assert " dirty src/pay.py#L6-L7" in cited
    assert line_of(distill(root), key).startswith("- [Charging")  # not in main yet
    commit(tree, "limit of 4")
    git(root, "merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    assert line_of(distill(root), key).startswith("- [Charging")
    sha = commit(root, "limit of 6", {"src/pay.py": PAY.replace("limit = 3", "limit = 6")})
    assert f"in {sha[:7]} (limit of 6)" in line_of(distill(root), key)


def test_a_restatement_with_a_fresh_citation_clears_the_mark(tmp_path: Path) -> None:
    root = repo(tmp_path)
    key = write(root, "Charging multiplies by the limit of 3", "src/pay.py#L6-L7")
    distill(root)
    commit(root, "limit of 5", {"src/pay.py": PAY.replace("limit = 3", "limit = 5")})
    assert "cited code changed" in line_of(distill(root), key)
    write(root, "Charging multiplies by the limit of 5", "src/pay.py#L6-L7", key=key)
    assert line_of(distill(root), key).startswith("- [Charging multiplies by the limit of 5")


def test_a_hand_written_citation_is_judged_from_the_commit_that_added_it(
        tmp_path: Path) -> None:
    root = repo(tmp_path)
    folder = root / MEM / "api" / "journal"
    (folder / "2026-12-01-limit-by-hand.md").write_text(
        "---\nschema: 1\nagent: api\ncreated: 2026-12-01T10:00:00Z\ntopic: pay\n"
        "key: limit-by-hand\nrefs: [\"src/pay.py#L6\"]\n---\n\n# The limit is 3 by hand\n")
    commit(root, "a lesson by hand")
    distill(root)
    sha = commit(root, "limit of 8", {"src/pay.py": PAY.replace("limit = 3", "limit = 8")})
    assert f"`src/pay.py#L6` in {sha[:7]}" in line_of(distill(root), "limit-by-hand")


def test_a_hand_edit_of_a_marked_line_keeps_its_citation(tmp_path: Path) -> None:
    root = repo(tmp_path)
    key = write(root, "Charging multiplies by the limt of 3", "src/pay.py#L6-L7")
    distill(root)
    sha = commit(root, "limit of 5", {"src/pay.py": PAY.replace("limit = 3", "limit = 5")})
    memory_md = root / MEM / "api" / "MEMORY.md"
    distill(root)
    memory_md.write_text(memory_md.read_text().replace("limt", "limit"))
    res = jmem(root, "distill")
    assert res.returncode == 0, res.stderr
    line = line_of(memory_md.read_text(), key)
    assert f"in {sha[:7]}" in line and "limit of 3" in line, line
    assert jmem(root, "check").returncode == 0


def test_bad_citations_are_refused_with_the_reason(tmp_path: Path) -> None:
    root = repo(tmp_path)
    assert "src/pay.py has 14 lines" in write(root, "t1", "src/pay.py#L90-L91", ok=False)
    assert "no definition of nothere" in write(root, "t2", "src/pay.py#nothere", ok=False)
    assert "no file src/gone.py" in write(root, "t3", "src/gone.py#L1", ok=False)
    assert "line range" in write(root, "t4", "src/pay.py#L9-L2", ok=False)
    assert not list((root / MEM / "api" / "journal").glob("*.md"))
