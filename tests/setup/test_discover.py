"""Memory kept where journal-mem does not manage it is named, with the command that
imports it, by `init` and `status`; once imported, it is not named again."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import git, jmem

PLACES = {
    ".claude/memory/MEMORY.md": "# Auto memory\n\n- The build needs make 4.3\n",
    ".claude/projects/app/memory/notes.md": "- Staging resets at noon\n",
    "kb/.claude/agent-memory/ops/MEMORY.md": "- Page the on-call for disk alerts\n",
    "CLAUDE.md": "# Rules\n\n- Never push to main\n",
    "GEMINI.md": "- Prefer small commits\n",
    ".cursor/rules/makefiles.mdc": "Use tabs in Makefiles.\n",
    "memory-bank/activeContext.md": "# Active context\n\nThe queue migration.\n",
    "exports/mem0-backup.json": "[]\n",
    "QWEN.md": "- Run the linters before pushing\n",
    ".qwen/team-memory/release-tags.md": ("---\nname: release-tags\ndescription: Release "
                                          "tags are signed\ntype: project\n---\n\nSign "
                                          "every release tag with the team key.\n"),
}
QWEN_INDEX = {".qwen/team-memory/MEMORY.md": "- [Release tags are signed](release-tags.md)\n"}


def test_every_place_is_named_until_it_is_imported(repo: Path) -> None:
    for rel, text in (PLACES | QWEN_INDEX).items():  # Qwen Code rebuilds that index
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "memory everywhere")
    init = jmem(repo, "init", "--agent", "api", "--no-claude", "--no-git-hooks")
    said = " ".join(init.stderr.split())
    assert init.returncode == 0, said
    for rel in PLACES:
        assert rel in said, rel
    assert "CLAUDE.md, GEMINI.md, QWEN.md; import each with `jmem import claude-md PATH`" \
        in said
    assert "Qwen Code team memory: .qwen/team-memory/release-tags.md; import each with " \
        "`jmem import claude-md .qwen/team-memory/release-tags.md --agent AGENT`" in said
    assert "`jmem import mem0 exports/mem0-backup.json --agent AGENT`" in said
    assert "AGENTS.md" not in said.split("memory jmem does not manage")[-1]  # only our block
    status = jmem(repo, "status", "--json")
    found = {p for e in json.loads(status.stdout)["elsewhere"] for p in e["paths"]}
    assert found == set(PLACES)
    check = jmem(repo, "check")
    assert check.returncode == 0 and "note: memory jmem does not manage yet" in check.stderr
    assert jmem(repo, "import", "claude-md", "CLAUDE.md", "--agent", "api").returncode == 0
    status = jmem(repo, "status", "--json")
    found = {p for e in json.loads(status.stdout)["elsewhere"] for p in e["paths"]}
    assert found == set(PLACES) - {"CLAUDE.md"}
    team = jmem(repo, "import", "claude-md", ".qwen/team-memory/release-tags.md", "--agent",
                "api")
    assert team.returncode == 0, team.stderr
    entries = [p.read_text() for p in (repo / ".claude/agent-memory/api/journal").glob("*")]
    native = [e for e in entries if "Sign every release tag" in e]  # one lesson, adopted whole
    assert len(native) == 1 and "# Release tags are signed" in native[0]
    assert "key: release-tags" in native[0] and "topic: project" in native[0]
