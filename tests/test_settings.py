"""Config: precedence flags > JMEM_* > file > defaults; empty means unset; loud errors."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from helpers import jmem, journal_files, make_repo

from journal_mem.errors import ConfigError
from journal_mem.schema import load, render_file, validate
from journal_mem.settings import CONFIG_FILE, DEFAULTS, Settings


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
        ("[budget]\nbogus = 2\n", {}, "config: budget.bogus: unknown setting"),
        # a list would fill the section's settings in order: 200 lines, 30000 bytes
        ("budget = [200, 30000]\n", {}, "config: budget: must be a table of settings"),
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
                    "guard": {}, "hooks": {}, "loop": {}, "consolidate": {}}
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
        "import sys; from journal_mem.schema import load;"
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
    from journal_mem.settings import Settings

    write_config(tmp_path, "[hooks]\nguard = false\n")
    view = Settings(str(tmp_path))
    assert (view.switch("hooks.guard"), view.switch("hooks.wake")) == (False, True)
    monkeypatch.setenv("JMEM_HOOKS_WAKE", "OFF")
    assert Settings(str(tmp_path)).switch("hooks.wake") is False
    monkeypatch.setenv("JMEM_HOOKS_WAKE", "maybe")
    with pytest.raises(ConfigError, match=r"hooks\.wake \(from JMEM_HOOKS_WAKE\): 'maybe' is "
                                          "not true or false"):
        Settings(str(tmp_path)).switch("hooks.wake")


def test_settings_view_precedence_and_empty_values(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The view the hooks read gives the same answers as the validated Config."""
    from journal_mem.settings import Settings

    write_config(tmp_path, "memory_root = 'mem/'\n[distill]\ncommit = false\nthreshold = 4\n")
    monkeypatch.setenv("JMEM_DISTILL_THRESHOLD", "6")
    monkeypatch.setenv("JMEM_DISTILL_COMMIT", "")  # empty: unset, the file's value stands
    view = Settings(str(tmp_path))
    assert (view.memory_root, view.whole("distill.threshold"), view.switch("distill.commit")) \
        == ("mem", 6, False)
    assert view.source("distill.threshold") == "JMEM_DISTILL_THRESHOLD"
    flagged = Settings(str(tmp_path), {"distill.commit": True, "distill.threshold": ""})
    assert flagged.switch("distill.commit") is True  # flags beat the file
    assert flagged.whole("distill.threshold") == 6  # an empty flag is unset
    cfg = load(str(tmp_path), {"distill.commit": True})
    assert (cfg.distill.commit, cfg.distill.threshold) == (True, 6)
    monkeypatch.setenv("JMEM_BUDGET_ENTRY_BYTES", "lots")
    with pytest.raises(ConfigError, match=r"budget\.entry_bytes \(from JMEM_BUDGET_ENTRY_BYTES\): "
                                          "'lots' is not a whole number"):
        Settings(str(tmp_path)).whole("budget.entry_bytes")


def test_a_typo_in_jmem_disable_is_an_error_not_on(tmp_path: Path) -> None:
    """Every path reads JMEM_DISABLE the same way; a typo used to mean "not disabled"."""
    from helpers import base_env

    main = make_repo(tmp_path / "r")
    env = base_env(JMEM_DISABLE="ture")
    proc = jmem(main, "guard", env=env)
    assert proc.returncode == 1
    assert "JMEM_DISABLE: 'ture' is not true or false" in proc.stderr
    proc = jmem(main, "write", "--agent", "main", "--topic", "t", "--title", "L", env=env)
    assert proc.returncode == 0  # JMEM_DISABLE only switches the hooks off
    proc = jmem(main, "distill", "--if-due", "--background", env=env)
    assert proc.returncode == 1, proc.stdout
    assert "JMEM_DISABLE: 'ture' is not true or false" in proc.stderr


def test_a_typo_in_distill_on_commit_stops_the_background_distill(tmp_path: Path) -> None:
    """The post-commit path had its own list of false words: a typo there meant "on"."""
    from helpers import base_env

    main = make_repo(tmp_path / "r")
    write_config(main, "[hooks]\ndistill_on_commit = 'flase'\n")
    proc = jmem(main, "distill", "--if-due", "--background", env=base_env())
    assert proc.returncode == 1, proc.stdout
    assert "hooks.distill_on_commit (from .claude/journal-mem.toml): 'flase' is not true or " \
        "false" in proc.stderr
    assert "started in the background" not in proc.stdout
    write_config(main, "[hooks]\ndistill_on_commit = 'off'\n")
    proc = jmem(main, "distill", "--if-due", "--background", env=base_env())
    assert proc.returncode == 0 and "distill_on_commit is false" in proc.stdout


