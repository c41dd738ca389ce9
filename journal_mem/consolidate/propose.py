"""`jmem consolidate --propose CMD`: a curator proposes lessons, the distiller judges them.

The plan (`plan.Plan.as_json`) goes to CMD on stdin, run by `/bin/sh -c` in the
main checkout: a model behind any CLI (`claude -p …`) or a team's own script.
It answers on stdout with a JSON list of proposals (or `{"proposals": […]}`,
or Claude Code's `--output-format json` wrapper whose `result` holds one; a
fenced ```json block inside prose is found too). A proposal is a lesson:

    {"item": "duplicates-…", "title": "…", "body": "…", "topic": "…",
     "supersedes": ["k1", "k2"], "retracts": [], "type": "…", "importance": "…",
     "confidence": 0.8, "tags": [], "refs": [], "key": "…"}

Each is judged on its own, and a bad one is refused with why while the others
go on: it must name a plan item and cite only that item's keys (`supersedes`
for what it replaces, `retracts` for what it drops, at least one), its key
must not take over another live fact, and it must pass every check `jmem
write` makes. An accepted one becomes an ordinary journal entry of agent
`curator` whose `source` names the command and the item; its `applies_to`
is every holder of the facts it supersedes (`all` when one of them reached
all), so the merged fact reaches each of them even where the replay's hand
over of holders would not. Nothing is removed without a lesson that says so,
and the distiller stays the only writer of distilled files: the next distill
folds the curator's lessons like any other.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from journal_mem.consolidate.plan import Plan
from journal_mem.errors import InvalidEntry, JournalMemError
from journal_mem.journal.entry import Entry, render
from journal_mem.journal.files import Written
from journal_mem.journal.order import latest_by_key
from journal_mem.journal.reader import read_journal
from journal_mem.journal.similar import normalise_title
from journal_mem.lessons.write import compose, file_entry
from journal_mem.repo import Context

CURATOR = "curator"
SOURCE_CHARS = 200  # of the command, in `source`
FIELDS = frozenset({"item", "title", "body", "topic", "supersedes", "retracts", "type",
                    "importance", "confidence", "tags", "refs", "key", "valid_until"})
_LISTS = ("supersedes", "retracts", "tags", "refs")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)\n```", re.DOTALL)


class ProposerFailed(JournalMemError):
    """The proposer command failed or did not answer with proposals."""


@dataclass
class Judgement:
    """What became of each proposal."""

    written: list[tuple[str, Entry]] = field(default_factory=list)  # (path or "", entry)
    refused: list[str] = field(default_factory=list)

    def lines(self, dry_run: bool) -> list[str]:
        out = []
        for path, entry in self.written:
            cites = ", ".join([*entry.supersedes, *(f"-{k}" for k in entry.retracts)])
            verb = "would write" if dry_run else "wrote"
            out.append(f"{verb} {path or entry.key}: {entry.title} [{entry.key}] "
                       f"(replaces {cites}; for {', '.join(entry.applies_to)})")
            if dry_run:
                out += ["    " + line for line in render(entry).splitlines()]
        if self.written and not dry_run:
            out.append("the next `jmem distill` folds them (`jmem log KEY` shows each merge)")
        if not self.written and not self.refused:
            out.append("the proposer proposed nothing")
        return out

    def as_json(self) -> dict[str, Any]:
        return {"written": [{"path": p, "key": e.key, "title": e.title,
                             "supersedes": list(e.supersedes), "retracts": list(e.retracts),
                             "applies_to": list(e.applies_to), "source": e.source}
                            for p, e in self.written],
                "refused": self.refused}


OUTPUT_LIMIT = 4 * 1024 * 1024  # bytes of a proposer's answer read at most
EXIT_GRACE = 2.0  # seconds to read what a proposer that exited left in its pipes


class _Pipe:
    """A child's output read on a thread, `limit` bytes kept; `over` once it said more."""

    def __init__(self, stream: IO[bytes], limit: int, on_over: Callable[[], None]) -> None:
        self.chunks: list[bytes] = []
        self.size, self.over = 0, False
        self.thread = threading.Thread(target=self._read, args=(stream, limit, on_over),
                                       daemon=True)
        self.thread.start()

    def _read(self, stream: IO[bytes], limit: int, on_over: Callable[[], None]) -> None:
        while chunk := stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536):
            if self.size + len(chunk) > limit:
                self.over = True
                on_over()
                return
            self.chunks.append(chunk)
            self.size += len(chunk)

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", "replace")


