"""Config: precedence flags > JMEM_* > file > defaults; empty means unset; loud errors."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from helpers import jmem, journal_files, make_repo

from journal_mem.config.schema import load, render_file, validate
from journal_mem.config.settings import CONFIG_FILE, DEFAULTS
from journal_mem.errors import ConfigError


def write_config(root: Path, text: str) -> None:
    path = root / CONFIG_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_defaults_are_the_design_defaults(tmp_path: Path) -> None:
    cfg = load(str(tmp_path))
    assert cfg.as_dict() == DEFAULTS
    assert (cfg.budget.memory_lines, cfg.budget.memory_bytes, cfg.budget.line_chars) == (
        200, 25000, 150)
    assert cfg.distill.threshold == 10 and cfg.default_agent == "main"


def test_precedence_flags_over_env_over_file(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(tmp_path, "default_agent = 'filed'\n[distill]\nthreshold = 3\nmax_age_hours = 5\n")
    cfg = load(str(tmp_path))
    assert (cfg.default_agent, cfg.distill.threshold, cfg.distill.max_age_hours) == ("filed", 3, 5)
    monkeypatch.setenv("JMEM_DEFAULT_AGENT", "envy")
    monkeypatch.setenv("JMEM_DISTILL_THRESHOLD", "7")
    cfg = load(str(tmp_path))
    assert (cfg.default_agent, cfg.distill.threshold, cfg.distill.max_age_hours) == ("envy", 7, 5)
    cfg = load(str(tmp_path), {"default_agent": "flagged", "distill.threshold": 9})
    assert (cfg.default_agent, cfg.distill.threshold) == ("flagged", 9)


def test_empty_environment_value_means_unset(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """`X=` must not become "": that once made every memory write fail while logs said ok."""
    write_config(tmp_path, "default_agent = 'filed'\n")
    monkeypatch.setenv("JMEM_DEFAULT_AGENT", "")
    monkeypatch.setenv("JMEM_DISTILL_THRESHOLD", "  ")
    monkeypatch.setenv("JMEM_MEMORY_ROOT", "")
    cfg = load(str(tmp_path))
    assert cfg.default_agent == "filed"
    assert cfg.distill.threshold == 10
    assert cfg.memory_root == ".claude/agent-memory"


def test_empty_jmem_agent_falls_back_to_default_agent(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "r")
    env_agent_empty = {"JMEM_AGENT": "", "JMEM_DEFAULT_AGENT": ""}
    from helpers import base_env

    proc = jmem(main, "write", "--topic", "t", "--title", "Lesson", env=base_env(**env_agent_empty))
    assert proc.returncode == 0, proc.stderr
    assert len(journal_files(main, "main")) == 1


def test_empty_file_value_means_unset(tmp_path: Path) -> None:
    write_config(tmp_path, "default_agent = ''\n[distill]\nbranch = ''\n")
    cfg = load(str(tmp_path))
    assert cfg.default_agent == "main" and cfg.distill.branch == ""


@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        ("bogus = 1\n", {}, "config: bogus: unknown setting (from .claude/journal-mem.toml)"),
        ("[budget]\nmemory_lines = 0\n", {}, "config: budget.memory_lines: Input should be"),
        ("", {"JMEM_DISTILL_THRESHOLD": "many"},
         "config: distill.threshold: Input should be a valid integer"),
        ("", {"JMEM_DEFAULT_AGENT": "Not Valid"},
         "config: default_agent: must match ^[a-z0-9][a-z0-9-]{0,63}$"),
        ("memory_root = '../outside'\n", {}, "config: memory_root: must be a relative path"),
        ("[distill]\nstale_refs = 'keep'\n", {}, "config: distill.stale_refs: Input should be"),
    ],
)
def test_invalid_config_is_loud(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str,
                                env: dict[str, str], expected: str) -> None:
    write_config(tmp_path, text)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        load(str(tmp_path))
    assert info.value.message.startswith(expected), info.value.message
    if env:
        assert f"(from {next(iter(env))})" in info.value.message


def test_broken_toml_is_reported(tmp_path: Path) -> None:
    write_config(tmp_path, "default_agent = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load(str(tmp_path))


def test_rendered_file_holds_every_default_commented(tmp_path: Path) -> None:
    text = render_file("trunk", ["api"])
    data = tomllib.loads(text)
    assert data == {"agents": ["api"], "budget": {}, "distill": {"branch": "trunk"},
                    "guard": {}, "hooks": {}, "loop": {}}
    for section, values in DEFAULTS.items():
        for key in values if isinstance(values, dict) else [section]:
            assert f"# {key} = " in text or f"{key} = " in text
    write_config(tmp_path, text)
    cfg = load(str(tmp_path))
    assert cfg == validate({"agents": ["api"], "distill": {"branch": "trunk"}}, {})


def test_snapshot_is_reused_and_invalidated(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "state"
    write_config(tmp_path, "[distill]\nthreshold = 4\n")
    assert load(str(tmp_path), state_dir=str(state)).distill.threshold == 4
    assert (state / "cache" / "config-snapshot.json").is_file()
    assert load(str(tmp_path), state_dir=str(state)).distill.threshold == 4
    write_config(tmp_path, "[distill]\nthreshold = 6\n")
    assert load(str(tmp_path), state_dir=str(state)).distill.threshold == 6
    monkeypatch.setenv("JMEM_DISTILL_THRESHOLD", "8")
    assert load(str(tmp_path), state_dir=str(state)).distill.threshold == 8
    monkeypatch.setenv("JMEM_DISTILL_THRESHOLD", "zero")
    with pytest.raises(ConfigError):
        load(str(tmp_path), state_dir=str(state))


def test_snapshot_needs_no_pydantic(tmp_path: Path) -> None:
    import subprocess
    import sys

    from helpers import REPO_ROOT

    code = (
        "import sys; from journal_mem.config.schema import load;"
        f"load({str(tmp_path)!r}, state_dir={str(tmp_path / 's')!r});"
        f"c = load({str(tmp_path)!r}, state_dir={str(tmp_path / 's')!r});"
        "print(c.budget.memory_lines, 'pydantic' in sys.modules)"
    )
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, cwd=REPO_ROOT).stdout.split()
    assert first == ["200", "True"]
    code = code.replace(f"load({str(tmp_path)!r}, state_dir={str(tmp_path / 's')!r});c", "c", 1)
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=REPO_ROOT).stdout.split()
    assert second == ["200", "False"]


def test_hook_switch_typo_is_an_error_not_off(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from journal_mem.config.settings import as_bool, fast_settings

    write_config(tmp_path, "[hooks]\nguard = false\n")
    assert fast_settings(str(tmp_path), "hooks.guard", "hooks.wake") == {
        "hooks.guard": False, "hooks.wake": True}
    monkeypatch.setenv("JMEM_HOOKS_WAKE", "OFF")
    assert as_bool(fast_settings(str(tmp_path), "hooks.wake")["hooks.wake"], "hooks.wake") is False
    monkeypatch.setenv("JMEM_HOOKS_WAKE", "maybe")
    with pytest.raises(ConfigError, match=r"hooks\.wake: 'maybe' is not true or false"):
        as_bool(fast_settings(str(tmp_path), "hooks.wake")["hooks.wake"], "hooks.wake")
