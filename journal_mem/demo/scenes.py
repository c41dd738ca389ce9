"""`jmem demo`: the whole story in a temporary repository, narrated.

Every step runs the real `jmem` program and real git in a real repository
with a linked worktree; the narration says what happened and why. The scenes
play in order on one `Stage`: the protocol's (write, guard, rescue, distill,
wake-up, corrections), then an orchestrator's loop using memory, then a
fact's history.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

from journal_mem.demo.stage import Echo, Stage

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


def scene_setup(stage: Stage) -> None:
    stage.scene("A repository with two agents")
    os.makedirs(os.path.join(stage.main, "src"))
    stage.git("init", "-q", "-b", "main")
    with open(os.path.join(stage.main, "src", "app.py"), "w") as fh:
        fh.write("print('hello')\n")
    stage.run(["jmem", "init", "--agent", "api", "--agent", "web"], stage.main)
    stage.git("add", "-A")
    stage.git("commit", "-q", "-m", "start")
    stage.run(["git", "worktree", "add", "-q", "-b", "feature", stage.worktree], stage.main)
    stage.say("""
        The main checkout (app/) holds the memory. The api agent works in a linked
        worktree (app-feature/) on its own branch, as parallel agents do.""")


def scene_write(stage: Stage) -> None:
    stage.scene("An agent records a lesson from its worktree")
    sub = os.path.join(stage.worktree, "src")
    proc = stage.run(
        ["jmem", "write", "--agent", "api", "--topic", "testing",
         "--title", "Run the API tests with -p no:randomly",
         "--body", "They share one database fixture; random order makes them flaky."],
        sub,
    )
    path = proc.stdout.strip()
    in_main = path.startswith(stage.main + os.sep)
    in_worktree = os.path.exists(os.path.join(stage.worktree, os.path.relpath(path, stage.main)))
    stage.say(f"""
        It ran in app-feature/src, yet the file was created in the MAIN checkout's
        journal ({'yes' if in_main else 'NO'}), not in the worktree ({'NO' if not in_worktree
        else 'yes?!'}). The worktree's branch will be merged or thrown away; the
        main checkout's journal is where every agent's memory is distilled from.
        A new file per lesson means two agents never conflict.""")
    stage.run(["cat", path], stage.main)


def scene_outbox(stage: Stage) -> None:
    stage.scene("A sandboxed session writes to the outbox")
    proc = stage.run(
        ["jmem", "write", "--agent", "web", "--topic", "build", "--outbox", "--json",
         "--title", "The web build needs NODE_OPTIONS=--max-old-space-size=4096"],
        stage.worktree,
    )
    stage.say("""
        A session that may not write into the main checkout uses the outbox in the
        repository's common git dir (.git/journal-mem/outbox/), shared by every
        worktree and never committed. The next distill moves it into the journal.""")
    del proc


def scene_refused(stage: Stage) -> None:
    stage.scene("Bad input is refused, loudly, and nothing is written")
    stage.run(
        ["jmem", "write", "--agent", "../x", "--topic", "t", "--title", "x",
         "--confidence", "2"],
        stage.worktree, check=False,
    )
    stage.say("One line per problem, exit 1, no file created.")




# --- wake-up scene ---------------------------------------------------------------


def scene_wake(stage: Stage) -> None:
    stage.scene("A subagent wakes up in its worktree, and is reminded to write its lesson")

    stage.run(["jmem", "init", "--claude-agent", "api"], stage.main)
    stage.say("""
        `jmem init` (the first scene) merged SessionStart/SubagentStart, UserPromptSubmit and
        the tool events (jmem wake --hook claude) and Stop/SubagentStop (jmem remind --hook
        claude) into .claude/settings.json;
        --claude-agent wrote the subagent's definition with `memory: project`.
        Claude Code now starts the api subagent in app-feature/ and runs the hook:""")
    payload = {"session_id": "demo-session", "cwd": stage.worktree,
               "hook_event_name": "SubagentStart", "agent_id": "agent-1", "agent_type": "api"}
    stdin = json.dumps(payload)
    shown = stdin.replace(stage.root + os.sep, "")
    stage.echo(f"  [app-feature]$ echo '{shown}' | jmem wake --hook claude")
    proc = stage.run(["jmem", "wake", "--hook", "claude"], stage.worktree, stdin=stdin,
                     show=False)
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    stage.say("What the agent sees, added to its context (additionalContext):")
    for line in context.rstrip("\n").split("\n"):
        stage.echo(f"    | {line.replace(stage.root + os.sep, '')}")
    stage.say("""
        Nothing is distilled yet, so Claude Code's native MEMORY.md load has nothing;
        the hook adds the lessons written since the last distill, from the MAIN
        checkout and the outbox. The agent edits a file (its transcript shows the Edit
        call) and stops without recording a lesson: the SubagentStop hook reminds it once,
        as context (a turn without edits would not be reminded):""")
    transcript = os.path.join(stage.root, "agent-1.jsonl")
    with open(transcript, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "t1", "name": "Edit",
             "input": {"file_path": "app.py"}}]}}) + "\n")
    stop = json.dumps({**payload, "hook_event_name": "SubagentStop",
                       "stop_hook_active": False, "agent_transcript_path": transcript})
    stage.echo("  [app-feature]$ echo '{…SubagentStop…}' | jmem remind --hook claude")
    proc = stage.run(["jmem", "remind", "--hook", "claude"], stage.worktree, stdin=stop,
                     show=False)
    reminder = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    for line in reminder.split("\n"):
        stage.echo(f"    | {line}")
    again = stage.run(["jmem", "remind", "--hook", "claude"], stage.worktree, stdin=stop,
                      show=False)
    stage.say(f"Asked again, it lets the agent stop ({'no output' if not again.stdout else '?!'}):"
              " one reminder per session. `jmem status --sessions` shows what each one got:")
    stage.run(["jmem", "status", "--sessions"], stage.worktree)



# --- end of wake-up scene -------------------------------------------------------

# --- guard scene ------------------------------------------------------------------


def scene_guard(stage: Stage) -> None:
    stage.scene("The guard: a worktree commit that edits memory is refused, then rescued")
    memory_md = os.path.join(stage.worktree, ".claude", "agent-memory", "api", "MEMORY.md")
    os.makedirs(os.path.dirname(memory_md), exist_ok=True)
    with open(memory_md, "a", encoding="utf-8") as fh:
        fh.write("- The API answers 429 after 100 requests a minute; back off 2 s\n")
    with open(os.path.join(stage.worktree, "src", "client.py"), "w") as fh:
        fh.write("RETRY_AFTER_S = 2\n")
    stage.say("""
        The api agent, curating its own memory the way Claude Code does, appended a
        line to MEMORY.md in its worktree and staged it with its code. That line would
        be lost with the worktree, or fight the distiller in a merge.""")
    stage.run(["git", "add", "-A"], stage.worktree)
    stage.run(["git", "commit", "-q", "-m", "client: back off on 429"], stage.worktree,
              check=False)
    stage.say("""
        The pre-commit hook that `jmem init` installed (shared by every worktree)
        refused the commit, named the rule and the command that does it right.""")
    stage.run(["jmem", "rescue"], stage.worktree)
    stage.run(["git", "commit", "-q", "-m", "client: back off on 429"], stage.worktree)
    stage.run(["git", "status", "--short"], stage.worktree)
    stage.say("""
        The added line is now a lesson in the main checkout's journal (topic inbox),
        the worktree's MEMORY.md is back to HEAD, and the code commit went through.""")



