"""journal-mem on what macOS and Windows lack, simulated on this Linux (issue: every
platform teams use). `sim/sitecustomize.py` takes away, in every Python these tests
start (git's hooks included), what `JMEM_TEST_LACKS` names: `fcntl` (Windows: an
`msvcrt` stand-in with its semantics takes its place), `O_TMPFILE`, `/proc`, folder
descriptors, `posix_spawn`, or any module.

Each test runs the same commands on a twin repository with nothing taken away and
compares what the user sees.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import base_env, git, jmem, make_repo

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="simulates the other platforms by taking Linux's "
    "facilities away; on macOS and Windows the whole suite runs for real (tests.yml)")

SIM = Path(__file__).parent / "sim"
WINDOWS = "fcntl,tmpfile,proc,dirfd,spawn"  # all that Windows lacks of what jmem uses
MACOS = "tmpfile,proc"
LOCK_BYTE = 1 << 30  # fsutil.LOCK_BYTE


def lacking(what: str, **extra: str) -> dict[str, str]:
    env = base_env(JMEM_TEST_LACKS=what, **extra)
    env["PYTHONPATH"] = str(SIM) + os.pathsep + env["PYTHONPATH"]
    return env


def _session(repo: Path, event: str, **more: object) -> str:
    return json.dumps({"session_id": "s-1", "transcript_path": "", "cwd": str(repo),
                       "hook_event_name": event, "source": "startup", **more})


def _story(repo: Path, env: dict[str, str]) -> list[tuple[str, int, str, str]]:
    """init, write, distill, check, the SessionStart and Stop hooks, status: (step, exit
    code, stdout, stderr), the repository's path replaced by REPO."""
    steps: list[tuple[str, list[str], str | None]] = [
        ("init", ["init", "--agent", "api", "--no-claude"], None),
        ("write", ["write", "--agent", "api", "--topic", "build", "--title",
                   "The build runs with make -j4", "--body", "Not with plain make."], None),
        ("distill", ["distill"], None),
        ("write again", ["write", "--agent", "api", "--topic", "build", "--title",
                         "Tests need the fixtures folder"], None),
        ("check", ["check"], None),
        ("SessionStart", ["wake", "--hook", "claude", "--agent", "api"],
         _session(repo, "SessionStart")),
        ("Stop", ["remind", "--hook", "claude", "--agent", "api"],
         _session(repo, "Stop", stop_hook_active=False)),
    ]
    out = []
    for name, args, stdin in steps:
        proc = jmem(repo, *args, env=env, stdin=stdin)
        clean = [_RANDOM.sub("-X.md", t.replace(str(repo), "REPO"))
                 for t in (proc.stdout, proc.stderr)]
        out.append((name, proc.returncode, *clean))
    return out


_RANDOM = re.compile(r"-[0-9a-f]{10}\.md")  # an entry name's random suffix


def _twins(tmp_path: Path) -> tuple[Path, Path]:
    return make_repo(tmp_path / "linux" / "repo"), make_repo(tmp_path / "other" / "repo")


@pytest.mark.parametrize("lacks", [WINDOWS, MACOS, "fcntl", "dirfd", "spawn"])
def test_every_command_answers_as_on_linux(tmp_path: Path, lacks: str) -> None:
    linux, other = _twins(tmp_path)
    expected = _story(linux, base_env())
    got = _story(other, lacking(lacks))
    for (name, code, out, err), want in zip(got, expected, strict=True):
        assert code == 0, (name, out, err)
        if name == "distill":  # the commit's id differs
            out, want = out.split("committed")[0], (want[0], want[1], want[2].split(
                "committed")[0], want[3])
        assert (name, code, out, err) == want, lacks
    pack = json.loads(got[5][2])["hookSpecificOutput"]["additionalContext"]
    assert "The build runs with make -j4" in pack and "Tests need the fixtures folder" in pack
    assert not list(other.rglob(".tmp*")), "a temp file was left behind"
    assert (other / ".claude/agent-memory/api/MEMORY.md").read_bytes() == \
        (linux / ".claude/agent-memory/api/MEMORY.md").read_bytes()


def test_without_fcntl_the_distill_lock_is_msvcrt_s_and_keeps_one_writer(
        tmp_path: Path) -> None:
    """The Windows lock: msvcrt.locking of one byte past the content, never blocking; a
    second distill exits 75 naming the holder; the lock is free once the holder ends."""
    repo = make_repo(tmp_path / "repo")
    log = tmp_path / "msvcrt.log"
    env = lacking("fcntl", JMEM_TEST_MSVCRT_LOG=str(log))
    assert jmem(repo, "init", "--agent", "api", "--no-claude", env=env).returncode == 0
    assert jmem(repo, "write", "--agent", "api", "--topic", "t", "--title", "One lesson",
                env=env).returncode == 0
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\n"
         "from journal_mem.journal.lock import DistillLock\n"
         "with DistillLock(sys.argv[1]):\n"
         "    print('held', flush=True)\n"
         "    time.sleep(60)\n", str(repo / ".git" / "journal-mem")],
        env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        second = jmem(repo, "distill", env=env)
        assert second.returncode == 75, second.stderr
        assert f"pid {holder.pid}" in second.stderr
        status = jmem(repo, "status", env=env)
        assert f"pid {holder.pid}" in status.stdout, status.stdout
    finally:
        holder.kill()
        holder.wait()
    deadline = time.monotonic() + 10
    while (proc := jmem(repo, "distill", env=env)).returncode == 75 and \
            time.monotonic() < deadline:
        time.sleep(0.1)
    assert proc.returncode == 0, proc.stderr
    calls = [tuple(map(int, line.split())) for line in log.read_text().splitlines()]
    assert calls and all(offset == LOCK_BYTE and nbytes == 1 for _, offset, nbytes in calls)
    assert {mode for mode, _, _ in calls} == {2}, "only LK_NBLCK: jmem never waits in msvcrt"


