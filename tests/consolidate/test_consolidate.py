"""`jmem consolidate`: the plan, and a scripted curator that merges exactly its clusters,
on a real repository holding part of the labelled paraphrase set."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import base_env, git, jmem

from fixtures import paraphrase_eval as ev
from fixtures import paraphrases
from journal_mem.journal.reader import read_journal
from journal_mem.repo import open_context

CURATOR = Path(__file__).with_name("curator.py")
CLUSTERS = 8  # the first eight clusters, their distractors and five singletons
SUBSET = SimpleNamespace(
    CLUSTERS=paraphrases.CLUSTERS[:CLUSTERS],
    DISTRACTORS=[d for d in paraphrases.DISTRACTORS if d[0] < CLUSTERS],
    SINGLETONS=paraphrases.SINGLETONS[:5],
)


def curator(*args: str) -> str:
    return shlex.join([sys.executable, str(CURATOR), *args])


@pytest.fixture
def team(tmp_path: Path) -> Path:
    """The subset's lessons, each also held by `lead`, distilled and committed."""
    repo = ev.build(tmp_path / "team", SUBSET, applies_to=("lead",))
    proc = jmem(repo, "distill")
    assert proc.returncode == 0, proc.stderr
    return repo


FACT_LINE = re.compile(r"^- (?!possibly outdated: ).*\[[a-z0-9-]+\]$")


def memory_lines(repo: Path) -> dict[str, int]:
    """Fact lines per agent's MEMORY.md (the notes on possible corrections aside)."""
    root = repo / ".claude" / "agent-memory"
    return {p.parent.name: sum(bool(FACT_LINE.match(line)) for line in p.read_text().splitlines())
            for p in root.glob("*/MEMORY.md")}


