"""The agent-loop API (`journal_mem.api.run_hook`, `jmem hook NAME`): switches, results,
the hook log, and the promise that memory never stops the loop."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import base_env, jmem

from journal_mem.api import POINTS, HookResult, run_hook
from journal_mem.journal.entry import parse
from journal_mem.loop import hooklog
from journal_mem.names import default_key

ALL_ON = {f"JMEM_HOOKS_{p.replace('-', '_').upper()}": "1" for p in POINTS}


def state_dir(repo: Path) -> str:
    return str(repo / ".git" / "journal-mem")


def log_records(repo: Path) -> list[dict[str, object]]:
    return hooklog.read(state_dir(repo))


def call(repo: Path, point: str, context: dict[str, object], **env: str) -> dict[str, object]:
    """`jmem hook POINT` as a child process: exit 0 and one JSON object, always."""
    proc = jmem(repo, "hook", point, env=base_env(**env), stdin=json.dumps(context))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("point", POINTS)
def test_every_point_is_off_by_default_and_says_why(repo: Path, point: str) -> None:
    result = run_hook(point, {"goal": "anything"}, cwd=str(repo))
    assert result.skipped and not result.ran and not result.errors
    switch = point.replace("-", "_")
    assert f"hooks.{switch} is off" in result.reason
    assert log_records(repo)[-1]["point"] == point


@pytest.mark.parametrize("point", ["pre-work", "pre-spawn", "post-run", "fail-diag"])
def test_a_point_switched_on_runs(repo: Path, point: str, monkeypatch: pytest.MonkeyPatch,
                                  tmp_path: Path) -> None:
    monkeypatch.setenv(f"JMEM_HOOKS_{point.replace('-', '_').upper()}", "1")
    context = {"goal": "fix the flaky API tests", "worker_dir": str(tmp_path),
               "error": "boom", "check": "test_x", "lessons": []}
    result = run_hook(point, context, cwd=str(repo))
    assert result.ran and not result.skipped, result
    assert result.errors == []


def test_master_switch_env_and_config(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ALL_ON.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("JMEM_DISABLE", "1")
    assert run_hook("pre-work", {"goal": "x"}, cwd=str(repo)).reason == "JMEM_DISABLE is set"
    monkeypatch.delenv("JMEM_DISABLE")
    config = repo / ".claude" / "journal-mem.toml"
    config.write_text(config.read_text().replace("[hooks]\n", "[hooks]\nenabled = false\n"))
    result = run_hook("pre-work", {"goal": "x"}, cwd=str(repo))
    assert result.skipped and result.reason == "hooks.enabled = false"


def test_an_empty_switch_is_unset_not_an_error(repo: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JMEM_HOOKS_PRE_WORK", "")
    monkeypatch.setenv("JMEM_DISABLE", "")
    result = run_hook("pre-work", {"goal": "x"}, cwd=str(repo))
    assert result.skipped and "off" in result.reason and not result.errors


@pytest.mark.parametrize("name,value", [("JMEM_HOOKS_PRE_WORK", "ture"),
                                        ("JMEM_DISABLE", "maybe")])
def test_a_typo_in_a_switch_is_an_error_result_and_is_logged(
        repo: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    result = run_hook("pre-work", {"goal": "x"}, cwd=str(repo))
    assert not result.ran and not result.skipped
    assert result.errors and name.removeprefix("JMEM_").split("_")[0].lower() in \
        result.errors[0].lower()
    record = log_records(repo)[-1]
    assert record["errors"] == 1 and record["first_error"] == result.errors[0]


def test_a_write_that_fails_is_an_error_in_the_result_and_the_log(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The go-live story: every write failed while the log said "ok". Here it cannot."""
    monkeypatch.setenv("JMEM_HOOKS_POST_RUN", "1")
    monkeypatch.setenv("JMEM_AGENT", "")  # empty means unset: the default agent writes
    lessons = [
        {"title": "Seed the API database once per session", "topic": "testing",
         "body": "Per-test seeding tripled the run time."},
        {"title": "", "topic": "testing"},  # invalid: no title
        {"title": "Bad topic", "topic": "Not A Topic!"},  # invalid: topic name
    ]
    result = run_hook("post-run", {"lessons": lessons, "run_id": "r-7"}, cwd=str(repo))
    assert result.ran and len(result.written) == 1 and len(result.errors) == 2
    assert result.errors[0].startswith("lesson 2:") and "title" in result.errors[0]
    record = log_records(repo)[-1]
    assert record["written"] == 1 and record["errors"] == 2
    summary = jmem(repo, "status", "--hooks").stdout
    assert "post-run: 1 calls, 1 ran, 0 skipped, 1 with errors" in summary
    assert "lesson 2:" in summary
    entry = next((repo / ".claude/agent-memory/main/journal").glob("*seed-the-api*"))
    parsed = parse(entry.read_bytes(), filename=entry.name)
    assert parsed.source == "post-run run r-7" and parsed.tags == ("post-run",)


