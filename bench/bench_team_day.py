"""A team's day: does an agent ever load a stale fact without the words that replace it?

    python bench/bench_team_day.py [--seeds 1 2 3]

Four agents, one in the main checkout and three in linked worktrees, write 60 facts
with distinctive values (`Q1234`), then correct them the ways teams do: `--supersedes`,
a keyless rewording (the new value in other words, with and without a cue word), a
hand-written entry with `supersedes:` and no `knew` whose clock is 2 minutes or 3 days
behind, a native memory file the client writes (filed by the capture hook), an edit of
the fact's line in the agent's own checkout's `MEMORY.md` (in a worktree, filed by
`jmem rescue`; in the main checkout, by the capture hook of the client's Edit), and
`--retracts`. Each agent's machine has its own clock (`SKEW`: on time, 2 minutes
behind, 3 days ahead, 3 days behind), applied to every command it runs (`--wave3`: the
first four ways only, every clock on time). The main checkout commits every few
events, a distill runs when ten lessons are pending (the post-commit threshold) and
every 25 events (CI).
After each event one agent starts a session: what it sees is its own checkout's
`MEMORY.md` plus `jmem wake` from its checkout, and every fact it holds is judged
against the truth:

* fresh: the current value is shown and no older one;
* stale with the words: an older value is shown, and so is the current one (for a
  retraction: the retracting lesson's words);
* stale without them: an older value is shown and nothing that replaces it;
* missing: no value of it at all.

Seeded and deterministic in what it writes (`random.Random(seed)`); real git, real
worktrees, the real program. The figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from runner import IDENTITY, Figure  # noqa: E402

MEM = ".claude/agent-memory"
AGENTS = ("ana", "ben", "cai", "dee")  # ana in the main checkout, the others in worktrees
SKEW = {"ana": 0, "ben": -120, "cai": 3 * 86_400, "dee": -3 * 86_400}  # seconds off
# the real program on a machine whose clock is off (`journal_mem.journal.entry.now`, the
# one clock every stamp comes from), as tests/distill/test_clock_skew.py runs it
RUN_AT = ("import datetime as dt, sys; import journal_mem.journal.entry as e; "
          "real = e.now; e.now = lambda: real() + dt.timedelta(seconds={skew}); "
          "from journal_mem.main import main; sys.exit(main(sys.argv[1:]))")
KINDS = ("supersedes", "keyless", "keyless-cue", "hand", "captured", "rescued")
SERVICES = ("billing", "search", "auth", "media", "mail", "maps", "chat", "feeds", "ledger",
            "quotes", "upload", "stream")
SETTINGS = ("retry limit", "pool size", "timeout in ms", "port", "batch size")
FACTS, CORRECTIONS, RETRACTIONS = 60, 30, 6
THRESHOLD, CI_EVERY, COMMIT_EVERY = 10, 25, 3


@dataclass
class Fact:
    key: str
    service: str
    setting: str
    values: list[str]  # every value it had, the current one last
    holders: set[str]
    retracted_by: str = ""  # the retraction's distinctive word
    how: list[str] = field(default_factory=list)  # how each value after the first came

    @property
    def current(self) -> str:
        return self.values[-1]


@dataclass
class Tally:
    fresh: int = 0
    stale_with_words: int = 0
    stale_without: int = 0
    missing: int = 0
    retracted_hidden: int = 0
    sessions: int = 0
    examples: list[str] = field(default_factory=list)
    by_kind: dict[str, int] = field(default_factory=dict)  # stale without words, by the
    # way the fact was last corrected

    @property
    def held(self) -> int:
        return self.fresh + self.stale_with_words + self.stale_without + self.missing


def _env() -> dict[str, str]:
    env = dict(os.environ, **IDENTITY)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _run(cwd: Path, *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run(args, cwd=cwd, env=_env(), input=stdin, text=True,
                          capture_output=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} in {cwd}: {proc.stdout}{proc.stderr}")
    return proc.stdout


def jmem(cwd: Path, *args: str, stdin: str | None = None, skew: int = 0) -> str:
    if skew:
        return _run(cwd, sys.executable, "-c", RUN_AT.format(skew=skew), *args, stdin=stdin)
    return _run(cwd, sys.executable, "-m", "journal_mem", *args, stdin=stdin)


def git(cwd: Path, *args: str) -> str:
    return _run(cwd, "git", *args)


class Day:
    """One seeded day of a team."""

    def __init__(self, base: Path, seed: int, wave3: bool = False) -> None:
        self.rng = random.Random(seed)
        # `wave3`: the day as this benchmark first ran it (four ways to correct, every
        # clock on time), so that its figures compare across versions
        self.kinds = KINDS[:4] if wave3 else KINDS
        self.skew = dict.fromkeys(AGENTS, 0) if wave3 else SKEW
        self.main = base / "main"
        self.main.mkdir(parents=True)
        git(self.main, "init", "-q", "-b", "main")
        git(self.main, "commit", "-q", "--allow-empty", "-m", "first")
        jmem(self.main, "init", *(a for agent in AGENTS for a in ("--agent", agent)),
             "--no-git-hooks", "--no-claude")
        git(self.main, "add", "-A")
        git(self.main, "commit", "-q", "-m", "jmem")
        self.where = {AGENTS[0]: self.main}
        for agent in AGENTS[1:]:
            path = base / f"wt-{agent}"
            git(self.main, "worktree", "add", "-q", "-b", f"work-{agent}", str(path))
            self.where[agent] = path
        self.facts: list[Fact] = []
        self.used: set[str] = set()
        self.events = 0
        self.tally = Tally()
        self.count: dict[str, int] = {}

    def value(self) -> str:
        while True:
            v = f"Q{self.rng.randrange(1000, 9999)}"
            if v not in self.used:
                self.used.add(v)
                return v

    def write(self, agent: str, topic: str, title: str, body: str, *extra: str) -> str:
        out = jmem(self.where[agent], "write", "--json", "--agent", agent, "--topic",
                   topic, "--title", title, "--body", body, *extra, skew=self.skew[agent])
        return str(json.loads(out)["key"])

    # --- events ---------------------------------------------------------------------

    def new_fact(self) -> None:
        agent = self.rng.choice(AGENTS)
        free = [(s, t) for s in SERVICES for t in SETTINGS
                if not any(f.service == s and f.setting == t for f in self.facts)]
        service, setting = self.rng.choice(free)
        value = self.value()
        others = [a for a in AGENTS if a != agent]
        holders = {agent, *self.rng.sample(others, self.rng.randrange(0, 3))}
        extra = [a for h in sorted(holders - {agent}) for a in ("--applies-to", h)]
        body = self.rng.choice((f"Measured on staging last week: {value}.",
                                 f"Set in deploy/{service}.toml; ask the owners first.",
                                 f"The dashboards assume {value}; keep them in step.",
                                 "Found while debugging a flaky integration run."))
        key = self.write(agent, service, f"The {service} {setting} is {value}", body, *extra)
        self.facts.append(Fact(key, service, setting, [value], holders))

    def correct(self) -> None:
        live = [f for f in self.facts if not f.retracted_by]
        fact = self.rng.choice(live)
        agent = self.rng.choice(AGENTS)
        value = self.value()
        kind = self.rng.choice(self.kinds)
        if kind == "rescued" and not self.shown_line(agent, fact):
            kind = "captured"  # its checkout's MEMORY.md has no line of it to edit
        self.count[kind] = self.count.get(kind, 0) + 1
        title = {"supersedes": f"The {fact.service} {fact.setting} is {value} now",
                 "keyless": f"{fact.service.title()} has a {fact.setting} of {value}",
                 "keyless-cue": f"The {fact.service} {fact.setting} was changed to {value}",
                 "hand": f"The {fact.service} {fact.setting} is {value} since the upgrade",
                 "captured": f"{fact.service.title()} {fact.setting} set to {value}",
                 "rescued": ""}[kind]
        body = self.rng.choice((f"We moved {fact.service} to {value}.",
                                 "The old value caused timeouts under load.",
                                 f"Changed in the {fact.service} release this morning.",
                                 "Confirmed with the service owners."))
        if kind == "supersedes":
            fact.key = self.write(agent, fact.service, title, body, "--supersedes", fact.key)
        elif kind.startswith("keyless"):
            self.write(agent, fact.service, title, body)
        elif kind == "hand":
            self.hand_entry(agent, title, body, fact.key)
        elif kind == "captured":
            self.captured(agent, fact, title, body)
        else:
            self.rescued(agent, fact, value)
        fact.values.append(value)
        fact.how.append(f"{kind} by {agent}")
        fact.holders.add(agent)

    def hand_entry(self, agent: str, title: str, body: str, old_key: str) -> None:
        """An entry written by another tool: `supersedes`, no `knew`, a clock behind."""
        skew = self.rng.choice((dt.timedelta(minutes=-2), dt.timedelta(days=-3)))
        created = (dt.datetime.now(dt.UTC) + skew).replace(microsecond=0)
        key = f"hand-{self.events}"
        path = self.main / MEM / agent / "journal" / f"{created.date()}-{key}.md"
        path.write_text(f"---\nagent: {agent}\nkey: {key}\ntopic: {title.split()[1]}\n"
                        f"created: {created.isoformat()}\nsupersedes: [{old_key}]\n---\n"
                        f"# {title}\n\n{body}\n")

    def captured(self, agent: str, fact: Fact, title: str, body: str) -> None:
        """The client writes a native memory file in the agent's checkout; the capture hook
        (PostToolUse) files it in the main journal."""
        cwd = self.where[agent]
        name = f"{fact.service}_{fact.setting.replace(' ', '_')}_{self.events}"
        path = cwd / MEM / agent / f"project_{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nname: {name}\ndescription: {title}\nmetadata:\n  type: project"
                        f"\n---\n\n{title}. {body}\n")
        payload = {"hook_event_name": "PostToolUse", "session_id": f"s-{agent}",
                   "cwd": str(cwd), "tool_name": "Write",
                   "tool_input": {"file_path": str(path), "content": "x"}}
        jmem(cwd, "wake", "--hook", "claude", stdin=json.dumps(payload), skew=self.skew[agent])

    def shown_line(self, agent: str, fact: Fact) -> str:
        """The line of the agent's own checkout's MEMORY.md that shows the fact's current
        value ("" if none)."""
        own = self.where[agent] / MEM / agent / "MEMORY.md"
        text = own.read_text() if own.exists() else ""
        return next((x for x in text.splitlines()
                     if fact.current in x and x.startswith("- ") and "outdated" not in x), "")

    def rescued(self, agent: str, fact: Fact, value: str) -> None:
        """The agent edits the fact's line in its own checkout's MEMORY.md (the new value
        for the old): in a worktree `jmem rescue` files it; in the main checkout the client
        made the edit, and its capture hook (PostToolUse, Edit) files it."""
        cwd = self.where[agent]
        own = cwd / MEM / agent / "MEMORY.md"
        line = self.shown_line(agent, fact)
        own.write_text(own.read_text().replace(line, line.replace(fact.current, value), 1))
        if cwd != self.main:
            jmem(cwd, "rescue", skew=self.skew[agent])
            return
        payload = {"hook_event_name": "PostToolUse", "session_id": f"s-{agent}",
                   "cwd": str(cwd), "tool_name": "Edit",
                   "tool_input": {"file_path": str(own), "old_string": line,
                                  "new_string": line.replace(fact.current, value)}}
        jmem(cwd, "wake", "--hook", "claude", stdin=json.dumps(payload), skew=self.skew[agent])

    def retract(self) -> None:
        live = [f for f in self.facts if not f.retracted_by]
        fact = self.rng.choice(live)
        agent = self.rng.choice(AGENTS)
        word = self.value()
        self.write(agent, fact.service,
                   f"The {fact.service} {fact.setting} setting is gone ({word})",
                   f"{fact.service} no longer has a {fact.setting}.", "--retracts", fact.key)
        fact.retracted_by = word
        self.count["retraction"] = self.count.get("retraction", 0) + 1

    # --- the day --------------------------------------------------------------------

    def run(self) -> Tally:
        plan = ["fact"] * FACTS
        late = ["correct"] * CORRECTIONS + ["retract"] * RETRACTIONS
        self.rng.shuffle(late)
        plan = plan[:20] + sorted(plan[20:] + late, key=lambda _: self.rng.random())
        for event in plan:
            {"fact": self.new_fact, "correct": self.correct, "retract": self.retract}[event]()
            self.events += 1
            if self.events % COMMIT_EVERY == 0:
                self.commit()
            if self.events % CI_EVERY == 0:
                jmem(self.main, "distill")
            self.session(self.rng.choice(AGENTS))
        return self.tally

    def commit(self) -> None:
        git(self.main, "add", "-A", MEM)
        if git(self.main, "status", "--porcelain", "--", MEM).strip():
            git(self.main, "commit", "-q", "-m", f"lessons to event {self.events}")
        status = json.loads(jmem(self.main, "status", "--json"))
        if sum(status.get("pending", {}).values()) >= THRESHOLD:
            jmem(self.main, "distill")

    def session(self, agent: str) -> None:
        cwd = self.where[agent]
        seen = jmem(cwd, "wake", "--agent", agent, "--max-chars",
                    os.environ.get("JMEM_DAY_MAX_CHARS", "9600"))
        own = cwd / MEM / agent / "MEMORY.md"
        if own.exists():
            seen += own.read_text()
        self.tally.sessions += 1
        self.seen = seen
        for fact in self.facts:
            if agent not in fact.holders:
                continue
            old_shown = [v for v in fact.values[:-1] if v in seen]
            if fact.retracted_by:
                shown = [v for v in fact.values if v in seen]
                if shown and fact.retracted_by not in seen:
                    self.tally.stale_without += 1
                    self.note(agent, fact, shown)
                elif shown:
                    self.tally.stale_with_words += 1
                else:
                    self.tally.retracted_hidden += 1
                continue
            now = fact.current in seen
            if old_shown and now:
                self.tally.stale_with_words += 1
            elif old_shown:
                self.tally.stale_without += 1
                self.note(agent, fact, old_shown)
            elif now:
                self.tally.fresh += 1
            else:
                self.tally.missing += 1
                if os.environ.get("JMEM_DAY_DEBUG") == "missing" and len(self.tally.examples) < 14:
                    self.tally.examples.append(f"missing for {agent}: {fact}\n" + "\n".join(
                        x for x in seen.splitlines() if fact.service in x))

    def note(self, agent: str, fact: Fact, shown: list[str]) -> None:
        kind = "retraction" if fact.retracted_by else fact.how[-1].split()[0]
        self.tally.by_kind[kind] = self.tally.by_kind.get(kind, 0) + 1
        if (len(self.tally.examples) < int(os.environ.get("JMEM_DAY_EXAMPLES", "8"))
                and os.environ.get("JMEM_DAY_DEBUG") != "missing"):
            self.tally.examples.append(f"event {self.events}: {agent} sees {shown} of "
                                       f"{fact.service} {fact.setting} (now {fact.current}"
                                       f"{', retracted' if fact.retracted_by else ''}; "
                                       f"{', '.join(fact.how)})")
            if os.environ.get("JMEM_DAY_DEBUG"):
                self.tally.examples.append("\n".join(
                    line for line in self.seen.splitlines() if any(v in line for v in shown)))


def day(seed: int, wave3: bool = False) -> tuple[Tally, dict[str, int]]:
    with tempfile.TemporaryDirectory() as tmp:
        d = Day(Path(tmp), seed, wave3)
        return d.run(), d.count


def rows(runs: int = 1, seeds: tuple[int, ...] = (1, 2)) -> list[Figure]:
    """Per seed: the share of held facts stale without their words, and missing."""
    out = []
    for seed in seeds:
        t, _ = day(seed)
        out.append(Figure(f"team's day, seed {seed}: held facts stale without the words that "
                          f"replace them (of {t.held} in {t.sessions} session starts)",
                          f"{t.stale_without / max(t.held, 1):.1%}", "–", "–", "–", None))
        out.append(Figure(f"team's day, seed {seed}: held facts missing",
                          f"{t.missing / max(t.held, 1):.1%}", "–", "–", "–", None))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--wave3", action="store_true",
                        help="the day as first run: four ways to correct, clocks on time")
    args = parser.parse_args()
    for seed in args.seeds:
        t, kinds = day(seed, args.wave3)
        print(f"seed {seed}: {t.sessions} session starts, {t.held} held facts judged: "
              f"fresh {t.fresh}, stale with the words {t.stale_with_words}, stale without "
              f"them {t.stale_without} ({t.stale_without / max(t.held, 1):.1%}), missing "
              f"{t.missing} ({t.missing / max(t.held, 1):.1%}); retracted and not shown "
              f"{t.retracted_hidden}; corrections {dict(sorted(kinds.items()))}; stale "
              f"without the words, by the last correction: {dict(sorted(t.by_kind.items()))}")
        for line in t.examples:
            print("   ", line)


if __name__ == "__main__":
    main()
