"""The plan's other kinds (conflict, stale, over-budget), a retraction that settles a stale
fact, and holders that `applies_to: all` gave, on real repositories."""

from __future__ import annotations

import datetime as dt
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from helpers import base_env, git, jmem

from journal_mem.journal.entry import Entry, render

MEM = ".claude/agent-memory"
NOW = dt.datetime.now(dt.UTC).replace(microsecond=0)


def lesson(repo: Path, agent: str, key: str, title: str, days_ago: float = 1,
           **kw: Any) -> None:
    entry = Entry(agent=agent, key=key, title=title, topic=kw.pop("topic", "general"),
                  created=NOW - dt.timedelta(days=days_ago), body=kw.pop("body", ""),
                  applies_to=kw.pop("applies_to", (agent,)), **kw)
    folder = repo / MEM / agent / "journal"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{entry.created.date()}-{key}.md").write_text(render(entry))


def plan(repo: Path, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    proc = jmem(repo, "consolidate", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    items: list[dict[str, Any]] = json.loads(proc.stdout)
    return items


def answer(tmp_path: Path, proposals: list[dict[str, Any]]) -> str:
    path = tmp_path / "answer.json"
    path.write_text(json.dumps(proposals))
    return shlex.join(["cat", str(path)])


def test_a_probable_correction_is_a_conflict(repo: Path) -> None:
    lesson(repo, "api", "friday-old", "Deploys are allowed on Fridays after 16:00",
           days_ago=3, body="The on-call rota covers the weekend.")
    lesson(repo, "web", "friday-new", "Never deploy on a Friday: nobody is around on the "
           "weekend", days_ago=1, body="Rollbacks need people.")
    items = plan(repo)
    assert [(i["kind"], i["keys"]) for i in items] == [("conflict", ["friday-old", "friday-new"])]
    assert "[friday-new] is newer and probably corrects [friday-old]" in items[0]["why"]


def test_a_correction_worded_like_a_paraphrase_is_flagged_in_its_cluster(repo: Path) -> None:
    lesson(repo, "api", "filter-old", "Filter by value skips documents without the field",
           days_ago=3, body="An equality filter excludes documents lacking the field.")
    lesson(repo, "web", "filter-new", "Filter by value now also returns documents without "
           "the field", days_ago=1, body="An equality filter matches documents lacking it too.")
    items = plan(repo)
    assert [(i["kind"], i["keys"]) for i in items] == [("duplicates", ["filter-new",
                                                                       "filter-old"])]
    assert "may correct an older ([filter-old] / [filter-new])" in items[0]["why"]


def test_stale_facts_and_a_retraction_that_settles_one(repo: Path, tmp_path: Path) -> None:
    lesson(repo, "api", "gone-ref", "The parser lives in src/parser.py", refs=("src/parser.py",))
    lesson(repo, "api", "old-run", "Nightly load test run", days_ago=60, type="episodic",
           confidence=1.0)
    env = base_env(JMEM_DISTILL_STALE_REFS="flag")
    stale = {i["keys"][0]: i for i in plan(repo, env) if i["kind"] == "stale"}
    assert "refs gone: src/parser.py" in stale["gone-ref"]["why"]
    old = next(k for k in stale if k != "gone-ref")  # an episodic key hashes its date
    assert "episodic record 60 days old" in stale[old]["why"]
    retract = [{"item": stale["gone-ref"]["id"], "title": "The parser moved away",
                "topic": "general", "retracts": ["gone-ref"]}]
    proc = jmem(repo, "consolidate", "--propose", answer(tmp_path, retract), env=env)
    assert proc.returncode == 0, proc.stderr
    assert jmem(repo, "distill", env=env).returncode == 0
    assert "[gone-ref]" not in (repo / MEM / "api" / "MEMORY.md").read_text()
    log = jmem(repo, "log", "gone-ref", env=env)
    assert "retracted" in log.stdout and "curator" in log.stdout


def test_a_topic_that_spills_is_over_budget(repo: Path) -> None:
    for n in range(12):
        lesson(repo, "web", f"css-{n}", f"CSS rule number {n} about {'x' * n}", topic="css",
               body=f"Detail {n}.")
    env = base_env(JMEM_BUDGET_TOPIC_LINES="10")
    items = [i for i in plan(repo, env) if i["kind"] == "over-budget"]
    assert [(i["agent"], i["topic"]) for i in items] == [("web", "css")]
    assert len(items[0]["keys"]) == 12 and "fills" in items[0]["why"]


def test_a_merge_of_facts_for_all_stays_for_all(repo: Path, tmp_path: Path) -> None:
    lesson(repo, "api", "cents-a", "Store money as integer cents, never floats",
           applies_to=("all",), days_ago=2)
    lesson(repo, "web", "cents-b", "Money amounts are stored as integer cents, not floats",
           days_ago=1)
    dups = [i for i in plan(repo) if i["kind"] == "duplicates"]
    assert [i["keys"] for i in dups] == [["cents-a", "cents-b"]]
    # the plan says why, so that a person or a model proposer judges it at a glance
    assert "they share: cents, floats, integer, money" in dups[0]["why"], dups[0]["why"]
    merge = [{"item": dups[0]["id"], "title": "Money is integer cents", "topic": "money",
              "supersedes": ["cents-a", "cents-b"]}]
    proc = jmem(repo, "consolidate", "--propose", answer(tmp_path, merge), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["written"][0]["applies_to"] == ["all"]
    assert jmem(repo, "distill").returncode == 0
    for agent in ("api", "web"):
        text = (repo / MEM / agent / "MEMORY.md").read_text()
        assert "Money is integer cents" in text and "[cents-a]" not in text


def test_an_empty_plan_runs_no_proposer(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    proc = jmem(repo, "consolidate", "--propose", f"touch {marker}; echo []", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout) == {"written": [], "refused": []}
    assert not marker.exists()
    assert "nothing to consolidate" in jmem(repo, "consolidate").stdout
    git(repo, "status", "--porcelain")


def test_the_plugin_ships_the_curator_and_its_command() -> None:
    import yaml

    from journal_mem.setup.plugin import folder

    root = Path(folder())
    agent = (root / "agents" / "memory-curator.md").read_text()
    front = yaml.safe_load(agent.split("---")[1])
    assert front["name"] == "memory-curator" and "jmem consolidate" in front["description"]
    command = (root / "commands" / "consolidate.md").read_text()
    assert "memory-curator" in command and "jmem consolidate --propose" in command
    assert sys.executable  # the command runs jmem from PATH like every plugin file


def test_two_proposals_may_not_settle_one_key_and_assignments_stay_out_of_source(
        repo: Path, tmp_path: Path) -> None:
    lesson(repo, "api", "cents-a", "Store money as integer cents, never floats", days_ago=2)
    lesson(repo, "web", "cents-b", "Money amounts are stored as integer cents, not floats")
    item = next(i for i in plan(repo) if i["kind"] == "duplicates")
    twice = [{"item": item["id"], "title": f"Money is integer cents ({n})", "topic": "money",
              "supersedes": ["cents-a", "cents-b"]} for n in (1, 2)]
    command = "CURATOR_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB " + answer(tmp_path, twice)
    proc = jmem(repo, "consolidate", "--propose", command, "--json")
    assert proc.returncode == 1
    assert "cites cents-a, cents-b, which proposal 1 already settles" in proc.stderr
    written = json.loads(proc.stdout)["written"]
    assert len(written) == 1 and "ghp_" not in written[0]["source"]
    assert written[0]["source"].startswith("jmem consolidate --propose 'cat ")