def test_post_run_refuses_more_than_three_lessons(repo: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JMEM_HOOKS_POST_RUN", "1")
    lessons = [{"title": f"Lesson {i}", "topic": "t"} for i in range(4)]
    result = run_hook("post-run", {"lessons": lessons}, cwd=str(repo))
    assert not result.written and "at most 3" in result.errors[0]


def test_episodic_records_of_three_runs_stay_three(repo: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JMEM_HOOKS_POST_RUN", "1")
    keys = set()
    for run in ("r1", "r2", "r3"):
        lesson = {"title": "Nightly import finished", "topic": "runs", "type": "episodic"}
        result = run_hook("post-run", {"lessons": [lesson], "run_id": run}, cwd=str(repo))
        assert result.errors == []
        keys |= set(result.written)
    assert len(keys) == 3
    hits = jmem(repo, "recall", "--type", "episodic", "--tag", "post-run", "--json").stdout
    assert {h["key"] for h in json.loads(hits)} == keys


def test_the_command_always_exits_0_with_one_json_result(repo: Path) -> None:
    bad_json = jmem(repo, "hook", "pre-work", stdin="{not json")
    assert bad_json.returncode == 0 and "not JSON" in json.loads(bad_json.stdout)["errors"][0]
    unknown = jmem(repo, "hook", "pre-lunch", stdin="{}")
    assert unknown.returncode == 0 and "unknown hook point" in json.loads(unknown.stdout)[
        "errors"][0]
    not_object = jmem(repo, "hook", "pre-work", stdin="[1, 2]")
    assert "JSON object" in json.loads(not_object.stdout)["errors"][0]
    outside = jmem(repo.parent, "hook", "pre-work", stdin="{}")
    assert outside.returncode == 0 and json.loads(outside.stdout)["errors"]


def test_pre_work_is_not_run_when_nothing_is_queued(repo: Path) -> None:
    data = call(repo, "pre-work", {"goal": "x", "queued": 0}, JMEM_HOOKS_PRE_WORK="1")
    assert data["skipped"] and data["reason"] == "nothing queued"


def test_pre_work_finds_facts_for_the_goal_and_its_questions(repo: Path) -> None:
    for title, topic in (("Run the API tests with -p no:randomly", "testing"),
                         ("Deploys go through the release branch", "deploy")):
        assert jmem(repo, "write", "--agent", "api", "--topic", topic, "--title", title,
                    stdin="detail").returncode == 0
    data = call(repo, "pre-work", {"goal": "Fix the flaky API tests. Then deploy."},
                JMEM_HOOKS_PRE_WORK="1")
    assert data["details"]["questions"] == ["Fix the flaky API tests.", "Then deploy."]
    titles = {f["title"] for f in data["found"]}
    assert titles == {"Run the API tests with -p no:randomly",
                      "Deploys go through the release branch"}


def test_hook_result_is_a_plain_value() -> None:
    result = HookResult(point="pre-work", errors=["x"])
    assert not result.ok and result.as_json()["errors"] == ["x"]
    assert json.loads(json.dumps(result.as_json()))["point"] == "pre-work"


def test_an_unexpected_error_is_a_result_not_a_raise(repo: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JMEM_HOOKS_PRE_WORK", "1")

    def explode(*_: object, **__: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("journal_mem.loop.asking.recall_each", explode)
    result = run_hook("pre-work", {"goal": "x"}, cwd=str(repo))
    assert not result.ran and "unexpected RuntimeError: disk on fire" in result.errors[0]
    assert os.path.exists(result.errors[0].rsplit("details: ", 1)[1].rstrip(")"))


def loop_example() -> str:
    """The Python block after `<!-- example:agent-loop -->` in docs/agent-loop.md."""
    from helpers import REPO_ROOT

    text = (REPO_ROOT / "docs" / "agent-loop.md").read_text(encoding="utf-8")
    after = text.split("<!-- example:agent-loop -->\n", 1)[1]
    assert after.startswith("```python\n")
    return after.removeprefix("```python\n").split("\n```", 1)[0]


def test_the_agent_loop_example_runs(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = loop_example()
    assert 30 <= len(code.splitlines()) <= 50
    script = tmp_path / "loop.py"
    script.write_text(code)
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=base_env(),
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("run 1: 0 facts known") and "fail-diag wrote" in lines[0]
    cart = default_key("Cart totals are integer cents, never floats")
    assert f"post-run wrote ['{cart}" in lines[1]
    assert lines[2] == f"retro: ['{default_key('Test money in cents first.')}'] []"


def test_post_retro_turns_findings_into_reflective_lessons_once(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers import REPO_ROOT

    monkeypatch.setenv("JMEM_HOOKS_POST_RETRO", "1")
    retro = REPO_ROOT / "fixtures" / "imports" / "2026-08-13-payments-outage.md"
    first = run_hook("post-retro", {"path": str(retro), "agent": "api"}, cwd=str(repo))
    assert first.ran and not first.errors and len(first.written) >= 2, first
    for rel in first.details["paths"]:
        entry = parse((repo / rel).read_bytes(), filename=Path(rel).name)
        assert entry.type == "reflective" and entry.agent == "api"
        assert entry.created.date().isoformat() == "2026-08-13"
        assert "2026-08-13-payments-outage.md" in (entry.source or "")
    again = run_hook("post-retro", {"path": str(retro), "agent": "api"}, cwd=str(repo))
    assert again.written == [] and again.details["already"] == len(first.written)
    missing = run_hook("post-retro", {"path": str(repo / "nope.md")}, cwd=str(repo))
    assert missing.errors and "is not a file" in missing.errors[0]


def test_a_hook_result_compares_shows_and_copies_its_fields() -> None:
    """A plain class (the loop's hot path imports no `dataclasses`) that keeps what the
    dataclass gave: keyword construction, equality by fields, a repr naming them, and
    `as_json` copies that a caller may change."""
    one = HookResult(point="pre-work", found=[{"key": "k"}], details={"n": 1})
    assert one == HookResult("pre-work", found=[{"key": "k"}], details={"n": 1})
    assert one != HookResult("pre-work") and one != "pre-work"
    assert repr(one).startswith("HookResult(point='pre-work', ran=False, skipped=False")
    out = one.as_json()
    assert list(out) == ["point", "ran", "skipped", "reason", "written", "found", "errors",
                         "elapsed_ms", "details"]
    out["found"][0]["key"] = "changed"
    out["errors"].append("x")
    assert one.found == [{"key": "k"}] and one.ok and HookResult("p", errors=["e"]).ok is False
    nested = HookResult("post-retro", details={"paths": ["a.md"], "pair": ("x", ["y"])})
    copy = nested.as_json()["details"]
    copy["paths"].append("b.md")
    copy["pair"][1].append("z")
    assert nested.details == {"paths": ["a.md"], "pair": ("x", ["y"])}
    assert HookResult("a").written is not HookResult("b").written