def run_proposer(command: str, plan: Plan, cwd: str, timeout: float = 600.0,
                 limit: int = OUTPUT_LIMIT) -> list[Any]:
    """Run `command` with the plan on stdin; its proposals (not yet judged).

    The command is a child that cannot hang jmem: it runs in a process group of its
    own, which is ended when it runs over `timeout` seconds, when it answers more than
    `limit` bytes, and once it has exited (a process it left behind holding its output
    does not keep jmem waiting past `EXIT_GRACE`). Each failure is a ProposerFailed.
    """
    stdin = json.dumps(plan.as_json(), indent=2, ensure_ascii=False).encode("utf-8")
    try:
        proc = subprocess.Popen(["/bin/sh", "-c", command], cwd=cwd, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as exc:
        raise ProposerFailed(f"consolidate: cannot run {command!r}: {exc.strerror}") from exc
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    out = _Pipe(proc.stdout, limit, lambda: _end_group(proc))
    err = _Pipe(proc.stderr, limit, lambda: None)
    feeder = threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True)
    feeder.start()
    try:
        code = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        _end_group(proc)
        proc.wait()
        raise ProposerFailed(
            f"consolidate: {command!r} ran over {timeout:g} s; it and every process it "
            "started were ended; nothing written",
            hint="raise `[consolidate] timeout` in .claude/journal-mem.toml, or run the "
                 "command by hand with the plan on stdin (`jmem consolidate --json | CMD`)"
        ) from None
    for pipe in (out, err):
        pipe.thread.join(EXIT_GRACE)
    _end_group(proc)  # what it left behind, holding its output or not
    if out.over:
        raise ProposerFailed(f"consolidate: {command!r} answered more than {limit} bytes; "
                             "nothing written",
                             hint="a plan's answer is a JSON list of lessons: keep it short")
    if code != 0:
        tail = err.text().strip().splitlines()[-5:]
        raise ProposerFailed(f"consolidate: {command!r} exited {code}; nothing "
                             "written" + "".join(f"\n  {line}" for line in tail),
                             hint="run the command by hand with the plan on stdin "
                                  "(`jmem consolidate --json | CMD`)")
    return parse_answer(out.text(), command)


def _feed(stream: IO[bytes], data: bytes) -> None:
    """Write the plan to the child's stdin; one that stops reading only loses it."""
    try:
        stream.write(data)
        stream.close()
    except OSError:  # (BrokenPipeError: it exited without reading the whole plan)
        pass


def _end_group(proc: subprocess.Popen[bytes]) -> None:
    """End the child's process group (the child and everything it started)."""
    killpg = getattr(os, "killpg", None)
    try:
        if killpg is not None:
            killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - no process groups (Windows): the child alone
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass


def parse_answer(text: str, command: str = "the proposer") -> list[Any]:
    """The list of proposals in a proposer's answer; ProposerFailed when there is none."""
    for candidate in _candidates(text):
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("result"), str):
            return parse_answer(data["result"], command)  # claude -p --output-format json
        if isinstance(data, dict) and isinstance(data.get("proposals"), list):
            return list(data["proposals"])
        if isinstance(data, list):
            return data
    raise ProposerFailed(f"consolidate: {command!r} did not answer with a JSON list of "
                         f"proposals (it said: {text.strip()[:200]!r}); nothing written",
                         hint="answer with [] to propose nothing, or a list of lessons "
                              "(docs/consolidate.md, \"Proposals\")")


def _candidates(text: str) -> list[str]:
    out = [text.strip()]
    out += [m.group(1) for m in _FENCE.finditer(text)]
    start, end = text.find("["), text.rfind("]")
    if 0 <= start < end:
        out.append(text[start:end + 1])
    return out


def judge(ctx: Context, plan: Plan, proposals: list[Any], source: str) -> Judgement:
    """Each proposal as an entry of `curator`, or refused with why; none is written."""
    outcome = Judgement()
    claimed: dict[str, int] = {}  # key -> proposal that already cites it
    for number, proposal in enumerate(proposals, 1):
        try:
            entry = _entry(ctx, plan, proposal, source)
        except InvalidEntry as exc:
            outcome.refused.append(f"proposal {number} ({_item_of(proposal)}): "
                                   + "; ".join(exc.problems))
            continue
        cited = [*entry.supersedes, *entry.retracts]
        twice = [k for k in cited if k in claimed]
        if twice:
            outcome.refused.append(
                f"proposal {number} ({_item_of(proposal)}): cites {', '.join(twice)}, which "
                f"proposal {claimed[twice[0]]} already settles")
            continue
        claimed.update(dict.fromkeys(cited, number))
        outcome.written.append(("", entry))
    return outcome


def _item_of(proposal: Any) -> str:
    item = proposal.get("item") if isinstance(proposal, dict) else None
    return f"item {item}" if isinstance(item, str) else "no item"


