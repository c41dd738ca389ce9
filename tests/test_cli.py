"""The program as a user meets it: help, version, usage errors, the demo."""

from __future__ import annotations

import ast
import json
import os
import runpy
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers import REPO_ROOT, base_env, jmem


def test_help_lists_commands(tmp_path: Path) -> None:
    proc = jmem(tmp_path, "--help")
    assert proc.returncode == 0
    for command in ("init", "write", "demo"):
        assert f"  {command}" in proc.stdout
    assert "Exit codes" in proc.stdout


def test_every_command_has_help(tmp_path: Path) -> None:
    from journal_mem.cli import cli

    for name in cli.list_commands(None):  # type: ignore[arg-type]
        proc = jmem(tmp_path, name, "--help")
        assert proc.returncode == 0, (name, proc.stderr)
        assert "Usage: jmem " + name in proc.stdout


def test_usage_error_exit_2(tmp_path: Path) -> None:
    proc = jmem(tmp_path, "write", "--no-such-option")
    assert proc.returncode == 2 and "No such option" in proc.stderr
    assert jmem(tmp_path, "no-such-command").returncode == 2


def test_dash_c_runs_elsewhere(repo: Path, tmp_path: Path) -> None:
    proc = jmem(tmp_path, "-C", str(repo), "write", "--agent", "api", "--topic", "t",
                "--title", "Via -C")
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).is_relative_to(repo.resolve())


def test_both_commands_are_declared_in_setup_py() -> None:
    """`journal-mem` is a console script; `jmem`, which every hook runs, is a file installed
    as it is on Linux and macOS (an installer's console script imports `re`, ~6 ms a start)
    and a console script on Windows, whose shells run no such file."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert project["dynamic"] == ["scripts"] and "scripts" not in project
    setup = runpy.run_path(str(REPO_ROOT / "setup.py"), run_name="setup_under_test")
    main = "journal_mem.main:main"
    assert setup["commands"](windows=False) == {
        "entry_points": {"console_scripts": [f"journal-mem = {main}"]}, "scripts": [LAUNCHER]}
    assert setup["commands"](windows=True) == {
        "entry_points": {"console_scripts": [f"jmem = {main}", f"journal-mem = {main}"]}}
    text = (REPO_ROOT / LAUNCHER).read_text()
    assert text.startswith("#!python\n")  # an installer makes it the install's interpreter
    imports = sorted(alias.name if isinstance(node, ast.Import) else f"{node.module}.{alias.name}"
                     for node in ast.parse(text).body
                     if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names)
    assert imports == ["journal_mem.main.main", "sys"]


LAUNCHER = "journal_mem/scripts/jmem"


def test_the_installed_jmem_starts_without_re(tmp_path: Path) -> None:
    """The `jmem` installed beside this interpreter (the README's install puts it there)
    is the launcher: a hook it starts loads neither `re` nor `enum` beyond what the
    interpreter's own start loads."""
    if os.name == "nt":
        pytest.skip("Windows runs jmem as a console script (setup.py)")
    script = Path(sys.executable).parent / "jmem"
    if not script.is_file():
        pytest.skip(f"no jmem installed beside {sys.executable}")
    assert script.read_text().splitlines()[1:] == \
        (REPO_ROOT / LAUNCHER).read_text().splitlines()[1:]

    def modules(argv: list[str], stdin: bytes) -> set[str]:
        out = tmp_path / "modules.txt"
        out.unlink(missing_ok=True)
        env = base_env(PYTHONPATH=str(REPO_ROOT / "bench" / "floorhook"),
                       BENCH_FLOOR_OUT=str(out))
        subprocess.run(argv, cwd=tmp_path, env=env, input=stdin, capture_output=True,
                       check=True)
        return set(out.read_text().split())

    payload = json.dumps({"session_id": "s", "cwd": str(tmp_path), "prompt": "go",
                          "hook_event_name": "UserPromptSubmit"}).encode()
    hook = modules([str(script), "wake", "--hook", "claude"], payload)
    bare = modules([sys.executable, "-c", "pass"], b"")
    assert "journal_mem.main" in hook
    assert not (hook - bare) & {"re", "enum", "json"}, sorted(hook - bare)


def test_demo_tells_the_story(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "journal_mem", "demo"], cwd=tmp_path,
                          env=base_env(), capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "created in the MAIN checkout's" in proc.stdout and "journal (yes)" in proc.stdout
    assert "not in the worktree (NO)" in proc.stdout
    assert "outbox" in proc.stdout
    assert "jmem: agent: '../x' is not a valid name" in proc.stdout
    root = proc.stdout.splitlines()[0].removeprefix("journal-mem demo in ")
    assert root.startswith("/") and not Path(root).exists()


def test_each_command_is_in_the_module_the_group_loads_it_from(tmp_path: Path) -> None:
    """`base.COMMANDS` names each command's module: the module registers exactly those
    commands (imported one by one in a fresh interpreter)."""
    code = ("import importlib, json\n"
            "from journal_mem.cli.base import COMMANDS, cli\n"
            "out = {}\n"
            "for module in sorted(set(COMMANDS.values())):\n"
            "    before = set(cli.commands)\n"
            "    importlib.import_module(f'journal_mem.cli.{module}')\n"
            "    out[module] = sorted(set(cli.commands) - before)\n"
            "print(json.dumps([out, COMMANDS]))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, check=True)
    registered, commands = json.loads(proc.stdout)
    assert registered == {m: sorted(c for c, n in commands.items() if n == m)
                          for m in set(commands.values())}


def test_a_command_loads_only_its_own_module(tmp_path: Path) -> None:
    code = ("import sys\nfrom journal_mem.main import main\nmain(['status', '--help'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('journal_mem.cli.')))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, check=True)
    assert proc.stdout.strip().splitlines()[-1] == "['journal_mem.cli.base', " \
        "'journal_mem.cli.status']", proc.stdout
