"""Memory for any agent loop: `run_hook(name, context) -> HookResult`, which never raises.

An orchestrator calls memory at five points of its loop (`pre-work`,
`pre-spawn`, `post-run`, `fail-diag`, `post-retro`; see
docs/DESIGN.md, "Agent loop"). The rule is that memory never stops the loop: every call returns a
`HookResult`, and a failure is loud instead — in `errors`, on stderr, and in
the hook log (`<git-common-dir>/journal-mem/logs/hooks.jsonl`), so that a run
whose writes all fail can never read as success.

Switches: `JMEM_DISABLE=1` or `[hooks] enabled = false` turn every point off;
`[hooks] pre_work = true` (or `JMEM_HOOKS_PRE_WORK=1`) turns one on — they are
off by default. An empty value is unset; a value that is not a boolean is an
error result, never "off".

    from journal_mem.api import run_hook
    result = run_hook("pre-spawn", {"goal": "fix the flaky API test",
                                    "worker_dir": "/work/wt-1"})
    if result.errors: ...
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
import os
import sys
import time

from journal_mem.boundary import crash_log
from journal_mem.errors import JournalMemError
from journal_mem.gitops import gitcore
from journal_mem.loop import hooklog
from journal_mem.repo import context_of
from journal_mem.settings import as_bool, env_value

TYPE_CHECKING = False  # `typing` and `dataclasses` are not on the loop's hot path
if TYPE_CHECKING:
    from typing import Any

# Each point, and the module its function (the point's name in snake case) lives in:
# the asking points do not import the intake that the recording ones need.
POINTS = {"pre-work": "journal_mem.loop.asking", "pre-spawn": "journal_mem.loop.asking",
          "post-run": "journal_mem.loop.points", "fail-diag": "journal_mem.loop.points",
          "post-retro": "journal_mem.loop.points"}


class HookResult:
    """What one loop point did. `ran` and `skipped` are never both true.

    A plain class, not a dataclass: `jmem hook` answers on the loop's hot path, and
    `dataclasses` (with the `inspect` it imports) cost it about 8 ms a call."""

    FIELDS = ("point", "ran", "skipped", "reason", "written", "found", "errors",
              "elapsed_ms", "details")

    def __init__(self, point: str, ran: bool = False, skipped: bool = False, reason: str = "",
                 written: list[str] | None = None, found: list[dict[str, Any]] | None = None,
                 errors: list[str] | None = None, elapsed_ms: float = 0.0,
                 details: dict[str, Any] | None = None) -> None:
        self.point = point
        self.ran = ran
        self.skipped = skipped
        self.reason = reason
        self.written: list[str] = written if written is not None else []  # lessons' keys
        self.found: list[dict[str, Any]] = found if found is not None else []  # best first
        self.errors: list[str] = errors if errors is not None else []
        self.elapsed_ms = elapsed_ms
        self.details: dict[str, Any] = details if details is not None else {}

    def __eq__(self, other: object) -> bool:
        return type(other) is HookResult and self.as_json() == other.as_json()

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS)
        return f"HookResult({shown})"

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_json(self) -> dict[str, Any]:
        """Its fields by name, every list, tuple and dict in them copied (as
        `dataclasses.asdict` copies them)."""
        return {name: _copied(getattr(self, name)) for name in self.FIELDS}


def _copied(value: Any) -> Any:
    """`value` with every list, tuple and dict in it copied, all the way down."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_copied(v) for v in value)
    return value


def run_hook(name: str, context: dict[str, Any] | None = None, *,
             cwd: str | None = None) -> HookResult:
    """Run one loop point. Never raises: problems are in `HookResult.errors` and the log."""
    start = time.perf_counter()
    result = HookResult(point=name)
    where: list[str] = []  # the state dir, once the repository is found
    try:
        _run(name, context, cwd, result, where)
    except Exception as exc:  # the one promise of this API: the loop goes on
        result.ran = False
        result.errors.append(_describe(exc))
    result.elapsed_ms = round((time.perf_counter() - start) * 1000, 2)
    _log(result, where[0] if where else None)
    return result


