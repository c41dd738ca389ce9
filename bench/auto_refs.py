"""How much of a team's real memory is checked against its code without a `--ref`.

For each repository given (a path to a clone or a bare mirror), a fresh clone is taken
in as a new user would: `jmem init`, then every import `jmem status --json` names
(Claude Code auto memory, CLAUDE.md, AGENTS.md, …), as `tests/importers` does. Each
journal entry that came in is counted, and so is each that cites a tracked file its text
names in backticks (`source` ends with "refs from its text"). The memory itself is the
team's and is not printed: only the counts.

    python bench/auto_refs.py REPO [REPO …] [--json]

A repository needs `.claude/memory/`, `.claude/agent-memory/`, CLAUDE.md or the like;
one with none is reported as such.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SAID = "refs from its text"


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "JMEM_"))}
    return subprocess.run(args, cwd=cwd, env=env, text=True, capture_output=True, check=False)


def jmem(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "journal_mem", *args], cwd)


def checkout(root: Path) -> None:
    """Check out every file whose blob the clone has (a stored mirror may lack its
    largest files)."""
    listing = run(["git", "ls-tree", "-r", "-z", "HEAD"], root).stdout.split("\0")
    rows = [(meta.split()[2], path) for meta, _, path in (r.partition("\t") for r in listing)
            if path and meta.split()[1] == "blob"]
    have = subprocess.run(["git", "cat-file", "--batch-check"], cwd=root, text=True,
                          input="\n".join(sha for sha, _ in rows) + "\n",
                          capture_output=True, check=False).stdout.splitlines()
    present = [path for (sha, path), line in zip(rows, have, strict=False)
               if not line.endswith("missing")]
    subprocess.run(["git", "checkout", "HEAD", "--pathspec-from-file=-", "--pathspec-file-nul"],
                   cwd=root, input="\0".join(f":(literal){p}" for p in present), text=True,
                   capture_output=True, check=False)


def measure(source: str, work: Path) -> dict[str, object]:
    name = Path(source.rstrip("/")).name
    if name == "repo":  # a mirror fetched as /…/<owner>+<name>/repo
        name = Path(source.rstrip("/")).parent.name.replace("+", "/")
    root = work / name.replace("/", "+")
    clone = run(["git", "clone", "-q", "--no-checkout", source, str(root)], work)
    if clone.returncode:
        return {"repo": name, "error": clone.stderr.strip()}
    checkout(root)
    run(["git", "config", "user.email", "bench@example.com"], root)
    run(["git", "config", "user.name", "bench"], root)
    init = jmem(root, "init", "--agent", "team", "--no-claude", "--no-git-hooks")
    link = root / ".claude" / "agent-memory"
    if init.returncode and link.is_symlink():  # as init's hint says: a real folder
        link.unlink()
        link.mkdir()
        init = jmem(root, "init", "--agent", "team", "--no-claude", "--no-git-hooks")
    if init.returncode:
        return {"repo": name, "error": init.stderr.strip()}
    status = json.loads(jmem(root, "status", "--json").stdout)
    files = 0
    for kind in status.get("elsewhere", []):
        for path in kind["paths"]:
            args = kind["command"].format(path=path).replace("AGENT", "team").split()[1:]
            jmem(root, *args)
            files += 1
    entries = cited = refs = 0
    for path in sorted((root / ".claude" / "agent-memory").glob("*/journal/*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        head = text.split("\n---\n", 1)[0]
        entries += 1
        if SAID in head:
            cited += 1
            line = next((x for x in head.splitlines() if x.startswith("refs: ")), "refs: []")
            refs += len(json.loads(line[6:]))
    return {"repo": name, "files": files, "entries": entries, "cited": cited, "refs": refs,
            "share": round(cited / entries, 3) if entries else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+")
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="jmem-auto-refs-") as tmp:
        rows = [measure(r, Path(tmp)) for r in opts.repos]
    if opts.json:
        print(json.dumps(rows, indent=1))
        return 0
    total_e = sum(int(r.get("entries") or 0) for r in rows)  # type: ignore[call-overload]
    total_c = sum(int(r.get("cited") or 0) for r in rows)  # type: ignore[call-overload]
    print("| repository | memory files | entries | cite a file | share |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        if "error" in r:
            print(f"| {r['repo']} | error: {r['error']} | | | |")
            continue
        share = f"{100 * r['share']:.0f}%" if r["share"] is not None else "—"  # type: ignore[operator]
        print(f"| {r['repo']} | {r['files']} | {r['entries']} | {r['cited']} | {share} |")
    if total_e:
        print(f"| all | | {total_e} | {total_c} | {100 * total_c / total_e:.0f}% |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