def test_no_commit_is_the_distill_commit_setting_for_one_run(tmp_path: Path) -> None:
    """`--no-commit` enters through the flags layer: it beats JMEM_DISTILL_COMMIT=true."""
    from helpers import base_env, git

    main = make_repo(tmp_path / "r")
    assert jmem(main, "init", "--agent", "api", "--no-git-hooks", "--no-claude").returncode == 0
    git(main, "add", "-A")
    git(main, "commit", "-qm", "init")
    assert jmem(main, "write", "--agent", "api", "--topic", "t", "--title", "A").returncode == 0
    head = git(main, "rev-parse", "HEAD").stdout
    proc = jmem(main, "distill", "--no-commit", env=base_env(JMEM_DISTILL_COMMIT="true"))
    assert proc.returncode == 0, proc.stderr
    assert git(main, "rev-parse", "HEAD").stdout == head



@pytest.mark.parametrize("text", ["[hooks]\nguard = false\n", "hooks.guard = false\n",
                                  '[hooks]\n"guard" = false\n', "hooks = { guard = false }\n",
                                  "[hooks]\nguard=false # off for now\n"])
def test_every_toml_spelling_of_a_setting_is_read(tmp_path: Path, text: str) -> None:
    """The light view skips parsing when no line assigns the key: a dotted, quoted or
    inline-table assignment is one too (`hooks.guard = false` was once ignored)."""
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "journal-mem.toml").write_text(text)
    assert Settings(str(tmp_path)).switch("hooks.guard") is False


CONFIG_TEXT = ('agents = ["api", "web"]\nratio = 0.5\nbig = 12345678901234567890\n'
               '[hooks]\nwake = false\n[distill]\nbranch = "main"\nthreshold = 7\n')


def test_the_file_s_parse_is_kept_and_read_back_while_it_is_unchanged(tmp_path: Path) -> None:
    write_config(tmp_path, CONFIG_TEXT)
    cache = tmp_path / "cache"
    first = Settings(str(tmp_path), cache_dir=str(cache)).merged()[0]
    assert (cache / "config-parsed.marshal").is_file()
    again = Settings(str(tmp_path), cache_dir=str(cache)).merged()[0]
    assert again == first == Settings(str(tmp_path)).merged()[0]
    assert again["big"] == 12345678901234567890 and again["hooks"]["wake"] is False
    write_config(tmp_path, CONFIG_TEXT.replace("threshold = 7", "threshold = 8"))
    changed = Settings(str(tmp_path), cache_dir=str(cache))
    assert changed.get("distill.threshold") == 8  # other bytes: parsed again
    (cache / "config-parsed.marshal").write_bytes(b"\x00damaged")
    assert Settings(str(tmp_path), cache_dir=str(cache)).get("distill.threshold") == 8
    write_config(tmp_path, 'agents = ["api"]\nwhen = 2026-01-01\n')  # a date: never kept
    assert Settings(str(tmp_path), cache_dir=str(cache)).names("agents") == ["api"]
    assert Settings(str(tmp_path), cache_dir=str(cache)).names("agents") == ["api"]
    write_config(tmp_path, "agents = [\n")  # broken, with a good parse still kept
    with pytest.raises(ConfigError, match="not valid TOML"):
        Settings(str(tmp_path), cache_dir=str(cache)).get("agents")


def test_a_hook_reads_a_kept_parse_without_tomllib(tmp_path: Path) -> None:
    import subprocess
    import sys

    from helpers import REPO_ROOT

    repo = make_repo(tmp_path / "r")
    write_config(repo, CONFIG_TEXT)
    code = ("import sys; from journal_mem.repo import light_context;"
            f"print(light_context({str(repo)!r}).agents, 'tomllib' in sys.modules)")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, cwd=REPO_ROOT).stdout.split() for _ in range(2)]
    assert runs == [["['api',", "'web']", "True"], ["['api',", "'web']", "False"]]
