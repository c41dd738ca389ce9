"""The curator under concurrency and as a child process, tried as an attacker would:

* a teammate's correction written while the proposer runs is never overwritten by the
  curator's merge of the old wording, and the merge never claims to have known it;
* a proposal of an older plan is refused once a fact it cites changed, even under the
  same key (item ids digest the entries they cover);
* a proposer that hangs, leaves a child holding its output, or answers without end
  cannot hang jmem: its process group is ended and the error says why.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers import base_env, jmem
from test_consolidate import SUBSET

from fixtures import paraphrase_eval as ev
from journal_mem.journal.order import newest_of
from journal_mem.journal.reader import read_journal
from journal_mem.repo import open_context

CORRECTION = "Corrected by a teammate while the curator ran"


@pytest.fixture
def team(tmp_path: Path) -> Path:
    repo = ev.build(tmp_path / "team", SUBSET, applies_to=("lead",))
    assert jmem(repo, "distill").returncode == 0
    return repo


def script(tmp_path: Path, body: str) -> str:
    """A proposer: a Python script reading the plan on stdin."""
    path = tmp_path / "proposer.py"
    path.write_text("import json, subprocess, sys\nplan = json.load(sys.stdin)\n"
                    + textwrap.dedent(body))
    return f"{sys.executable} {path}"


MERGE = """
item = next(i for i in plan if i["kind"] == "duplicates")
print(json.dumps([{"item": item["id"], "title": "Merged by the curator",
                   "body": "One fact for the cluster.", "topic": item["facts"][0]["topic"],
                   "supersedes": item["keys"]}]))
"""


def live(repo: Path) -> dict[str, str]:
    proc = jmem(repo, "export")
    return {f["key"]: f["title"] for f in json.loads(proc.stdout)["facts"]}


def test_a_correction_written_while_the_proposer_runs_is_kept(team: Path,
                                                              tmp_path: Path) -> None:
    """The proposer corrects the first fact of its item (a same-key rewrite, as a
    teammate would) before it answers with the merge of the old wording."""
    command = script(tmp_path, """
item = next(i for i in plan if i["kind"] == "duplicates")
first = item["facts"][0]
subprocess.run([sys.executable, "-m", "journal_mem", "write", "--agent", first["writer"],
                "--topic", first["topic"], "--key", first["key"], "--title",
                "CORRECTION", "--body", "The value changed."], check=True,
               stdout=subprocess.DEVNULL)
""".replace("CORRECTION", CORRECTION) + MERGE.split("\n", 2)[2])
    proc = jmem(team, "consolidate", "--propose", command)
    said = " ".join(proc.stderr.split())
    assert proc.returncode == 1, proc.stdout + said
    assert "changed since the plan" in said and "not written" in said
    assert jmem(team, "distill").returncode == 0
    facts = live(team)
    assert CORRECTION in facts.values()
    assert "Merged by the curator" not in facts.values()


def test_a_filed_merge_knows_what_the_plan_saw_and_no_more(team: Path, tmp_path: Path) -> None:
    ctx = open_context(str(team))
    before = read_journal(ctx.layout, ctx.policy).entries
    proc = jmem(team, "consolidate", "--propose", script(tmp_path, MERGE))
    assert proc.returncode == 0, proc.stderr
    after = read_journal(ctx.layout, ctx.policy).entries
    [merged] = [e for _, e in after if e.agent == "curator"]
    assert merged.supersedes
    assert merged.knew == newest_of(before, merged.supersedes)


def test_a_proposal_of_an_older_plan_is_refused_after_a_same_key_correction(
        team: Path, tmp_path: Path) -> None:
    """The correction keeps the title and changes the body: the item's keys are the
    same, so an id of the keys alone let the old proposal through."""
    old = json.loads(jmem(team, "consolidate", "--json").stdout)
    item = next(i for i in old if i["kind"] == "duplicates")
    first = item["facts"][0]
    assert jmem(team, "write", "--agent", first["writer"], "--topic", first["topic"], "--key",
                first["key"], "--title", first["title"], "--body",
                "The limit is now 40, not 20.").returncode == 0
    again = json.loads(jmem(team, "consolidate", "--json").stdout)
    assert any(i["keys"] == item["keys"] for i in again)  # the same facts, other content
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps([{"item": item["id"], "title": "Merged by the curator",
                                   "body": "b", "topic": first["topic"],
                                   "supersedes": item["keys"]}]))
    proc = jmem(team, "consolidate", "--propose", f"cat {answer}")
    assert proc.returncode == 1
    assert f"{item['id']!r} is not an item of the plan" in " ".join(proc.stderr.split())


@pytest.mark.parametrize(("body", "error"), [
    ("import time\ntime.sleep(120)\n", "ran over 2 s; it and every process it started were "
                                      "ended"),
    ("print('x' * 5_000_000)\n", "answered more than 4194304 bytes"),
])
def test_a_proposer_that_hangs_or_floods_cannot_hold_jmem(team: Path, tmp_path: Path,
                                                          body: str, error: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "journal_mem", "consolidate", "--propose",
                           script(tmp_path, body)], cwd=team,
                          env=base_env(JMEM_CONSOLIDATE_TIMEOUT="2"),
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode != 0
    assert error in " ".join(proc.stderr.split())


def test_a_proposer_that_answered_and_left_a_child_on_its_output_does_not_hang_jmem(
        team: Path, tmp_path: Path) -> None:
    """It answers `[]`, starts a child that keeps its stdout open for two minutes, and
    exits: jmem takes the answer and ends the child with the group."""
    pidfile = tmp_path / "child.pid"
    command = script(tmp_path, f"""
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
open({str(pidfile)!r}, "w").write(str(child.pid))
print("[]", flush=True)
""")
    proc = subprocess.run([sys.executable, "-m", "journal_mem", "consolidate", "--propose",
                           command], cwd=team, env=base_env(), capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "the proposer proposed nothing" in proc.stdout
    assert not running(int(pidfile.read_text()))


def running(pid: int) -> bool:
    """True while `pid` runs (a killed process nobody reaped yet is a zombie: not)."""
    for _ in range(100):  # SIGKILL is delivered at once; the state follows soon
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        if state in ("Z", "X"):
            return False
        time.sleep(0.05)
    return True