# --- the six-agent correction ---------------------------------------------------------

SIX = ("api", "web", "search", "ingest", "billing", "docs")
WRONG = "Filter by value finds documents that lack the field"


def _memory_lines(stage: Stage, needle: str) -> None:
    for agent in SIX:
        path = os.path.join(stage.main, ".claude", "agent-memory", agent, "MEMORY.md")
        with open(path, encoding="utf-8") as fh:
            hits = [line for line in fh.read().splitlines() if needle in line]
        stage.echo(f"    {agent:8} {hits[0] if hits else '(none)'}")


def scene_six_agents(stage: Stage) -> None:
    stage.scene("One wrong fact in six agents' memory, corrected everywhere by one distill")
    for agent in SIX:
        stage.run(["jmem", "write", "--agent", agent, "--topic", "search", "--key",
                   "filter-by-value", "--title", WRONG], stage.main, show=agent == "api")
    stage.say("(the same lesson was written by all six agents)")
    stage.run(["jmem", "distill"], stage.main)
    stage.say("Every agent's MEMORY.md now holds the wrong fact:")
    _memory_lines(stage, "[filter-by-value")
    stage.say("""
        Weeks later two agents notice, in two different pull requests: api rewrites
        the same key, search supersedes it with a new one. Nobody touches the
        other four.""")
    stage.run(["jmem", "write", "--agent", "api", "--topic", "search", "--key",
               "filter-by-value", "--title",
               "Filter by value skips documents that lack the field"], stage.main)
    stage.run(["jmem", "write", "--agent", "search", "--topic", "search", "--key",
               "filter-by-value-skips-missing", "--supersedes", "filter-by-value", "--title",
               "Filter by value never matches a document missing the field",
               "--body", "Use exists(field) to find the documents that lack it."], stage.main)
    stage.run(["jmem", "distill"], stage.main)
    stage.say("One distill later, all six hold the correction and none the wrong fact:")
    _memory_lines(stage, "[filter-by-value")
    stage.run(["git", "log", "-1", "--format=%B"], stage.main)
    stage.say("""
        The key is team-wide: the newest entry wins for every agent that held it,
        and a supersede hands the old fact's holders to the new one. The commit
        message says when it was fixed and why; `jmem check` in CI proves the
        files equal a rebuild from the journal.""")
    stage.run(["jmem", "check"], stage.main)