def _entry(ctx: Context, plan: Plan, proposal: Any, source: str) -> Entry:
    """One proposal as a validated entry; InvalidEntry with every problem otherwise."""
    if not isinstance(proposal, dict):
        raise InvalidEntry(["a proposal is a JSON object (title, body, topic, item, "
                            "supersedes or retracts)"])
    problems = [f"{name}: not a field of a proposal (agent, applies_to, source and created "
                "are set by consolidate)" for name in sorted(set(proposal) - FIELDS)]
    item_id = proposal.get("item")
    item = plan.item(item_id) if isinstance(item_id, str) else None
    if item is None:
        problems.append(f"item: {item_id!r} is not an item of the plan (a plan made since "
                        "gives other ids: propose from the current plan)")
    values = {name: proposal.get(name) for name in _LISTS}
    for name, value in values.items():
        if value is not None and not (isinstance(value, list)
                                      and all(isinstance(v, str) for v in value)):
            problems.append(f"{name}: must be a list of keys or words")
            values[name] = None
    cited = [*(values["supersedes"] or []), *(values["retracts"] or [])]
    if item is not None:
        if not cited:
            problems.append(f"supersedes/retracts: cite the keys of item {item.id} this "
                            "lesson replaces or drops (nothing is removed without a lesson "
                            "that says so)")
        foreign = sorted(set(cited) - set(item.keys))
        if foreign:
            problems.append(f"supersedes/retracts: {', '.join(foreign)} not in item {item.id} "
                            f"({', '.join(item.keys)}): a proposal settles one item")
    for name in ("title", "body", "topic"):
        if proposal.get(name) is not None and not isinstance(proposal[name], str):
            problems.append(f"{name}: must be a string")
    if problems:
        raise InvalidEntry(problems)
    assert item is not None
    entry = _compose(ctx, plan, proposal, values, source + f" item {item.id}")
    _refuse_takeover(plan, entry, set(item.keys))
    return entry


def _compose(ctx: Context, plan: Plan, proposal: dict[str, Any],
             values: dict[str, list[str] | None], source: str) -> Entry:
    """The entry `write` would build from these values (every field check included)."""
    supersedes = values["supersedes"] or []
    holders = sorted({h for k in supersedes if k in plan.facts
                      for h in plan.facts[k].holders} - {CURATOR})
    if any(k in plan.for_all for k in supersedes):
        holders = ["all"]
    fields: dict[str, Any] = {
        "supersedes": [k for k in supersedes if k != proposal.get("key")],
        "retracts": values["retracts"] or [], "tags": values["tags"] or [],
        "refs": values["refs"] or [], "applies_to": holders,
        "source": source,
    }
    for name in ("type", "importance", "confidence", "key", "valid_until"):
        if proposal.get(name) is not None:
            fields[name] = proposal[name]
    body = proposal.get("body") or ""
    title = proposal.get("title")
    if not supersedes and title is None:
        title = "Retracted by the curator"  # a pure retraction states no fact
    return compose(ctx, agent=CURATOR, topic=proposal.get("topic"), title=title, body=body,
                   fields=fields)


def _refuse_takeover(plan: Plan, entry: Entry, own: set[str]) -> None:
    """A proposal's key must be new, or one of its item's: never another live fact's."""
    if entry.key in plan.facts and entry.key not in own:
        raise InvalidEntry([f"key: {entry.key!r} already names another live fact, "
                            f"{plan.facts[entry.key].title!r}: give the proposal its own key"])
    if not entry.supersedes and entry.retracts:
        return  # a pure retraction states no fact: its title merges with nothing
    title = normalise_title(entry.title)
    same = sorted(k for k, f in plan.facts.items()
                  if k not in own and normalise_title(f.title) == title)
    if same:  # the distiller merges equal titles: that fact would go without a lesson
        raise InvalidEntry([f"title: {entry.title!r} is the title of another live fact "
                            f"[{same[0]}], outside this item: word it differently"])


def source_of(command: str) -> str:
    """The `source` of the curator's lessons: the command, on one line, without the
    `NAME=value` assignments it may start with (where keys and tokens are set)."""
    words = command.split()
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)
    line = " ".join(words)
    if len(line) > SOURCE_CHARS:
        line = line[:SOURCE_CHARS - 1] + "…"
    return f"jmem consolidate --propose {line!r}"


def write_all(ctx: Context, plan: Plan, outcome: Judgement) -> None:
    """File every accepted entry in the main journal (exclusive, atomic writes), each
    judged again against the journal as it is at that moment: a fact it cites that
    changed since the plan (a correction, a retraction, a same-key rewrite written
    while the curator ran) refuses it, with why — the next plan has that item again.
    A filed lesson knows what the plan saw, never more."""
    written = []
    for _, entry in outcome.written:
        now = latest_by_key(read_journal(ctx.layout, ctx.policy).entries)
        cited = [*entry.supersedes, *entry.retracts]
        moved = [k for k in cited if now.get(k) != plan.last.get(k)]
        if moved:
            outcome.refused.append(
                f"{entry.title!r} [{entry.key}]: {', '.join(moved)} changed since the plan "
                f"(now {', '.join(now.get(k) or 'gone' for k in moved)}): not written; the "
                "next plan has the item again, as the facts are now")
            continue
        done: Written = file_entry(ctx, entry, False, last=plan.last)
        written.append((ctx.layout.rel(done.path), entry))
    outcome.written = written
