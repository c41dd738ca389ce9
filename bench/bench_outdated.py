"""How well the distiller flags a fact as "possibly outdated" when another agent's newer
lesson corrects it without naming its key: precision and recall on three labelled sets.

    python bench/bench_outdated.py

`fixtures/corrections.py` is the set the detector was tuned on;
`fixtures/corrections_blind.py` and `fixtures/corrections_third.py` were written
afterwards, each by someone who had seen neither the other sets nor the detector (they
add agreements: another agent restating a fact in other words, which is no
correction). The detector was not changed after they were measured; the agreement
test (`similar.change`) was written on `fixtures/corrections_fourth.py` (written before
it, by its author: a development set, not a blind one) and then measured once on the
two blind sets. Each set's facts
are written on 2026-03-02 by their agents, and the corrections, agreements and
unrelated lessons on 2026-03-20 by other agents; the fold the distiller runs
(`Context.fold`, on a real repository) then names its probable corrections as
(old key, newer key) pairs, and those are scored against the labels:

* recall: share of the labelled corrections flagged on their fact, by them;
* precision: share of the flagged pairs that are labelled corrections;
* agreements flagged: share of the labelled agreements flagged on the fact they
  restate (the error that teaches an agent to ignore the flag);
* false alarms, by cause: an agreement, an unrelated lesson, a correction flagged on
  the wrong fact, or one fact against another.

(`rows` gives the figures to `bench/run_all.py`; one measurement, they do not vary.)
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "bench"))
from runner import Figure  # noqa: E402

from fixtures import (  # noqa: E402
    corrections,
    corrections_blind,
    corrections_fourth,
    corrections_third,
)
from journal_mem.journal.entry import Entry, render  # noqa: E402
from journal_mem.journal.reader import read_journal  # noqa: E402
from journal_mem.repo import open_context  # noqa: E402
from journal_mem.setup.init import init  # noqa: E402

OLD = dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.UTC)
NEW = dt.datetime(2026, 3, 20, 10, 0, tzinfo=dt.UTC)
DAY = dt.date(2026, 4, 1)
SETS = (("tuned-on set", corrections), ("blind set 1", corrections_blind),
        ("blind set 2", corrections_third), ("set 4", corrections_fourth))


@dataclass
class Score:
    corrections: int
    agreements: int = 0
    agreed_flagged: int = 0
    found: int = 0
    flagged: int = 0
    causes: dict[str, int] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.found / self.corrections if self.corrections else 0.0

    @property
    def precision(self) -> float:
        return self.found / self.flagged if self.flagged else 1.0


def _write(root: Path, agent: str, key: str, entry: Entry) -> None:
    folder = root / ".claude" / "agent-memory" / agent / "journal"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{entry.created.date()}-{key}.md").write_text(render(entry))


def build(root: Path, module: ModuleType) -> dict[str, str]:
    """A repository holding `module`'s lessons; {new lesson key: what it is}, where
    "c:KEY" is a correction of KEY, "a:KEY" an agreement with KEY, "u" unrelated."""
    later: list[tuple[str, str, str, str, str]] = []  # (label, agent, topic, title, body)
    later += [(f"c:{key}", a, t, title, body) for a, t, title, body, key in module.CORRECTIONS]
    later += [(f"a:{key}", a, t, title, body)
              for a, t, title, body, key in getattr(module, "AGREEMENTS", [])]
    later += [("u", a, t, title, body) for a, t, title, body in module.UNRELATED]
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    agents = sorted({f[0] for f in module.FACTS} | {x[1] for x in later})
    init(str(root), agents, git_hooks=False, claude=False)
    for index, (agent, topic, key, title, body) in enumerate(module.FACTS):
        _write(root, agent, key, Entry(agent=agent, topic=topic, title=title, body=body,
                                       key=key, created=OLD + dt.timedelta(minutes=index)))
    labels = {}
    for index, (label, agent, topic, title, body) in enumerate(later):
        key = f"new-{index}"
        labels[key] = label
        _write(root, agent, key, Entry(agent=agent, topic=topic, title=title, body=body,
                                       key=key, created=NEW + dt.timedelta(minutes=index)))
    for args in (["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                                 "-m", "lessons"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    return labels


def measure(root: Path, module: ModuleType) -> Score:
    """Score the fold's probable corrections in a repository built from `module`."""
    labels = build(root, module)
    ctx = open_context(str(root))
    fold = ctx.fold(read_journal(ctx.layout, ctx.policy).entries, DAY)
    truth = {(label[2:], key) for key, label in labels.items() if label.startswith("c:")}
    agreed = {(label[2:], key) for key, label in labels.items() if label.startswith("a:")}
    score = Score(len(truth), len(agreed), len(agreed & set(fold.conflicts)),
                  flagged=len(fold.conflicts))
    for old, new in fold.conflicts:
        label = labels.get(new, "fact")
        if (old, new) in truth:
            score.found += 1
            continue
        cause = {"a": "agreement", "u": "unrelated", "c": "wrong fact",
                 "f": "fact vs fact"}[label[0]]
        score.causes[cause] = score.causes.get(cause, 0) + 1
        score.misses.append(f"false alarm ({cause}): [{old}] by [{new}]")
    flagged = set(fold.conflicts)
    for fact, new in sorted(truth - flagged):
        score.misses.append(f"missed: [{fact}] corrected by [{new}]")
    return score


