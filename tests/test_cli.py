"""The program as a user meets it: help, version, usage errors, the demo."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


def test_both_console_scripts_exist_in_pyproject() -> None:
    text = (REPO_ROOT / "pyproject.toml").read_text()
    assert 'jmem = "journal_mem.main:main"' in text
    assert 'journal-mem = "journal_mem.main:main"' in text


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