# --- end six-agent correction ---


def scene_recall(stage: Stage) -> None:
    stage.scene("Any agent asks a question and gets live facts only")
    stage.run(["jmem", "recall", "does", "filter", "by", "value", "find", "missing", "fields",
               "--agent", "billing"], stage.worktree)
    stage.say("""
        Ranked by an SQLite FTS5 index in the common git dir, built from the
        journal: the corrected fact comes back with its key, the agents holding it,
        its topic, date and entry; the superseded one never does.""")



# --- the watcher drains the outbox ----------------------------------------------------


def scene_watch(stage: Stage) -> None:
    stage.scene("The watcher files a sandboxed session's lesson and distills it")
    # the watcher is the distiller here: no background distill from post-commit
    env = dict(stage.env, JMEM_DISTILL_THRESHOLD="1", JMEM_HOOKS_DISTILL_ON_COMMIT="false")
    stage.echo("  [app]$ JMEM_DISTILL_THRESHOLD=1 jmem watch --once --debounce 0.3 &")
    watcher = subprocess.Popen(
        [sys.executable, "-m", "journal_mem", "watch", "--once", "--debounce", "0.3"],
        cwd=stage.main, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert watcher.stdout is not None
    seen = []
    for line in watcher.stdout:  # until it watches (or has already distilled and left)
        seen.append(line.rstrip("\n"))
        if "jmem watch: watching" in line:
            break
    stage.say("""
        The watcher observes the main checkout's journals and the outbox. A session
        that may only write into the outbox (sandboxed, or isolated in its worktree)
        records a lesson:""")
    stage.run(["jmem", "write", "--agent", "web", "--topic", "build", "--outbox",
               "--title", "Cache node_modules between CI runs; installs take 4 minutes"],
              stage.worktree)
    try:
        rest, _ = watcher.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        watcher.kill()
        rest, _ = watcher.communicate()
    for line in [*seen, *rest.splitlines()]:
        stage.echo(f"    {line.replace(stage.root + os.sep, '')}")
    stage.say("""
        One file event, one debounce, one distill: the outbox entry was moved into
        the main journal (nothing leaves the outbox before its copy is safe), folded
        into web's MEMORY.md and committed. Without --once the watcher keeps going;
        Ctrl-C stops it cleanly.""")
    stage.run(["grep", "-n", "node_modules", ".claude/agent-memory/web/MEMORY.md"], stage.main)


# --- end of the watcher scene ---


SCENES = [scene_setup, scene_write, scene_outbox, scene_refused, scene_guard,
          scene_six_agents, scene_recall, scene_wake, scene_watch, scene_loop, scene_history]


def run_demo(keep: bool = False, echo: Echo = print) -> int:
    """Play every scene in a fresh temporary repository."""
    root = os.path.realpath(tempfile.mkdtemp(prefix="jmem-demo-"))
    stage = Stage(root, echo)
    try:
        echo(f"journal-mem demo in {root}")
        for scene in SCENES:
            scene(stage)
        echo("")
        echo("The end. Every step above ran the real jmem and real git.")
    finally:
        if keep:
            echo(f"(kept {root})")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0