def plan(repo: Path, *args: str) -> list[dict[str, object]]:
    proc = jmem(repo, "consolidate", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    items: list[dict[str, object]] = json.loads(proc.stdout)
    return items


def test_the_plan_lists_the_clusters_with_titles_holders_and_writers(team: Path) -> None:
    items = plan(team)
    dups = [i for i in items if i["kind"] == "duplicates"]
    score = ev.score(SUBSET, ev.found_in_plan(items))  # type: ignore[arg-type]
    assert score.whole >= CLUSTERS - 1, score.line("subset")
    item = dups[0]
    assert set(item) >= {"id", "kind", "keys", "titles", "holders", "writers", "why", "facts"}
    assert "lead" in item["holders"]  # type: ignore[operator]
    assert len(item["writers"]) == len(item["keys"])  # type: ignore[arg-type]
    assert plan(team) == items  # deterministic
    text = jmem(team, "consolidate")
    assert text.returncode == 0 and f"{item['id']}: " in text.stdout
    # --agent: only items with a fact that agent holds
    for it in plan(team, "--agent", "billing"):
        assert any("billing" in f["holders"] for f in it["facts"])  # type: ignore[attr-defined,index]


def test_the_plan_is_the_same_with_its_duplicates_found_in_a_child_or_here(
        team: Path) -> None:
    """The plan finds its duplicates in a forked child while it renders (`forked.in_child`),
    where there is a CPU for one: on one CPU (`taskset -c 0`: no child) it is the same."""
    if not shutil.which("taskset"):
        pytest.skip("taskset (util-linux) is not installed")
    forked = plan(team)
    alone = subprocess.run(["taskset", "-c", "0", sys.executable, "-m", "journal_mem",
                            "consolidate", "--json"], cwd=team, env=base_env(),
                           capture_output=True, text=True, check=True)
    assert json.loads(alone.stdout) == forked
    assert any(item["kind"] == "duplicates" for item in forked)


def test_a_scripted_curator_merges_every_cluster_and_memory_shrinks(team: Path) -> None:
    items = plan(team)
    dups = [i for i in items if i["kind"] == "duplicates"]
    assert len(dups) >= CLUSTERS - 1
    before = memory_lines(team)
    ctx = open_context(str(team))
    folded = ctx.fold(read_journal(ctx.layout, ctx.policy).entries, dt_today())
    holders = {k: set(folded.facts[k].holders) for i in dups for k in i["keys"]}  # type: ignore[attr-defined]

    proc = jmem(team, "consolidate", "--propose", curator())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("wrote ") == len(dups)
    assert jmem(team, "distill").returncode == 0

    ctx = open_context(str(team))
    journal = read_journal(ctx.layout, ctx.policy)
    folded = ctx.fold(journal.entries, dt_today())
    by_key = {e.key: (p, e) for p, e in journal.entries}
    for item in dups:
        keys = item["keys"]
        assert isinstance(keys, list)
        merged = {folded.removed[k].split()[2] for k in keys}  # "superseded by KEY (path)"
        assert len(merged) == 1, [folded.removed[k] for k in keys]
        new = merged.pop()
        fact = folded.facts[new]
        path, entry = by_key[new]
        assert path.startswith("curator/journal/") and set(keys) <= set(entry.supersedes)
        assert entry.source and item["id"] in entry.source and curator() in entry.source
        assert all(set(holders[k]) <= set(fact.holders) for k in keys)  # every holder keeps it
    after = memory_lines(team)
    duplicates = sum(len(i["keys"]) - 1 for i in dups)  # type: ignore[arg-type]
    assert before["lead"] - after["lead"] == duplicates
    for agent in before:
        held = [sum(agent in holders[k] for k in i["keys"]) for i in dups]  # type: ignore[attr-defined]
        assert before[agent] - after[agent] == sum(n - 1 for n in held if n), agent
    assert git(team, "status", "--porcelain").stdout == ""  # the distill committed it all
    check = jmem(team, "check")
    assert check.returncode == 0, check.stdout + check.stderr
    log = jmem(team, "log", str(dups[0]["keys"][0]))  # type: ignore[index]
    assert log.returncode == 0 and "superseded by" in log.stdout and "curator" in log.stdout
    assert not [i for i in plan(team) if i["kind"] == "duplicates"
                and set(i["keys"]) & set(holders)]  # type: ignore[arg-type]


def dt_today():  # type: ignore[no-untyped-def]
    from journal_mem.journal.fold import today

    return today()


def test_dry_run_writes_nothing_and_shows_the_entries(team: Path) -> None:
    proc = jmem(team, "consolidate", "--propose", curator(), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "would write" in proc.stdout and "agent: curator" in proc.stdout
    assert not (team / ".claude" / "agent-memory" / "curator").exists()
    assert git(team, "status", "--porcelain").stdout == ""


def test_bad_proposals_are_refused_with_why_and_the_others_go_on(team: Path) -> None:
    dups = [i for i in plan(team) if i["kind"] == "duplicates"]
    proc = jmem(team, "consolidate", "--propose", curator("--bad"))
    assert proc.returncode == 1
    assert "not in item" in proc.stderr and "is not an item of the plan" in proc.stderr
    assert "applies_to: not a field of a proposal" in proc.stderr
    written = list((team / ".claude" / "agent-memory" / "curator" / "journal").glob("*.md"))
    assert len(written) == len(dups)


@pytest.mark.parametrize(("answer", "problem"), [
    ('[{"item": "ITEM", "title": "Secret", "topic": "t", "supersedes": ["KEY"], '
     '"body": "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"}]', "secret"),
    ('[{"item": "ITEM", "title": "Nothing cited", "topic": "t"}]', "cite the keys"),
    ('[{"item": "ITEM", "title": "Bad type", "topic": "t", "supersedes": ["KEY"], '
     '"type": "gossip"}]', "type:"),
    ('[{"item": "ITEM", "title": "Takes a key", "topic": "t", "supersedes": ["KEY"], '
     '"key": "OTHER"}]', "already names another live fact"),
    ('[{"item": "ITEM", "title": "Show money amounts with two decimals in the invoice PDF", '
     '"topic": "t", "supersedes": ["KEY"]}]', "is the title of another live fact"),
])
def test_each_proposal_is_judged_like_write(team: Path, tmp_path: Path, answer: str,
                                            problem: str) -> None:
    items = [i for i in plan(team) if i["kind"] == "duplicates"]
    keys = items[0]["keys"]
    other = items[1]["keys"][0]  # type: ignore[index]
    text = answer.replace("ITEM", str(items[0]["id"])).replace("KEY", str(keys[0]))  # type: ignore[index]
    (tmp_path / "answer.json").write_text(text.replace("OTHER", str(other)))
    proc = jmem(team, "consolidate", "--propose", f"cat {tmp_path / 'answer.json'}")
    assert proc.returncode == 1 and problem in proc.stderr, proc.stderr
    assert not (team / ".claude" / "agent-memory" / "curator").exists()


def test_a_failing_or_silent_proposer_writes_nothing(team: Path) -> None:
    failed = jmem(team, "consolidate", "--propose", "echo boom >&2; exit 3")
    assert failed.returncode == 1 and "exited 3" in failed.stderr and "boom" in failed.stderr
    prose = jmem(team, "consolidate", "--propose", "echo I merged everything")
    assert prose.returncode == 1 and "did not answer with a JSON list" in prose.stderr
    assert not (team / ".claude" / "agent-memory" / "curator").exists()


def test_the_config_names_the_proposer(team: Path) -> None:
    unset = jmem(team, "consolidate", "--propose")
    assert unset.returncode == 2 and "[consolidate] command is unset" in unset.stderr
    config = team / ".claude" / "journal-mem.toml"
    text = config.read_text()
    assert '# command = ""' in text  # init shows the setting, commented out
    config.write_text(text.replace('# command = ""', f"command = {json.dumps(curator())}"))
    proc = jmem(team, "consolidate", "--propose", "--dry-run")
    assert proc.returncode == 0 and "would write" in proc.stdout, proc.stderr
