"""The demo's last scenes: an orchestrator's loop using memory, and a fact's history.

Kept apart from `commands/demo.py` (the protocol's scenes) so that each module
stays readable; both play on the same `Stage`.
"""

from __future__ import annotations

import json
import os

from journal_mem.commands.demo_stage import Stage

LOOP_ON = {f"JMEM_HOOKS_{p}": "1" for p in ("PRE_WORK", "PRE_SPAWN", "POST_RUN", "FAIL_DIAG")}


def _hook(stage: Stage, point: str, context: dict[str, object]) -> dict[str, object]:
    saved = dict(stage.env)
    stage.env.update(LOOP_ON)
    try:
        proc = stage.run(["jmem", "hook", point], stage.main, stdin=json.dumps(context),
                         show=False)
    finally:
        stage.env.clear()
        stage.env.update(saved)
    shown = json.dumps(context)
    stage.echo(f"  [app]$ echo '{shown[:70]}{'…' if len(shown) > 70 else ''}' | "
               f"jmem hook {point}")
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def scene_loop(stage: Stage) -> None:
    stage.scene("An orchestrator's own loop uses memory at its five points")
    stage.say("""
        Not every team runs Claude Code's hooks. An executive loop calls
        `jmem hook NAME` (or journal_mem.api.run_hook) before it picks work,
        before it spawns a worker, after a run, before it diagnoses a failure
        and after a retrospective. Each point is switched on by itself, and
        nothing it does can stop the loop: it always answers with JSON.""")
    worker = os.path.join(stage.root, "worker-1")
    os.makedirs(worker)
    pack = _hook(stage, "pre-spawn", {"goal": "fix the search filter for missing fields",
                                      "worker_dir": worker})
    details = pack["details"]
    assert isinstance(details, dict)
    stage.echo(f"    pack: {details['facts']} fact(s), ~{details['tokens']} tokens, "
               f"written into worker-1/CLAUDE.md between marker comments")
    for run in (1, 2, 3):
        diag = _hook(stage, "fail-diag", {"check": "test_search_filter", "run_id": f"run-{run}",
                                          "error": f"AssertionError: {run}2 hits != 0"})
        info = diag["details"]
        assert isinstance(info, dict)
        stage.echo(f"    run {run}: seen {info['earlier']} time(s) before; wrote {diag['written']}")
    stage.say("""
        The third failure with the same signature wrote one "repeated failure"
        lesson, once. Every call is a line in the hook log:""")
    stage.run(["jmem", "status", "--hooks"], stage.main)


def scene_history(stage: Stage) -> None:
    stage.scene("Where did this line come from, and who else holds it?")
    proc = stage.run(["jmem", "log", "filter-by-value"], stage.main, show=False)
    stage.echo("  [app]$ jmem log filter-by-value")
    lines = proc.stdout.splitlines()
    start = lines.index("what each holder loaded:")
    for line in [*lines[:4], "      …", *lines[start:start + 3], "      …"]:
        stage.echo(f"    {line}")
    stage.say("""
        The journal says who wrote and corrected the fact and which PR paid for
        it; git says what every agent's MEMORY.md held at each distill. `jmem
        stats` counts the team's memory; `jmem report` draws one timeline per
        shared or corrected fact on a static HTML page.""")
    stage.run(["jmem", "stats"], stage.main)
    stage.run(["jmem", "report", "--out", os.path.join(stage.root, "report")], stage.main)