@dataclass
class PackScore:
    corrections: int
    agreements: int
    shown: int = 0  # corrections whose fact line carries the correcting lesson's words
    agreed_marked: int = 0  # agreements marking the fact they restate


def measure_pack(root: Path, module: ModuleType) -> PackScore:
    """Before any distill: the facts are distilled, the later lessons pending; in the
    wake pack of each fact's writer, is the fact's line marked by the lesson that
    corrects it (and not by one that agrees with it)?"""
    import re

    from journal_mem.wake.pack import build

    later: list[tuple[str, str, str, str, str]] = []
    later += [(f"c:{key}", a, t, title, body) for a, t, title, body, key in module.CORRECTIONS]
    later += [(f"a:{key}", a, t, title, body)
              for a, t, title, body, key in getattr(module, "AGREEMENTS", [])]
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    agents = sorted({f[0] for f in module.FACTS} | {x[1] for x in later})
    init(str(root), agents, git_hooks=False, claude=False)
    for index, (agent, topic, key, title, body) in enumerate(module.FACTS):
        _write(root, agent, key, Entry(agent=agent, topic=topic, title=title, body=body,
                                       key=key, created=OLD + dt.timedelta(minutes=index)))
    for args in (["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                                 "-m", "facts"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    subprocess.run([sys.executable, "-m", "journal_mem", "distill"], cwd=root, check=True,
                   capture_output=True)
    labels = {}
    for index, (label, agent, topic, title, body) in enumerate(later):
        key = f"new-{index}"
        labels[key] = label
        _write(root, agent, key, Entry(agent=agent, topic=topic, title=title, body=body,
                                       key=key, created=NEW + dt.timedelta(minutes=index)))
    ctx = open_context(str(root))
    writer = {key: agent for agent, _, key, _, _ in module.FACTS}
    marked: dict[str, str] = {}
    mark = re.compile(r"^- possibly outdated by \[([^\]]+)\]: .* \[([^\]]+)\]$")
    for agent in agents:
        for line in build(ctx.layout, agent, ctx.policy, max_chars=1_000_000).text.splitlines():
            found = mark.match(line)
            if found and writer.get(found[2]) == agent:
                marked[found[2]] = found[1]
    score = PackScore(len(module.CORRECTIONS), len(getattr(module, "AGREEMENTS", [])))
    for new, label in labels.items():
        if marked.get(label[2:]) == new:
            if label.startswith("c:"):
                score.shown += 1
            else:
                score.agreed_marked += 1
    return score


def measured_packs() -> list[tuple[str, PackScore]]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, (name, module) in enumerate(SETS):
            out.append((name, measure_pack(Path(tmp) / f"pack-{n}", module)))
    return out


def measured() -> list[tuple[str, Score]]:
    """Both sets, each on a fresh repository."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, (name, module) in enumerate(SETS):
            out.append((name, measure(Path(tmp) / f"repo-{n}", module)))
    return out


def _causes(score: Score) -> str:
    return ", ".join(f"{n} {cause}" for cause, n in sorted(score.causes.items())) or "none"


def rows(runs: int = 1) -> list[Figure]:
    """Recall and precision per set, as figures."""
    out = []
    for name, score in measured():
        out.append(Figure(f"possibly outdated, {name}: recall of {score.corrections} "
                          f"corrections", f"{score.recall:.0%}", "–", "–", "–", None))
        out.append(Figure(f"possibly outdated, {name}: precision of {score.flagged} flags "
                          f"(false: {_causes(score)})", f"{score.precision:.0%}", "–", "–",
                          "–", None))
        if score.agreements:
            out.append(Figure(f"possibly outdated, {name}: agreements flagged on their fact",
                              f"{score.agreed_flagged / score.agreements:.0%}", "–", "–", "–",
                              None))
    for name, pack in measured_packs():
        out.append(Figure(f"pending keyless correction, {name}: holder's pack shows its words",
                          f"{pack.shown / pack.corrections:.0%}", "–", "–", "–", None))
        if pack.agreements:
            out.append(Figure(f"pending agreement, {name}: holder's line marked",
                              f"{pack.agreed_marked / pack.agreements:.0%}", "–", "–", "–",
                              None))
    return out


def main() -> None:
    """Print both sets' figures and every miss and false alarm."""
    for name, score in measured():
        print(f"{name}: recall {score.recall:.1%} ({score.found}/{score.corrections}), "
              f"precision {score.precision:.1%} ({score.found}/{score.flagged}); "
              f"agreements flagged {score.agreed_flagged}/{score.agreements}; "
              f"false alarms: {_causes(score)}")
        for line in score.misses:
            print("  ", line)
    for name, pack in measured_packs():
        print(f"{name}, before any distill: the holder's pack shows the correction's words "
              f"for {pack.shown}/{pack.corrections}; agreements mark the fact they restate "
              f"{pack.agreed_marked}/{pack.agreements}")


if __name__ == "__main__":
    main()