def _run(name: str, context: dict[str, Any] | None, cwd: str | None,
         result: HookResult, where: list[str]) -> None:
    """The body of `run_hook`; appends the state dir to `where` as soon as it is known,
    so that even a broken setting is logged."""
    if context is None:
        context = {}
    if not isinstance(context, dict):
        result.errors.append("context: must be a JSON object")
        return
    repo = gitcore.locate(str(cwd or context.get("cwd") or os.getcwd()))
    where.append(repo.state_dir)
    if name not in POINTS:
        result.errors.append(f"unknown hook point {name!r}; one of: {', '.join(POINTS)}")
        return
    disable = env_value("JMEM_DISABLE")
    if disable is not None and as_bool(disable, "JMEM_DISABLE"):
        _skip(result, "JMEM_DISABLE is set")
        return
    ctx = context_of(repo)
    switch = name.replace("-", "_")
    # The two switches through the settings view, strictly as the config model reads
    # them: a point that reads no other setting (pre-work on a fresh index) never loads
    # the model (~12 ms of imports); one that does (pre-spawn) validates it then.
    if not ctx.settings.switch("hooks.enabled"):
        _skip(result, "hooks.enabled = false")
    elif not ctx.settings.switch(f"hooks.{switch}"):
        _skip(result, f"hooks.{switch} is off (JMEM_HOOKS_{switch.upper()}=1 turns it on)")
    else:
        runner = getattr(importlib.import_module(POINTS[name]), switch)
        done = runner(ctx, context)
        result.found, result.written, result.errors = done.found, done.written, done.errors
        result.details = done.details
        if done.skipped is not None:
            _skip(result, done.skipped)
        else:
            result.ran = True


def _skip(result: HookResult, reason: str) -> None:
    result.skipped, result.reason = True, reason


def _describe(exc: Exception) -> str:
    if isinstance(exc, JournalMemError):
        return str(exc)

    try:
        where = f"details: {crash_log(exc)}"
    except Exception as log_exc:  # a full disk must not turn into a raise
        where = f"no crash log: {log_exc}"
    return f"unexpected {type(exc).__name__}: {exc} ({where})"


def _log(result: HookResult, state_dir: str | None) -> None:
    """One line in the hook log; errors also go to stderr. Logging never raises."""
    text = json.dumps(result.as_json(), ensure_ascii=False, default=str)
    record = {
        "time": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "point": result.point, "ran": result.ran, "skipped": result.skipped,
        "reason": result.reason, "found": len(result.found), "written": len(result.written),
        "errors": len(result.errors), "first_error": result.errors[0] if result.errors else "",
        "elapsed_ms": result.elapsed_ms, "tail": text[-400:],
    }
    for problem in result.errors:
        print(f"journal-mem hook {result.point}: error: {problem}", file=sys.stderr)
    if state_dir is None:
        return

    try:
        hooklog.append(state_dir, record)
    except OSError as exc:
        print(f"journal-mem hook {result.point}: cannot write the hook log: {exc}",
              file=sys.stderr)


def fast_main(args: list[str]) -> int | None:
    """`jmem hook NAME` before click loads; None for --help (click prints it)."""
    return None if {"-h", "--help"} & set(args) else cli_main(args)


def cli_main(args: list[str]) -> int:
    """`jmem hook NAME`: the JSON context on stdin, one JSON result on stdout, exit 0."""
    name = args[0] if args else ""
    stdin = sys.stdin  # None: started without one
    raw = stdin.buffer.read() if stdin is not None and not stdin.isatty() else b""
    context: Any = {}
    problem = ""
    if raw.strip():
        try:
            context = json.loads(raw)
        except ValueError as exc:
            problem = f"stdin: not JSON ({exc})"
    if problem or len(args) != 1:
        result = HookResult(point=name, errors=[problem or "usage: jmem hook NAME < context.json"])
        _log(result, None)
    else:
        result = run_hook(name, context)
    print(json.dumps(result.as_json(), ensure_ascii=False, default=str))
    return 0
