"""`knew` from a few entries equals `knew` from the whole journal.

A lesson records the newest entry of each key it speaks about. The intake finds it
from the entries the recall index says concern those keys, and every entry they are
ordered after (what each knew, the entries of the keys each names), not from all 10k:
on random journals of corrections, retractions, drops, knew chains and clocks days
apart, the newest entry of every key asked about is the same either way.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import re
import shutil
from pathlib import Path
from typing import NoReturn

import pytest

from journal_mem.intake import pipeline
from journal_mem.intake.pipeline import Proposal
from journal_mem.journal.drafts import Draft
from journal_mem.journal.entry import Entry, build
from journal_mem.journal.files import record
from journal_mem.journal.order import latest_by_key, newest_of
from journal_mem.journal.reader import read_journal
from journal_mem.repo import open_context

AGENTS = ("api", "web", "ops")
START = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)


def random_journal(repo: Path, rnd: random.Random, count: int) -> list[str]:
    """`count` entries over a dozen keys; returns the paths written."""
    layout = open_context(str(repo)).layout
    keys = [f"k{i}" for i in range(60)]
    paths: list[str] = []
    last: dict[str, str] = {}  # key -> the last path written about it (what write knows)
    for n in range(count):
        key = rnd.choice(keys)
        fields: dict[str, object] = {"key": key}
        others = [k for k in keys if k != key]
        roll = rnd.random()
        if roll < 0.2:
            fields["supersedes"] = [rnd.choice(others)]
        elif roll < 0.3:
            fields["retracts"] = [rnd.choice(others)]
        elif roll < 0.35:
            fields["drops"] = [rnd.choice(others)]
        named = [key, *fields.get("supersedes", []), *fields.get("retracts", []),  # type: ignore[misc]
                 *fields.get("drops", [])]  # type: ignore[misc]
        knew = {last[k] for k in named if k in last and rnd.random() < 0.7}
        if paths and rnd.random() < 0.1:  # a hand-made knew of anything
            knew.add(rnd.choice(paths))
        if knew:
            fields["knew"] = sorted(knew)
        created = START + dt.timedelta(minutes=n) + rnd.choice(
            [dt.timedelta(0), dt.timedelta(minutes=-2), dt.timedelta(days=3),
             dt.timedelta(days=-3)])
        entry = build(agent=rnd.choice(AGENTS), topic="ops", title=f"Lesson {n} on {key}",
                      body=f"Body {n}.", created=created, **fields)
        written = record(layout, entry, outbox=False)
        paths.append(os.path.relpath(written.path, layout.main_memory))
        for k in named:
            last[k] = paths[-1]
    return paths


@pytest.mark.parametrize("seed", range(6))
def test_the_newest_entry_of_each_key_is_the_same_from_the_index(
        repo: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(seed)
    random_journal(repo, rnd, 150)
    ctx = open_context(str(repo))
    whole = latest_by_key(read_journal(ctx.layout, ctx.policy).entries)
    wholes: list[int] = []
    real = pipeline.read_journal
    monkeypatch.setattr(pipeline, "read_journal",
                        lambda *a, **k: wholes.append(1) or real(*a, **k))
    sizes = []
    for _ in range(20):
        keys = set(rnd.sample(sorted(whole), rnd.randint(1, 3)))
        journal, was_whole = pipeline._ordering(ctx, keys)
        assert not was_whole and not wholes  # through the index, not the whole journal
        sizes.append(len(journal.entries))
        assert newest_of(latest_by_key(journal.entries), keys) == newest_of(whole, keys)
    assert sorted(sizes)[len(sizes) // 2] < 150  # most asked for less than the journal


def test_a_write_records_the_newest_entry_it_corrects(repo: Path) -> None:
    """Through the real intake: a correction's `knew` names the newest entry of the key,
    found from the index."""
    rnd = random.Random(9)
    random_journal(repo, rnd, 60)
    ctx = open_context(str(repo))
    whole = latest_by_key(read_journal(ctx.layout, ctx.policy).entries)
    entry = build(agent="api", topic="ops", title="A correction of k3", body="Now it is 5.",
                  key="k-new", supersedes=["k3"])
    written = pipeline.file_entry(ctx, entry, outbox=False)
    filed = read_journal(ctx.layout, ctx.policy)
    got = dict(filed.entries)[os.path.relpath(written.path, ctx.layout.main_memory)]
    assert set(newest_of(whole, {"k3", "k-new"})) <= set(got.knew)


def test_a_broken_index_reads_the_whole_journal(repo: Path) -> None:
    rnd = random.Random(4)
    random_journal(repo, rnd, 30)
    ctx = open_context(str(repo))
    index = Path(ctx.layout.state_dir) / "index"
    index.mkdir(parents=True, exist_ok=True)
    (index / "recall.sqlite").write_bytes(b"not a database" * 100)
    journal, was_whole = pipeline._ordering(ctx, {"k1"})
    assert was_whole and len(journal.entries) == 30


def _proposal(rnd: random.Random, journal: list[tuple[str, Entry]]) -> Proposal:
    """Drafts as a capture, a rescue or a curator brings them: one already in the journal,
    one for another holder, another text under a taken key, a native name another agent
    wrote, corrections, retractions and a replacement of journal keys, and new ones."""
    entries = [e for _, e in journal]
    keys = sorted({e.key for e in entries})
    drafts = []
    for n in range(rnd.randint(1, 8)):
        e = rnd.choice(entries)
        roll = rnd.random()
        if roll < 0.15:  # the very lesson again
            d = Draft(agent=e.agent, topic=e.topic, title=e.title, body=e.body, key=e.key)
        elif roll < 0.3:  # the same text, for another agent
            d = Draft(agent=rnd.choice(AGENTS), topic=e.topic, title=e.title, body=e.body,
                      key=e.key)
        elif roll < 0.45:  # another text under a taken key
            d = Draft(agent=rnd.choice(AGENTS), topic="ops", title=f"Other {n}", key=e.key)
        elif roll < 0.6:  # a native memory's name
            d = Draft(agent=rnd.choice(AGENTS), topic="ops", title=f"Native {n}",
                      body=f"Noted {n}.", key=e.key, per_writer=True)
        elif roll < 0.8:  # a correction, a retraction, a drop
            field = rnd.choice(["supersedes", "retracts", "drops"])
            d = Draft(agent=rnd.choice(AGENTS), topic="ops", title=f"Fix {n} of {e.key}",
                      body=f"Now {n}.", **{field: (rnd.choice(keys),)})
        elif roll < 0.9:  # a hand edit's line: keeps its key, whatever it names
            d = Draft(agent=e.agent, topic="ops", title=f"Edited {n}", key=e.key,
                      replaces=True)
        else:
            d = Draft(agent=rnd.choice(AGENTS), topic="ops", title=f"New {n} {rnd.random()}")
        drafts.append(d)
    return Proposal(drafts, "capture", strict=False)


@pytest.mark.parametrize("seed", range(8))
def test_a_small_proposal_is_filed_from_the_index_as_from_the_whole_journal(
        repo: Path, tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """`file` reads a few entries through the recall index for a small proposal (a
    captured memory file): it files the same entries, byte for byte, as a filing that
    reads the whole journal, and never reads the whole journal itself."""
    rnd = random.Random(seed)
    random_journal(repo, rnd, 120)
    twin = tmp_path / "twin"
    shutil.copytree(repo, twin, symlinks=True)
    ctx, twin_ctx = open_context(str(repo)), open_context(str(twin))
    journal = read_journal(twin_ctx.layout, twin_ctx.policy)
    now = START + dt.timedelta(days=30)
    for _ in range(3):  # each proposal sees what the ones before it filed
        proposal = _proposal(rnd, journal.entries)
        with monkeypatch.context() as m:
            m.setattr(pipeline, "read_journal", _no_whole_journal)
            filed = pipeline.file(ctx, proposal, now=now)
        journal = read_journal(twin_ctx.layout, twin_ctx.policy)
        whole = pipeline.file(twin_ctx, proposal, journal=journal, now=now)
        assert (filed.keys, filed.skipped, filed.invalid) == (
            whole.keys, whole.skipped, whole.invalid)
        assert [_rel_bytes(repo, p) for p in filed.paths] == [
            _rel_bytes(twin, p) for p in whole.paths]
        journal = read_journal(twin_ctx.layout, twin_ctx.policy)


def _no_whole_journal(*args: object, **kwargs: object) -> NoReturn:
    raise AssertionError("a small proposal read the whole journal")


def _rel_bytes(root: Path, path: str) -> tuple[str, bytes]:
    """A filed entry's path and bytes, without the random suffixes of entry names
    (`files.entry_name`): its own, and those of the entries its `knew` names."""
    return (os.path.relpath(path, root).rsplit("-", 1)[0],
            re.sub(rb"-[0-9a-f]{10}\.md", b"-.md", Path(path).read_bytes()))
