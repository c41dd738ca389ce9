"""Memory that checks the code it cites (docs/DESIGN.md, "Memory that checks the code it cites"):
a fact citing lines or a symbol is
marked, on its own MEMORY.md line and in the wake pack, when a later commit changes that
code, naming the path and the commit; moves and renames never mark or drop it.

Every repository here is real git with real history; lessons are written with the real
`jmem write --ref PATH#ANCHOR`, from the main checkout or a linked worktree, and folded by
the real `jmem distill`; `jmem check` must agree with every distill."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from helpers import add_worktree, base_env, git, jmem

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


def test_memory_taken_in_cites_the_files_its_text_names(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "CLAUDE.md").write_text(
        "# Notes\n\n- Charges go through `src/pay.py`; never call `charge()` twice.\n"
        "- The settings live in `settings.toml` (not tracked here) and `make test` runs "
        "the suite.\n- `pay.py` holds the refund rule too.\n")
    commit(root, "notes")
    res = jmem(root, "import", "claude-md", "CLAUDE.md", "--agent", "api")
    assert res.returncode == 0, res.stderr
    texts = [p.read_text() for p in (root / MEM / "api" / "journal").glob("*.md")]
    cited = [t for t in texts if "refs from its text" in t]
    assert len(cited) == 2, texts  # `src/pay.py` itself, and `pay.py` as the one file so named
    assert all('refs: ["src/pay.py"]' in t and " - clean src/pay.py" in t for t in cited)
    assert not any("settings.toml" in t.split("---")[1] for t in texts)
    distill(root)
    git(root, "mv", "src/pay.py", "src/billing.py")
    commit(root, "rename")
    memory = distill(root)
    assert memory.count("Charges go through") == 1, memory
    git(root, "rm", "-q", "src/billing.py")
    commit(root, "gone")
    assert "Charges go through" not in distill(root)


def test_a_worktree_memory_citing_its_branch_files_waits_for_the_merge(tmp_path: Path) -> None:
    root = repo(tmp_path)
    tree = add_worktree(root, tmp_path / "wt", "feature")
    commit(tree, "fees", {"src/fees.py": "def fee(x):\n    return x // 100\n"})
    key = write(tree, "Fees live in their own module", "src/fees.py")
    assert line_of(distill(root), key).startswith("- [Fees")  # kept, not "refs gone"
    git(root, "merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    assert line_of(distill(root), key).startswith("- [Fees")
    git(root, "rm", "-q", "src/fees.py")
    commit(root, "no more fees")
    assert f"[{key}]" not in distill(root)


def test_check_refs_log_consolidate_and_report_name_the_commit(tmp_path: Path) -> None:
    root = repo(tmp_path)
    key = write(root, "Charging multiplies by the limit of 3", "src/pay.py#L6-L7")
    distill(root)
    sha = commit(root, "Raise the charge limit to 5",
                 {"src/pay.py": PAY.replace("limit = 3", "limit = 5")})
    refs = jmem(root, "check", "--refs")
    assert refs.returncode == 0, refs.stderr
    assert (f"{key}: cited code changed: `src/pay.py#L6-L7` in {sha[:7]} "
            "(Raise the charge limit to 5)") in refs.stdout
    data = json.loads(jmem(root, "check", "--refs", "--json").stdout)
    assert data["refs"] == [{"key": key, "ref": "src/pay.py#L6-L7", "state": "changed",
                             "commit": sha, "subject": "Raise the charge limit to 5"}]
    distill(root)
    log = jmem(root, "log", key)
    assert "the cited code changed" in log.stdout
    assert f"{sha[:10]}  cited text gone: Raise the charge limit to 5" in log.stdout
    plan = jmem(root, "consolidate")
    assert f"cited code changed: `src/pay.py#L6-L7` in {sha[:7]}" in plan.stdout, plan.stdout
    out = tmp_path / "report"
    assert jmem(root, "report", "--out", str(out)).returncode == 0
    page = next(out.glob("*.html")).read_text()
    assert "Cited code changed" in page and sha[:7] in page


def words(k: int) -> str:
    """Three made-up words no other `k` shares (no two facts read as one claim)."""
    letters = hashlib.sha1(str(k).encode()).hexdigest().translate(
        str.maketrans("0123456789abcdef", "bcdfghjklmnpqrst"))
    return " ".join(letters[i:i + 8] for i in (0, 8, 16))


def test_a_hundred_citations_across_a_thousand_commits(tmp_path: Path) -> None:
    """Ten files, a hundred facts citing two lines each (half recorded as `jmem write` does,
    half hand-written), then a thousand commits inserting lines above them; ten of those
    commits edit one fact's lines each. One distill marks exactly those ten, each with the
    commit that edited it."""
    from journal_mem.journal.anchor import digest

    root = repo(tmp_path)
    files = {f"src/m{i}.py": [f"value_{i}_{n} = {n}" for n in range(60)] for i in range(10)}
    for path, lines in files.items():
        (root / path).write_text("\n".join(lines) + "\n")
    base = commit(root, "ten modules")
    folder = root / MEM / "api" / "journal"
    for k in range(100):
        path, first = f"src/m{k % 10}.py", (k // 10) * 5 + 1
        ref = f"{path}#L{first}-L{first + 1}"
        cited = files[path][first - 1:first + 1]
        record = (f'cited: ["{base} {digest(cited)} clean {ref}"]\n' if k % 2 else "")
        (folder / f"2026-12-01-fact-{k:03d}.md").write_text(
            f"---\nschema: 1\nagent: api\ncreated: 2026-12-01T10:00:00Z\ntopic: pay\n"
            f"key: fact-{k:03d}\nrefs: [\"{ref}\"]\n{record}---\n\n# {words(k)}\n")
    commit(root, "a hundred lessons")
    distill(root)
    stream, marks = [], {}
    head = git(root, "rev-parse", "HEAD").stdout.strip()
    for j in range(1000):
        path = f"src/m{j % 10}.py"
        edited = j % 100 == 50  # commits 50, 150, … edit fact j//100 (file j%10 = 0)
        if edited:
            k = (j // 100) * 10  # fact k: file 0, lines (k//10)*5+1…
            at = len(files[path]) - 60 + (k // 10) * 5
            files[path][at] = files[path][at] + "  # changed"
            marks[f"fact-{k:03d}"] = j
        else:
            files[path].insert(0, f"# line {j}")
        data = ("\n".join(files[path]) + "\n").encode()
        stream.append(f"commit refs/heads/main\nmark :{j + 1}\n"
                      f"committer t <t@example.com> {1764000000 + j} +0000\n"
                      f"data {len(f'commit {j}')}\ncommit {j}\n"
                      + (f"from {head}\n" if j == 0 else "")
                      + f"M 100644 inline {path}\ndata {len(data)}\n")
        stream.append(data.decode() + "\n")
    git_input = "".join(stream).encode()
    done = subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=git_input,
                          env=base_env(), capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    git(root, "reset", "-q", "--hard", "main")
    memory = distill(root)
    by_subject = dict(reversed(line.split(" ", 1)) for line in
                      git(root, "log", "--format=%H %s", "-n", "1000").stdout.splitlines())
    data = json.loads(jmem(root, "check", "--refs", "--json").stdout)
    found = {r["key"]: r for r in data["refs"]}
    assert set(found) == set(marks), sorted(found)
    for key, j in marks.items():
        assert found[key]["commit"] == by_subject[f"commit {j}"], (key, found[key])
        assert found[key]["state"] == "changed"
    marked = [line for line in memory.splitlines() if line.startswith("- cited code changed")]
    assert len(marked) == len(marks), memory
    for line in marked:
        key = line.rsplit("[", 1)[1].rstrip("]")
        assert f"in {by_subject[f'commit {marks[key]}'][:7]} (commit {marks[key]})" in line


def test_walks_from_one_commit_ask_git_about_it_once(tmp_path: Path) -> None:
    """Lessons written together cite one commit: each edited citation walks its own file's
    history from there, but whether that commit exists and is an ancestor of HEAD is
    asked of git once per distill (five such walks ran ten more git processes)."""
    root = repo(tmp_path)
    files = {f"src/m{n}.py": PAY for n in range(3)}
    since = commit(root, "three modules", files)
    titles = ["Invoices round to whole cents", "Shipping is billed per kilogram",
              "Taxes apply after the discount"]
    keys = [write(root, title, f"src/m{n}.py#L6-L7") for n, title in enumerate(titles)]
    distill(root)
    sha = commit(root, "Raise every limit to 5",
                 {path: PAY.replace("limit = 3", "limit = 5") for path in files})
    trace = tmp_path / "trace.txt"
    res = jmem(root, "distill", env={**base_env(), "GIT_TRACE": str(trace)})
    assert res.returncode == 0, res.stderr
    memory = (root / MEM / "api" / "MEMORY.md").read_text()
    for n, key in enumerate(keys):
        assert line_of(memory, key).startswith(
            f"- cited code changed: `src/m{n}.py#L6-L7` in {sha[:7]}"), memory
    ran = trace.read_text()
    assert ran.count(f"merge-base --is-ancestor {since}") == 1, ran
    assert f"cat-file -e '{since}^{{commit}}'" not in ran  # an ancestor exists
    # one range with no merge: one log of the three files, beside its merge check
    assert ran.count("git log --reverse --topo-order") == 1, ran
    assert ran.count(f"git rev-list --min-parents=2 -n 1 {since}..") == 1, ran


def test_walks_of_one_range_find_what_each_finds_alone(tmp_path: Path) -> None:
    """Walks over one range are one `git log --name-only` of all their paths when the
    range has no merge: each path's history is then what its own log lists. Over a
    merge, git picks the parent to follow by the paths it is given (a side branch that
    changed A and back, and changed B: A's own log follows main and lists nothing, a log
    of A and B follows the side), so each walk is logged alone."""
    from journal_mem.journal import citations

    root = repo(tmp_path)
    names = ["src/a.py", "src/b.py", "src/c.py", "src/a[1].py", "src/a1.py", "lib/x.py"]
    base = commit(root, "modules", {n: f"{n} = 0\n" for n in names})
    for n, name in enumerate(names * 2):
        commit(root, f"edit {n}", {name: f"{name} = {n + 1}\n"})
    git(root, "mv", "src/c.py", "src/d.py")
    commit(root, "c is d now")
    commit(root, "lib grows", {"lib/y.py": "y = 1\n", "src/d.py": "d = 2\n"})
    linear = commit(root, "b again", {"src/b.py": "b = 9\n"})
    asked = [([f"{base}..{linear}"], paths) for paths in (
        ["src/a.py"], ["src/b.py"], ["src/c.py", "src/d.py"], ["lib"], ["src/a[1].py"],
        ["src/a1.py"])] + [([linear, "-n", "3"], ["src/b.py"])]
    walk = citations._Git(str(root), "HEAD")
    alone = [walk.logs([one])[0] for one in asked]
    assert [len(found) for found in alone] == [2, 3, 4, 3, 4, 2, 3]  # a[1] globs a1
    assert walk.logs(asked) == alone

    git(root, "checkout", "-q", "-b", "side")
    commit(root, "a for a while", {"src/a.py": "a = -1\n"})
    commit(root, "a back", {"src/a.py": "src/a.py = 7\n"})  # as edit 6 left it
    commit(root, "b on the side", {"src/b.py": "b = 10\n"})
    git(root, "checkout", "-q", "main")
    commit(root, "elsewhere", {"docs.txt": "x\n"})
    git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    asked = [([f"{linear}..HEAD"], ["src/a.py"]), ([f"{linear}..HEAD"], ["src/b.py"])]
    walk = citations._Git(str(root), "HEAD")
    alone = [walk.logs([one])[0] for one in asked]
    assert alone[0] == []  # a.py's own log follows main at the merge
    assert [subject for _, subject in alone[1]] == ["b on the side"]
    assert walk.logs(asked) == alone


def test_walks_run_side_by_side_and_read_every_history_in_one_batch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walks of one distill list their histories with git logs run side by side, and
    read the files those name in one `git cat-file` (three walks read them in three):
    what each walk finds is what it finds alone, whatever the batches (`WALK_NAMES`)."""
    from journal_mem.gitops import gitcore
    from journal_mem.journal import citations
    from journal_mem.journal.reader import read_journal
    from journal_mem.repo import open_context

    root = repo(tmp_path)
    files = {f"src/m{n}.py": PAY for n in range(3)}
    commit(root, "three modules", files)
    titles = ["Invoices round to whole cents", "Shipping is billed per kilogram",
              "Taxes apply after the discount"]
    keys = [write(root, title, f"src/m{n}.py#L6-L7") for n, title in enumerate(titles)]
    distill(root)
    first = commit(root, "Raise the first limit", {"src/m0.py": PAY.replace("= 3", "= 4")})
    commit(root, "Move the helper up", {"src/m1.py": MOVED})
    last = commit(root, "Raise the other limits",
                  {"src/m1.py": MOVED.replace("= 3", "= 5"), "src/m2.py": PAY.replace(
                      "= 3", "= 5")})
    ctx = open_context(str(root))
    facts = [(entry.key, entry.cited) for _, entry in read_journal(ctx.layout, ctx.policy).entries
             if entry.cited]
    assert sorted(key for key, _ in facts) == sorted(keys)
    reads: list[int] = []
    real = citations.read_objects

    def counted(at: str, names: list[str]) -> list[object]:
        reads.append(len(names))
        return real(at, names)  # type: ignore[return-value]

    monkeypatch.setattr(citations, "read_objects", counted)
    together = citations.follow(str(root), "HEAD", facts)
    assert len(reads) == 2  # the cited files at HEAD; then every history at once
    assert {key: [c.commit for c in changes] for key, changes in together.items()} == {
        keys[0]: [first], keys[1]: [last], keys[2]: [last]}
    monkeypatch.setattr(citations, "WALK_NAMES", 1)
    run_all = gitcore.run_all
    monkeypatch.setattr(gitcore, "run_all",
                        lambda *args, **kw: run_all(*args, **{**kw, "at_once": 1}))
    reads.clear()
    assert citations.follow(str(root), "HEAD", facts) == together
    assert len(reads) == 4  # one batch a walk