def test_the_session_lock_without_fcntl_keeps_racing_hooks_apart(tmp_path: Path) -> None:
    """Claude Code runs parallel tool calls' hooks at once: with msvcrt's lock, as with
    flock, each of them delivers a change once (one pack, then nothing)."""
    repo = make_repo(tmp_path / "repo")
    env = lacking("fcntl")
    assert jmem(repo, "init", "--agent", "api", "--no-claude", env=env).returncode == 0
    (repo / ".claude/agent-memory/api/MEMORY.md").write_text(
        "# api\n- Deploys go through staging first [deploy-staging]\n")
    start = jmem(repo, "wake", "--hook", "claude", "--agent", "api",
                 stdin=_session(repo, "SessionStart"), env=env)
    assert start.returncode == 0 and "[deploy-staging]" in start.stdout, start.stderr
    assert jmem(repo, "write", "--agent", "api", "--topic", "ops", "--title",
                "Lesson two: deploys skip staging for hotfixes", "--supersedes",
                "deploy-staging", env=env).returncode == 0
    state = repo / ".git/journal-mem/sessions/s-1--main.json"
    os.utime(state, (1, 1))  # the last check long ago: no throttle
    hooks = [subprocess.Popen(
        [sys.executable, "-m", "journal_mem", "wake", "--hook", "claude", "--agent", "api"],
        cwd=repo, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True) for _ in range(4)]
    payload = _session(repo, "PostToolUse", tool_name="Read", tool_input={},
                       tool_response={})
    answers = [h.communicate(payload) for h in hooks]
    assert all(h.returncode == 0 for h in hooks), answers
    told = [out for out, _ in answers if "Lesson two" in out]
    assert len(told) == 1, answers


def test_with_no_lock_at_all_the_hooks_still_exit_0_and_say_why(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    assert jmem(repo, "init", "--agent", "api", "--no-claude").returncode == 0
    env = lacking("locks")
    for args, event in ((["wake"], "SessionStart"), (["remind"], "Stop")):
        proc = jmem(repo, *args, "--hook", "claude", "--agent", "api",
                    stdin=_session(repo, event, stop_hook_active=False), env=env)
        assert proc.returncode == 0, proc.stderr
        assert "neither fcntl nor msvcrt" in proc.stderr, proc.stderr
    distill = jmem(repo, "distill", env=env)
    assert distill.returncode != 0 and "neither fcntl nor msvcrt" in distill.stderr


@pytest.mark.parametrize("event", ["SessionStart", "Stop"])
def test_a_hook_whose_module_cannot_be_imported_exits_0_naming_it(
        tmp_path: Path, event: str) -> None:
    repo = make_repo(tmp_path / "repo")
    assert jmem(repo, "init", "--agent", "api", "--no-claude").returncode == 0
    command = "wake" if event == "SessionStart" else "remind"
    proc = jmem(repo, command, "--hook", "claude", stdin=_session(repo, event),
                env=lacking("module:journal_mem.wake.sessions"))
    assert proc.returncode == 0 and proc.stdout == ""
    assert "journal_mem.wake.sessions is missing" in proc.stderr, proc.stderr


def test_the_git_hooks_run_without_fcntl(tmp_path: Path) -> None:
    """A real `git commit` runs the guard and the post-commit distill check in Pythons
    that lack fcntl: an ordinary commit passes, a worktree's memory edit is refused."""
    repo = make_repo(tmp_path / "repo")
    env = lacking(WINDOWS)
    assert jmem(repo, "init", "--agent", "api", "--no-claude", env=env).returncode == 0
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-q", "-m", "set up", env=env)
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(wt), "-b", "feature", env=env)
    (wt / ".claude/agent-memory/api/MEMORY.md").write_text("# hand edit\n")
    git(wt, "add", "-A", env=env)
    refused = git(wt, "commit", "-q", "-m", "memory by hand", env=env, check=False)
    assert refused.returncode != 0 and "jmem rescue" in refused.stderr, refused.stderr
    (repo / "code.py").write_text("x = 1\n")
    git(repo, "add", "code.py", env=env)
    git(repo, "commit", "-q", "-m", "code", env=env)


@pytest.mark.parametrize("name", ["API", "Web-Team"])
def test_names_that_differ_only_by_case_cannot_exist(tmp_path: Path, name: str) -> None:
    """Two agents `API` and `api` would share one folder on a case-insensitive file
    system; names are lower-case, and every way to make one says so and which to use."""
    repo = make_repo(tmp_path / "repo")
    init = jmem(repo, "init", "--agent", name, "--no-claude")
    assert init.returncode != 0
    assert f"use {name.lower()!r}" in init.stderr and "case-insensitive" in init.stderr
    assert jmem(repo, "init", "--agent", "api", "--no-claude").returncode == 0
    for args in (["--agent", name, "--topic", "t"], ["--agent", "api", "--topic", name]):
        proc = jmem(repo, "write", *args, "--title", "A lesson")
        assert proc.returncode != 0 and f"use {name.lower()!r}" in proc.stderr + proc.stdout
    folder = repo / ".claude/agent-memory" / name
    folder.mkdir(parents=True)
    (folder / "notes.md").write_text("- the build runs with make\n")
    check = jmem(repo, "check")
    assert f"git mv .claude/agent-memory/{name} .claude/agent-memory/{name.lower()}" in \
        check.stderr, check.stderr
    assert json.loads(jmem(repo, "check", "--json").stdout)["elsewhere"][0]["paths"] == [
        f".claude/agent-memory/{name}/notes.md"]
