"""The one error boundary in `main.main`: every path, fast ones included."""

from __future__ import annotations

import io
import json
import sys
import tempfile
from pathlib import Path

import pytest

from journal_mem import main as entry
from journal_mem.recall import query
from journal_mem.wake import hooks as claude_hooks
from journal_mem.wake import hooks as hook_packs


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def _logs(folder: Path) -> list[Path]:
    return sorted((folder / "journal-mem-logs").glob("crash-*.log"))


def test_an_unexpected_error_in_the_wake_hook_is_a_warning_naming_its_log(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    def broken(*args: object) -> str:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(hook_packs, "session_start", broken)
    payload = {"cwd": str(repo), "hook_event_name": "SubagentStart", "agent_type": "api"}
    _stdin(monkeypatch, json.dumps(payload).encode())
    assert entry.main(["wake", "--hook", "claude"]) == 0  # the session starts anyway
    out, err = capsys.readouterr()
    message = json.loads(out)["systemMessage"]  # to the user, never the model's context
    [log] = _logs(tmp_path)
    assert message.startswith("journal-mem warning: memory not loaded: RuntimeError: disk on")
    assert str(log) in message and str(log) in err
    assert "disk on fire" in log.read_text() and "Traceback" in log.read_text()


def test_an_unexpected_error_in_the_remind_hook_lets_the_session_end(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    def broken(*args: object) -> str:
        raise KeyError("session")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(claude_hooks, "_target", broken)
    _stdin(monkeypatch, json.dumps({"cwd": str(repo), "session_id": "s"}).encode())
    assert entry.main(["remind", "--hook", "claude", "--agent", "api"]) == 0
    out, err = capsys.readouterr()
    assert out == ""  # no "block" decision
    assert "journal-mem warning: reminder skipped: KeyError" in err
    assert len(_logs(tmp_path)) == 1


def test_an_unexpected_error_on_the_recall_fast_path_is_reported_not_rerun(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The fast path used to swallow every exception and run the whole command again."""
    def broken(*args: object) -> None:
        raise RuntimeError("index reader bug")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.chdir(repo)
    monkeypatch.setattr(query, "lookup", broken)
    assert entry.main(["recall", "retry", "policy"]) == 3
    err = capsys.readouterr().err
    [log] = _logs(tmp_path)
    assert "jmem: unexpected error: RuntimeError: index reader bug" in err
    assert f"the details are in {log}" in err
    assert "jmem recall retry policy" in log.read_text()  # the argv main was given


def test_expected_errors_keep_their_exit_code_on_a_fast_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # not a repository
    assert entry.main(["recall", "anything"]) == 4
    assert capsys.readouterr().err.startswith("jmem: ")
    assert _logs(tmp_path) == []


def test_the_cli_uses_the_argv_it_was_given(repo: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """`distill --background` through click detached `sys.argv`, not the argv passed in."""
    config = repo / ".claude" / "journal-mem.toml"
    config.write_text(config.read_text().replace("# distill_on_commit = true",
                                                 "distill_on_commit = false"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["jmem", "status"])
    # `-CPATH` (one word) is left to click, which then hands over to the detacher
    assert entry.main([f"-C{repo}", "distill", "--if-due", "--background"]) == 0
    out = capsys.readouterr().out
    assert "hooks.distill_on_commit is false" in out
    assert "started in the background" not in out


# --- the end of the process (`main._leave`) ------------------------------------------

_PROGRAM = """
import atexit, sys, threading, time
from journal_mem.main import main
what = sys.argv[1]
if what == "handler":
    atexit.register(lambda: print("exit handler ran", flush=True))
if what == "thread":
    def late() -> None:
        time.sleep(0.3)
        print("thread finished", flush=True)
    threading.Thread(target=late).start()
if sys.stdout is not None:  # None: started without a standard output
    sys.stdout.write("x" * 1_000_003)  # most of it still in the buffer, or not yet read
sys.argv = ["jmem", "hook", "pre-work"]  # its one JSON line is printed, not flushed
code = main()
print("after main", flush=True)  # never reached when the process ended in main
sys.exit(code)
"""


def _program(what: str) -> tuple[int, str]:
    import subprocess

    from helpers import base_env

    env = {k: v for k, v in base_env().items() if k != "PYTHONUNBUFFERED"}  # buffered
    proc = subprocess.run([sys.executable, "-c", _PROGRAM, what], env=env,
                          input="", capture_output=True, text=True)
    return proc.returncode, proc.stdout


def test_run_as_the_program_it_ends_the_process_with_every_byte_written() -> None:
    code, out = _program("plain")
    assert code == 0
    assert out.startswith("x" * 1_000_003 + '{"point": "pre-work"')
    assert out.endswith("}\n")  # its whole JSON line
    assert "after main" not in out  # ended in main: no teardown


@pytest.mark.parametrize("what, said", [("handler", "exit handler ran"),
                                        ("thread", "thread finished")])
def test_it_exits_as_usual_when_something_else_runs_at_exit(what: str, said: str) -> None:
    code, out = _program(what)
    assert code == 0
    assert "after main" in out and said in out
    assert out.startswith("x" * 1_000_003)


def test_called_with_arguments_it_returns(capsys: pytest.CaptureFixture[str]) -> None:
    assert entry.main(["--version"]) == 0  # an embedding program goes on
    assert "version" in capsys.readouterr().out


def test_started_without_a_standard_output_it_still_ends_cleanly(tmp_path: Path) -> None:
    """And finds its repository: with fd 1 closed, git's answers once went nowhere, and
    the hook wrote its log into the work tree (`journal-mem/logs/`), where a commit took
    it."""
    import os
    import subprocess

    from helpers import base_env, make_repo

    repo = make_repo(tmp_path / "r")
    for runs, closed in enumerate(((1,), (0, 1), (0, 1, 2)), 1):
        proc = subprocess.run([sys.executable, "-c", _PROGRAM, "plain"], env=base_env(),
                              cwd=repo, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True,
                              preexec_fn=lambda fds=closed: [os.close(fd) for fd in fds])
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
        assert not (repo / "journal-mem").exists()
        log = repo / ".git" / "journal-mem" / "logs" / "hooks.jsonl"
        assert len(log.read_text().splitlines()) == runs, closed

