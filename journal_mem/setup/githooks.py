"""Install and uninstall journal-mem's git hook shims (docs/DESIGN.md, "Git hooks").

Shims go into the folder git really uses (`git rev-parse --git-path hooks`,
shared by every linked worktree). Each carries `MARKER`, so uninstall removes
only ours; a foreign hook is kept as `<name>.legacy`, runs first, and its
failure still blocks. The shims name the interpreter that ran `init` by
absolute path (a PATH lookup or a pyenv shim costs ~100 ms per commit). The
shim texts are templates in `journal_mem/resources/`, read only by `init`.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass, field

from journal_mem.errors import ConfigError
from journal_mem.fsutil import replace_atomic
from journal_mem.gitops import gitcore
from journal_mem.resources import fill
from journal_mem.settings import CONFIG_FILE, DEFAULTS

MARKER = "# journal-mem-hook v1"
GUARD_HOOKS = ("pre-commit", "pre-merge-commit")
# after a commit, a merge (`git pull`) or a rebase (`git pull --rebase`): distill if due
DISTILL_HOOKS = ("post-commit", "post-merge", "post-rewrite")
HOOKS = (*GUARD_HOOKS, *DISTILL_HOOKS)
# The shim template of each hook, in journal_mem/resources/ (a new hook needs one here).
TEMPLATES = {"pre-commit": "hook-guard.sh", "pre-merge-commit": "hook-guard.sh",
             **dict.fromkeys(DISTILL_HOOKS, "hook-post-commit.sh")}
LEGACY = ".legacy"


@dataclass
class HookReport:
    """What install/uninstall did. `refused` set: nothing was written (exit 1)."""

    done: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def python() -> str:
    """The absolute path of this interpreter (a venv's python stays the venv's)."""
    return os.path.abspath(sys.executable)


def command(name: str, exe: str | None = None) -> str:
    """The command line a hook runner must run for hook `name`."""
    exe = shlex.quote(exe or python())
    if name in DISTILL_HOOKS:
        # post-commit cannot block and must hand back to git at once: the distill
        # runs detached, its output dropped (it keeps its own log).
        return f"{exe} -m journal_mem distill --if-due --background </dev/null >/dev/null 2>&1 &"
    return f"{exe} -m journal_mem guard --hook {name}"


def shim(name: str, exe: str | None = None) -> str:
    """The text of hook `name`, from its template in `journal_mem/resources/` (`exe`:
    the interpreter it runs, default this one)."""

    exe = exe or python()
    values = {"marker": MARKER, "legacy": name + LEGACY, "python": exe,
              "python_quoted": shlex.quote(exe), "command": command(name, exe)}
    if TEMPLATES[name] == "hook-guard.sh":
        values.update(config=shlex.quote(CONFIG_FILE), memory_re=memory_pattern())
    return fill(TEMPLATES[name], **values)


def memory_pattern(root: str = str(DEFAULTS["memory_root"])) -> str:
    """The extended regular expression (grep -E) of a staged path the guard must judge,
    for the default memory root: what `guard.fast.might_be_memory` says yes to, and
    a name git quoted (an unusual character: judged rather than guessed)."""

    def ere(text: str) -> str:
        return re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", text)

    parts = root.split("/")
    above = [ere("/".join(parts[:n])) for n in range(1, len(parts))]
    return "|".join(['^"', *(f"^{p}$" for p in above), f"^{ere(root)}(/|$)",
                     f"^{ere(CONFIG_FILE)}$", "(^|/)(MEMORY\\.md|distill-state\\.json)$",
                     "(^|/)(journal|topics)/"])


def is_ours(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return MARKER.encode() in fh.read(4096)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return False


def hooks_dir(root: str) -> str:
    """The hooks folder git uses for the checkout at `root`, absolute."""
    out = gitcore.run(["rev-parse", "--path-format=absolute", "--git-path", "hooks"], root,
                       clean=True).text().strip()
    return os.path.join(root, out)


def hooks_path_setting(root: str) -> str:
    """`core.hooksPath` as configured ("" when unset)."""
    res = gitcore.run(["config", "core.hooksPath"], root, clean=True, check=False)
    return res.text().strip() if res.ok else ""


def _write(path: str, text: str) -> None:
    """Atomically and durably write an executable hook (a half-written one would break
    every commit)."""
    replace_atomic(path, text, durable=True, mode=0o755)


def runner_lines() -> list[str]:
    return [f"  {name}: {command(name)}" for name in HOOKS]


def install(root: str, hooks_path_ok: bool = False) -> HookReport:
    """Install the shims for the checkout at `root`; a second run changes nothing."""
    report = HookReport()
    setting = hooks_path_setting(root)
    if setting:
        if not os.path.isabs(os.path.expanduser(setting)):
            report.notes.append(
                f"core.hooksPath is relative ({setting!r}): git resolves it against each "
                "worktree's own top, so a linked worktree without that folder runs no hook "
                "at all; set it to an absolute path")
        if not hooks_path_ok:
            report.refused += [
                f"core.hooksPath is set ({setting!r}): another tool manages the hooks, so "
                "journal-mem did not write there. Add these lines to your hook runner:",
                *runner_lines(),
                "or run `jmem init --hooks-path-ok` to install the shims into that folder.",
            ]
            return report
    folder = hooks_dir(root)
    blocked = [n for n in HOOKS if _foreign(os.path.join(folder, n))
               and os.path.lexists(os.path.join(folder, n) + LEGACY)]
    if blocked:
        raise ConfigError(
            "\n".join(f"{os.path.join(folder, n)}: a foreign hook and {n}{LEGACY} both exist; "
                      "journal-mem will not overwrite either" for n in blocked),
            hint="merge them into one hook by hand, then run `jmem init` again")
    os.makedirs(folder, exist_ok=True)
    for name in HOOKS:
        _install_one(folder, name, report)
    return report


def _foreign(path: str) -> bool:
    return os.path.lexists(path) and not is_ours(path)


def _install_one(folder: str, name: str, report: HookReport) -> None:
    path = os.path.join(folder, name)
    text = shim(name)
    if is_ours(path):
        with open(path, encoding="utf-8") as fh:
            if fh.read() == text:
                return
        _write(path, text)
        report.done.append(f"updated the {name} hook ({path})")
        return
    if os.path.lexists(path):
        os.rename(path, path + LEGACY)
        report.done.append(f"kept your {name} hook as {name}{LEGACY}; it still runs first")
    _write(path, text)
    report.done.append(f"installed the {name} hook ({path})")


def uninstall(root: str) -> HookReport:
    """Remove our shims and put any `.legacy` hook back; foreign hooks stay untouched."""
    report = HookReport()
    folder = hooks_dir(root)
    for name in HOOKS:
        path = os.path.join(folder, name)
        if not is_ours(path):
            continue
        os.unlink(path)
        report.done.append(f"removed the {name} hook ({path})")
        if os.path.lexists(path + LEGACY):
            os.rename(path + LEGACY, path)
            report.done.append(f"restored your {name} hook from {name}{LEGACY}")
    return report
